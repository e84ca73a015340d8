"""The rule configuration: every rule field of docs/rules.md section 7.

A :class:`RuleConfig` is immutable and validated.  Build one with
:func:`load_rules` from a preset name (``pagat``, ``bicycle``, ``six_player``,
``individual``, ``saskatchewan``), a YAML file, a mapping or another config, plus keyword
overrides of single fields::

    load_rules("pagat", decks=6)
    load_rules("configs/rules/bicycle.yaml")

Bad input raises :class:`RuleConfigError` naming the field and the problem.
"""
from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Dict, Mapping, Tuple, Union

from .cards import NUM_RANKS, PER_DECK, VALUES, WILD_SLOT
from .melds import meld_points, wild_ok
from . import safe_yaml


#: seeds are integers from 0 to MAX_SEED, everywhere (reset, agents, evaluation, training, commands)
MAX_SEED = 2 ** 63 - 1


def check_seed(seed: Any, name: str = "seed") -> int:
    """``seed`` as an int if it is an integer from 0 to :data:`MAX_SEED`; else ``ValueError`` naming ``name``."""
    if isinstance(seed, bool):
        raise ValueError(f"{name} must be an integer from 0 to 2**63-1, got {seed!r}")
    try:
        value = operator.index(seed)
    except TypeError:
        raise ValueError(f"{name} must be an integer from 0 to 2**63-1, got {type(seed).__name__} {seed!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise ValueError(f"{name} must be an integer from 0 to 2**63-1, got {value}")
    return value


class RuleConfigError(ValueError):
    """A rule configuration that is malformed or describes an impossible game."""


@dataclass(frozen=True)
class RuleConfig:
    """Rule fields.  Defaults are the ``pagat`` preset."""

    #: number of players (seats ``player_0`` ...)
    players: int = 4
    #: number of teams; seat ``i`` belongs to team ``i % teams`` (partners opposite / alternate)
    teams: int = 2
    #: standard 54-card decks shuffled together
    decks: int = 5
    #: cards dealt to each hand and each foot
    hand_size: int = 13
    foot_size: int = 13
    #: first-meld minimum of each round; the number of entries is the number of rounds
    minimums: Tuple[int, ...] = (50, 90, 120, 150)
    #: ``double``: naturals >= 2 x wilds; ``majority``: naturals > wilds
    wild_limit: str = "double"
    #: whether melds of wild cards only (and wild books) are allowed
    wild_melds: bool = True
    #: book bonuses
    clean_book: int = 500
    dirty_book: int = 300
    wild_book: int = 1500
    #: bonus per red three laid, and the (negative) score per red three left in hand or foot
    red_three_bonus: int = 100
    red_three_left: int = -100
    #: bonus for the team that goes out
    go_out_bonus: int = 100
    #: books the team needs before one of its players may go out: one number for every round, or a
    #: list with one number per round (the length of ``minimums``; an extra round uses the last);
    #: read them through :meth:`going_out_books`
    go_out_clean: Union[int, Tuple[int, ...]] = 2
    go_out_dirty: Union[int, Tuple[int, ...]] = 2
    go_out_wild: Union[int, Tuple[int, ...]] = 1
    #: a player must ask a teammate "may I go out?" and get a yes
    ask_partner: bool = True
    #: every teammate must have picked up their foot and played from it
    partner_in_foot: bool = True
    #: cards taken from the discard pile: a positive number from the top, or ``"all"``
    pile_take: Union[int, str] = 7
    #: equal totals after the last round: ``draw`` or ``extra_round`` (one more at the last minimum)
    tie_break: str = "draw"

    def __post_init__(self) -> None:
        for name in ("minimums",) + GOING_OUT_FIELDS:
            if isinstance(getattr(self, name), list):     # RuleConfig(minimums=[50, 90]) as from YAML
                object.__setattr__(self, name, tuple(getattr(self, name)))
        _validate(self)
        # the derived per-round tables, one entry per round (not fields: equality and to_dict
        # see only the fields)
        object.__setattr__(self, "_going_out", tuple(
            tuple(_per_round(getattr(self, name), i) for name in GOING_OUT_FIELDS) for i in range(self.rounds)))

    # --- derived ----------------------------------------------------------
    @property
    def rounds(self) -> int:
        return len(self.minimums)

    def round_minimum(self, round: int) -> int:
        """The first-meld minimum of ``round`` (1-based, as ``Game.round``); a round past the last
        (the extra round of ``tie_break: extra_round``) has the last round's."""
        return self.minimums[self._round_index(round)]

    def going_out_books(self, round: int) -> Tuple[int, int, int]:
        """The (clean, dirty, wild) books a team needs to go out in ``round`` (1-based, as
        ``Game.round``); a round past the last has the last round's requirement."""
        return self._going_out[self._round_index(round)]

    def _round_index(self, round: int) -> int:
        try:
            number = operator.index(round)
        except TypeError:
            number = 0
        if isinstance(round, bool) or number < 1:
            raise ValueError(f"round must be an integer from 1, got {round!r}")
        return min(number, self.rounds) - 1

    @property
    def team_size(self) -> int:
        return self.players // self.teams

    @property
    def total_cards(self) -> int:
        return sum(PER_DECK) * self.decks

    def team_of(self, player: int) -> int:
        return player % self.teams

    def teammates(self, player: int) -> Tuple[int, ...]:
        """Other members of ``player``'s team, in turn order starting after ``player``."""
        n = self.players
        return tuple((player + k) % n for k in range(1, n) if (player + k) % n % self.teams == player % self.teams)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        for name in ("minimums",) + GOING_OUT_FIELDS:
            if isinstance(d[name], tuple):
                d[name] = list(d[name])
        return d

    def replace(self, **overrides: Any) -> "RuleConfig":
        return load_rules(self, **overrides)


#: bounds of the numeric rule fields (docs/rules.md section 7): wide enough for any table,
#: narrow enough that a rule set never asks for unbounded work or memory
LIMITS = {
    "players": (2, 8), "teams": (2, 8), "decks": (1, 12), "hand_size": (1, 40), "foot_size": (1, 40),
    "minimums": (0, 100_000), "clean_book": (-1_000_000, 1_000_000), "dirty_book": (-1_000_000, 1_000_000),
    "wild_book": (-1_000_000, 1_000_000), "red_three_bonus": (-1_000_000, 1_000_000),
    "red_three_left": (-1_000_000, 1_000_000), "go_out_bonus": (-1_000_000, 1_000_000),
    "go_out_clean": (0, 50), "go_out_dirty": (0, 50), "go_out_wild": (0, 50),
}
#: most rounds in a game (the length of ``minimums``)
MAX_ROUNDS = 20
#: the fields of the books going out needs, in the order of :meth:`RuleConfig.going_out_books`;
#: each is an integer (every round) or a list with one integer per round
GOING_OUT_FIELDS = ("go_out_clean", "go_out_dirty", "go_out_wild")


def _per_round(value: Union[int, Tuple[int, ...]], index: int) -> int:
    """A field that is an integer or one integer per round, at round ``index`` (0-based, clamped)."""
    return value[min(index, len(value) - 1)] if isinstance(value, tuple) else value

_FIELD_TYPES = {
    "players": int, "teams": int, "decks": int, "hand_size": int, "foot_size": int,
    "minimums": tuple, "wild_limit": str, "wild_melds": bool, "clean_book": int,
    "dirty_book": int, "wild_book": int, "red_three_bonus": int, "red_three_left": int,
    "go_out_bonus": int, "go_out_clean": "rounds", "go_out_dirty": "rounds", "go_out_wild": "rounds",
    "ask_partner": bool, "partner_in_foot": bool, "pile_take": (int, str), "tie_break": str,
}


def _validate(c: RuleConfig) -> None:
    for f in fields(c):
        v = getattr(c, f.name)
        want = _FIELD_TYPES[f.name]
        if f.name == "minimums":
            if not isinstance(v, tuple) or not v:
                raise RuleConfigError(f"rule field 'minimums' must be a non-empty list of integers, got {v!r}")
            for m in v:
                if isinstance(m, bool) or not isinstance(m, int) or m < 0:
                    raise RuleConfigError(f"rule field 'minimums' must hold non-negative integers, got {m!r}")
            continue
        if want == "rounds":
            if isinstance(v, tuple):
                if not v:
                    raise RuleConfigError(f"rule field {f.name!r} must be an integer or a list with one "
                                          f"integer per round, got an empty list")
                for x in v:
                    if isinstance(x, bool) or not isinstance(x, int):
                        raise RuleConfigError(f"rule field {f.name!r} must hold integers, one per round, "
                                              f"got {type(x).__name__} {x!r}")
            elif isinstance(v, bool) or not isinstance(v, int):
                raise RuleConfigError(f"rule field {f.name!r} must be an integer or a list with one integer "
                                      f"per round, got {type(v).__name__} {v!r}")
            continue
        if want is int and (isinstance(v, bool) or not isinstance(v, int)):
            raise RuleConfigError(f"rule field {f.name!r} must be an integer, got {type(v).__name__} {v!r}")
        if want is bool and not isinstance(v, bool):
            raise RuleConfigError(f"rule field {f.name!r} must be true or false, got {v!r}")
        if want is str and not isinstance(v, str):
            raise RuleConfigError(f"rule field {f.name!r} must be a string, got {v!r}")
    for name, (lo, hi) in LIMITS.items():
        v = getattr(c, name)
        for i, x in enumerate(v if isinstance(v, tuple) else (v,)):
            if isinstance(x, int) and not isinstance(x, bool) and not lo <= x <= hi:
                where = f" (round {i + 1})" if isinstance(v, tuple) else ""
                raise RuleConfigError(f"rule field {name!r} must be between {lo} and {hi}, got {x}{where}")
    if len(c.minimums) > MAX_ROUNDS:
        raise RuleConfigError(f"rule field 'minimums' holds one minimum per round, at most {MAX_ROUNDS}; "
                              f"got {len(c.minimums)}")
    for name in GOING_OUT_FIELDS:
        v = getattr(c, name)
        if isinstance(v, tuple) and len(v) != c.rounds:
            raise RuleConfigError(
                f"rule field {name!r} holds one entry per round: {c.rounds} (the length of minimums), "
                f"got {len(v)}")
    if c.teams < 2 or c.players % c.teams:
        raise RuleConfigError(
            f"rule field 'teams' must be at least 2 and divide players ({c.players}) evenly, got {c.teams}")
    for name in ("decks", "hand_size", "foot_size"):
        if getattr(c, name) < 1:
            raise RuleConfigError(f"rule field {name!r} must be at least 1, got {getattr(c, name)}")
    if c.wild_limit not in ("double", "majority"):
        raise RuleConfigError(f"rule field 'wild_limit' must be 'double' or 'majority', got {c.wild_limit!r}")
    if c.tie_break not in ("draw", "extra_round"):
        raise RuleConfigError(f"rule field 'tie_break' must be 'draw' or 'extra_round', got {c.tie_break!r}")
    if isinstance(c.pile_take, bool) or not (
            (isinstance(c.pile_take, int) and 1 <= c.pile_take <= 1000) or c.pile_take == "all"):
        raise RuleConfigError(f"rule field 'pile_take' must be an integer from 1 to 1000 or 'all', "
                              f"got {c.pile_take!r}")
    dealt = c.players * (c.hand_size + c.foot_size)
    # the deal also needs the up-card and at least one draw of two from the stock
    if dealt + 3 > c.total_cards:
        raise RuleConfigError(
            f"impossible rules: players ({c.players}) x (hand_size {c.hand_size} + foot_size {c.foot_size}) = "
            f"{dealt} cards dealt, but decks ({c.decks}) hold only {c.total_cards} "
            f"(the up-card and a first draw need 3 more)")
    _check_going_out(c)
    best = _max_meld_value(c)
    if max(c.minimums) > best:
        r = c.minimums.index(max(c.minimums)) + 1
        raise RuleConfigError(
            f"impossible rules: minimums: the first meld of round {r} needs {max(c.minimums)}, but melds of "
            f"every card of decks ({c.decks}) are worth at most {best} under wild_limit {c.wild_limit!r} "
            f"and wild_melds {str(c.wild_melds).lower()}")


def _check_going_out(c: RuleConfig) -> None:
    """Every round's going-out books can be built: wild books need wild melds and the wilds, and
    all the books together the cards of the decks.  The message names the round where the fields
    are lists."""
    lists = any(isinstance(getattr(c, name), tuple) for name in GOING_OUT_FIELDS)
    wilds = (PER_DECK[11] + PER_DECK[12]) * c.decks
    checked = set()
    for i in range(c.rounds):
        need = tuple(_per_round(getattr(c, name), i) for name in GOING_OUT_FIELDS)
        if need in checked:
            continue
        checked.add(need)
        where = f" in round {i + 1}" if lists else ""
        nc, nd, nw = need
        if nw > 0 and not c.wild_melds:
            raise RuleConfigError(
                f"impossible rules: go_out_wild requires wild books{where} but wild_melds is false")
        if 7 * nw > wilds:
            raise RuleConfigError(
                f"impossible rules: go_out_wild ({nw}) wild books{where} need {7 * nw} wild cards, "
                f"but decks ({c.decks}) hold only {wilds}")
        if not _books_possible(c, nc, nd, nw):
            raise RuleConfigError(
                f"impossible rules: going out{where} needs go_out_clean ({nc}) clean, go_out_dirty ({nd}) "
                f"dirty and go_out_wild ({nw}) wild books, more than the cards of decks ({c.decks}) can "
                f"build under wild_limit {c.wild_limit!r}")


def _wild_cap(c: RuleConfig) -> int:
    """Most wilds in a legal seven-card natural meld: 2 (``double``) or 3 (``majority``)."""
    return 2 if c.wild_limit == "double" else 3


def _books_possible(c: RuleConfig, need_c: int, need_d: int, need_w: int) -> bool:
    """Whether the decks hold the cards for the books going out needs, all at once.

    A clean book is seven naturals of a rank; a dirty book seven cards of a rank with
    one to ``_wild_cap`` wilds; a wild book seven wilds.  Per rank (4 naturals a deck)
    the clean and dirty books it can hold use a least number of wilds; a table over the
    ranks of (clean, dirty) books made, capped at the need, keeps the fewest wilds used.
    """
    naturals = PER_DECK[0] * c.decks
    wilds = (PER_DECK[11] + PER_DECK[12]) * c.decks - 7 * need_w
    cap = _wild_cap(c)
    options = []                               # (clean, dirty, fewest wilds) for one rank
    for cl in range(naturals // 7 + 1):
        left = naturals - 7 * cl
        for d in range(left // (7 - cap) + 1):
            w = max(d, 7 * d - left)           # each dirty book has a wild; naturals run out
            if w <= cap * d:
                options.append((cl, d, w))
    table = {(0, 0): 0}
    for _ in range(NUM_RANKS):
        nxt: dict = {}
        for (cl, d), w in table.items():
            for ocl, od, ow in options:
                key = (min(cl + ocl, need_c), min(d + od, need_d))
                if w + ow < nxt.get(key, wilds + 1):
                    nxt[key] = w + ow
        table = nxt
    return table.get((need_c, need_d), wilds + 1) <= wilds


def _max_meld_value(c: RuleConfig) -> int:
    """Highest card value that melds of every card of the decks could hold (opening bound).

    Per natural rank: some books (seven cards, at most ``_wild_cap`` wilds) and a last
    meld of 0 or 3-6 cards within the wild limit; the wilds left go to wild melds (a
    number of wilds that is 0 or 7a + 3..7) when the rules allow them; jokers count first.
    """
    naturals = PER_DECK[0] * c.decks
    twos, jokers = PER_DECK[11] * c.decks, PER_DECK[12] * c.decks
    wilds = twos + jokers
    double = c.wild_limit == "double"
    cap = _wild_cap(c)

    per_rank = set()                           # (naturals used, wilds used) in one rank's melds
    for books in range(naturals // 4 + 1):
        for bw in range(cap * books + 1):
            bn = 7 * books - bw
            if bn > naturals:
                continue
            for size in [0, 3, 4, 5, 6]:
                for fw in range(size + 1):
                    if bn + size - fw <= naturals and (size == 0 or wild_ok(size - fw, fw, double)):
                        per_rank.add((bn + size - fw, bw + fw))
    best_nat = {0: 0}                          # wilds used in natural melds -> most natural value
    for r in range(NUM_RANKS):
        nxt: dict = {}
        for x, v in best_nat.items():
            for n, w in per_rank:
                if x + w <= wilds:
                    val = v + n * VALUES[r]
                    if val > nxt.get(x + w, -1):
                        nxt[x + w] = val
        best_nat = nxt
    best = 0
    for x, v in best_nat.items():
        for y in range(wilds - x + 1):
            if y and not (c.wild_melds and (y % 7 == 0 or y % 7 >= 3)):
                continue
            used = x + y
            j = min(used, jokers)
            best = max(best, v + meld_points(WILD_SLOT, 0, used - j, j))
    return best


#: the rule presets, shipped with the package as YAML (``handfoot_env/presets/NAME.yaml``; the
#: repository's ``configs/rules/`` holds the same files for users to copy and edit)
PRESETS_DIR = Path(__file__).resolve().parent / "presets"
RULES_DIR = PRESETS_DIR
PRESET_NAMES = ("pagat", "bicycle", "six_player", "individual", "saskatchewan")


def _read_presets() -> Dict[str, Dict[str, Any]]:
    """Each preset's rule fields, a ``preset:`` base resolved (presets name only earlier presets)."""
    out: Dict[str, Dict[str, Any]] = {}
    for name in PRESET_NAMES:
        data = dict(safe_yaml.read_yaml(PRESETS_DIR / f"{name}.yaml", RuleConfigError, "rules preset") or {})
        base = data.pop("preset", None)
        out[name] = {**(out[base] if base is not None else {}), **data}
    return out


PRESETS: Dict[str, Dict[str, Any]] = _read_presets()

RulesLike = Union[None, str, Path, Mapping[str, Any], RuleConfig]


def _coerce(name: str, value: Any) -> Any:
    if (name == "minimums" or name in GOING_OUT_FIELDS) and isinstance(value, list):
        return tuple(value)
    return value


def _from_mapping(data: Mapping[str, Any], source: str) -> RuleConfig:
    if not isinstance(data, Mapping):
        raise RuleConfigError(f"{source}: expected a mapping of rule fields, got {type(data).__name__}")
    data = dict(data)
    base = data.pop("preset", None)
    known = {f.name for f in fields(RuleConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise RuleConfigError(
            f"{source}: unknown rule field {unknown[0]!r}; known fields: {', '.join(sorted(known))}")
    start = dict(PRESETS[_check_preset(base)]) if base is not None else {}
    start.update({k: _coerce(k, v) for k, v in data.items()})
    try:
        return RuleConfig(**start)
    except RuleConfigError as e:
        raise RuleConfigError(f"{source}: {e}") from None


def _check_preset(name: str) -> str:
    if name not in PRESETS:
        raise RuleConfigError(f"unknown rules preset {name!r}; presets: {', '.join(PRESETS)}")
    return name


def read_yaml(path: Union[str, Path], error: type = RuleConfigError, what: str = "rule file") -> Any:
    """The parsed content of a YAML file (``None`` when empty), read by :mod:`handfoot_env.safe_yaml`."""
    return safe_yaml.read_yaml(path, error, what)


def load_yaml(path: Union[str, Path]) -> RuleConfig:
    return _from_mapping(read_yaml(path) or {}, str(path))


def load_rules(rules: RulesLike = None, **overrides: Any) -> RuleConfig:
    """Resolve ``rules`` (preset name, YAML path, mapping or config) and apply overrides."""
    if rules is None:
        base = RuleConfig()
    elif isinstance(rules, RuleConfig):
        base = rules
    elif isinstance(rules, Mapping):
        base = _from_mapping(rules, "rules")
    elif isinstance(rules, (str, Path)):
        s = str(rules)
        if s in PRESETS:
            base = _from_mapping(PRESETS[s], f"preset {s!r}")
        elif s.endswith((".yaml", ".yml")) or Path(s).exists():
            base = load_yaml(s)
        else:
            raise RuleConfigError(
                f"unknown rules {s!r}: not a preset ({', '.join(PRESETS)}) nor a YAML file")
    else:
        raise RuleConfigError(f"rules must be a preset name, a YAML path or a RuleConfig, got {type(rules).__name__}")
    if not overrides:
        return base
    d = base.to_dict()
    d.update(overrides)
    return _from_mapping(d, "rules with overrides")
