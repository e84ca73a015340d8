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
from typing import Any, Dict, Mapping, Optional, Tuple, Union

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
class Rule:
    """What one rule field is, declared once beside the field (:func:`rule`).

    From it follow the field's checks and their one-line messages, its coercion from YAML lists,
    its form in :meth:`RuleConfig.to_dict`, :data:`LIMITS`, its entry in the scalar part of the
    compiled core's rule vector (``compiled/layout.py``: ``rule_vector``) and its row in the field
    table of docs/rules.md section 7 (``python -m handfoot_env.docgen``).  Checks across fields (the
    decks against the deal and the books, the length of the per-round lists) are written in
    :func:`_validate`.
    """

    #: the meaning, one line (docs/rules.md section 7)
    doc: str
    #: the value's type (each entry's, for a per-round field): ``int``, ``bool`` or ``str``
    kind: type = int
    #: smallest and largest integer value (of each entry)
    limits: Optional[Tuple[int, int]] = None
    #: the words the field takes, each with its code in the rule vector (an ``int`` field with words
    #: takes an integer within ``limits`` or one of the words)
    words: Tuple[Tuple[str, int], ...] = ()
    #: ``""``: one value; ``"list"``: a non-empty list with one value per round; ``"either"``: one
    #: value for every round or a list with one value per round
    per_round: str = ""
    #: the name of the field's entry in the scalar part of the compiled rule vector (``R_*``, an
    #: offset of ``compiled/layout.py``, which the kernels read as ``R[R_*]``); empty for a field the
    #: vector holds as a per-round table (``R_MIN``, ``R_GO``)
    slot: str = ""
    #: left out of :meth:`RuleConfig.to_dict` while it holds its default: a house rule added after
    #: rule sets, records and results were written, off by default, so that they read and write as
    #: before
    optional: bool = False

    def code(self, value: Any) -> int:
        """The value's entry in the rule vector: a word's code, else the value as an integer."""
        return dict(self.words)[value] if isinstance(value, str) else int(value)

    def values(self) -> str:
        """The values the field takes, in words (docs/rules.md section 7)."""
        words = ", ".join(f"`{w}`" for w, _ in self.words)
        if self.kind is bool:
            return "true, false"
        if self.kind is str:
            return words
        lo, hi = self.limits
        span = f"{_number(lo)} to {_number(hi)}"
        if self.per_round == "list":
            return f"a list of 1 to {MAX_ROUNDS} entries, each {span}"
        if self.per_round == "either":
            return f"{span}, or a list with one entry per round"
        return f"{span}, or {words}" if words else span


def _number(x: int) -> str:
    return f"{x:,}".replace("-", "−")


def rule(default: Any, doc: str, **spec: Any) -> Any:
    """A field of :class:`RuleConfig`: its default and its :class:`Rule` (``doc`` and ``spec``)."""
    return dataclasses.field(default=default, metadata={"rule": Rule(doc, **spec)})


#: most rounds in a game (the length of ``minimums``)
MAX_ROUNDS = 20
#: every point value's bounds
_POINTS = (-1_000_000, 1_000_000)


@dataclass(frozen=True)
class RuleConfig:
    """Rule fields.  Defaults are the ``pagat`` preset; each field's :class:`Rule` says what it is."""

    players: int = rule(4, "seats `player_0` ...", limits=(2, 8), slot="R_N")
    teams: int = rule(2, "seat `i` plays for team `i mod teams`; must divide `players`", limits=(2, 8), slot="R_T")
    decks: int = rule(5, "54-card decks shuffled together", limits=(1, 12), slot="R_DECKS")
    hand_size: int = rule(13, "cards dealt to each hand", limits=(1, 40), slot="R_HAND")
    foot_size: int = rule(13, "cards dealt to each foot", limits=(1, 40), slot="R_FOOT")
    minimums: Tuple[int, ...] = rule(
        (50, 90, 120, 150), "first-meld minimum per round; the number of entries is the number of rounds",
        limits=(0, 100_000), per_round="list")
    wild_limit: str = rule("double", "`double`: naturals ≥ 2 × wilds; `majority`: naturals > wilds",
                           kind=str, words=(("double", 1), ("majority", 0)), slot="R_DOUBLE")
    wild_melds: bool = rule(True, "wild melds and wild books allowed", kind=bool, slot="R_WM")
    clean_book: int = rule(500, "bonus per clean book", limits=_POINTS, slot="R_CB")
    dirty_book: int = rule(300, "bonus per dirty book", limits=_POINTS, slot="R_DB")
    wild_book: int = rule(1500, "bonus per wild book", limits=_POINTS, slot="R_WB")
    red_three_bonus: int = rule(100, "per red three laid", limits=_POINTS, slot="R_R3B")
    red_three_left: int = rule(-100, "per red three left in a hand or an unplayed foot", limits=_POINTS,
                               slot="R_R3L")
    go_out_bonus: int = rule(100, "for the team that goes out", limits=_POINTS, slot="R_GOB")
    #: the books going out needs are read through :meth:`RuleConfig.going_out_books`
    go_out_clean: Union[int, Tuple[int, ...]] = rule(
        2, "clean books a team needs before one of its players may go out (an extra round uses the last entry)",
        limits=(0, 50), per_round="either")
    go_out_dirty: Union[int, Tuple[int, ...]] = rule(
        2, "dirty books going out needs, as `go_out_clean`", limits=(0, 50), per_round="either")
    go_out_wild: Union[int, Tuple[int, ...]] = rule(
        1, "wild books going out needs, as `go_out_clean`", limits=(0, 50), per_round="either")
    ask_partner: bool = rule(True, "going out needs a teammate's yes", kind=bool, slot="R_ASK")
    partner_in_foot: bool = rule(True, "every teammate must have played from the foot", kind=bool, slot="R_PIF")
    pile_take: Union[int, str] = rule(7, "cards taken with the pile: a number from the top, or `all`",
                                      limits=(1, 1000), words=(("all", 0),), slot="R_TAKE")
    tie_break: str = rule("draw", "equal totals after the last round: a draw, or one more round at the last "
                          "minimum", kind=str, words=(("draw", 0), ("extra_round", 1)), slot="R_EXTRA")
    #: a house rule (docs/rules.md 4.3): the pile only for a team that has opened
    pile_needs_opening: bool = rule(False, "the discard pile may be taken only by a team that has opened (4.3)",
                                    kind=bool, slot="R_PNO", optional=True)

    def __post_init__(self) -> None:
        for name in PER_ROUND_FIELDS:
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
        """The fields as plain data (per-round values as lists); an optional field (:class:`Rule`)
        holding its default is left out."""
        d = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if not (RULE_FIELDS[f.name].optional and value == f.default):
                d[f.name] = list(value) if isinstance(value, tuple) else value
        return d

    def replace(self, **overrides: Any) -> "RuleConfig":
        return load_rules(self, **overrides)


#: each rule field's :class:`Rule`, in the order of the fields
RULE_FIELDS: Dict[str, Rule] = {f.name: f.metadata["rule"] for f in fields(RuleConfig)}
#: bounds of the numeric rule fields (docs/rules.md section 7): wide enough for any table,
#: narrow enough that a rule set never asks for unbounded work or memory
LIMITS = {name: spec.limits for name, spec in RULE_FIELDS.items() if spec.limits}
#: the fields that take a list with one value per round
PER_ROUND_FIELDS = tuple(name for name, spec in RULE_FIELDS.items() if spec.per_round)
#: the fields of the books going out needs, in the order of :meth:`RuleConfig.going_out_books`;
#: each is an integer (every round) or a list with one integer per round
GOING_OUT_FIELDS = ("go_out_clean", "go_out_dirty", "go_out_wild")


def _per_round(value: Union[int, Tuple[int, ...]], index: int) -> int:
    """A field that is an integer or one integer per round, at round ``index`` (0-based, clamped)."""
    return value[min(index, len(value) - 1)] if isinstance(value, tuple) else value


def _check_field(name: str, spec: Rule, v: Any) -> None:
    """One field's own checks, from its :class:`Rule`: a one-line ``RuleConfigError`` naming it."""
    if spec.per_round:
        if isinstance(v, tuple) and v:
            for i, x in enumerate(v):
                if isinstance(x, bool) or not isinstance(x, int):
                    raise RuleConfigError(f"rule field {name!r} must hold integers, one per round, "
                                          f"got {type(x).__name__} {x!r}")
                _check_limits(name, spec, x, f" (round {i + 1})")
            return
        if spec.per_round == "list":
            raise RuleConfigError(f"rule field {name!r} must be a non-empty list of integers, got {v!r}")
        if isinstance(v, tuple):
            raise RuleConfigError(f"rule field {name!r} must be an integer or a list with one integer per "
                                  f"round, got an empty list")
        if isinstance(v, bool) or not isinstance(v, int):
            raise RuleConfigError(f"rule field {name!r} must be an integer or a list with one integer per "
                                  f"round, got {type(v).__name__} {v!r}")
        _check_limits(name, spec, v, "")
        return
    words = [w for w, _ in spec.words]
    if spec.kind is bool:
        if not isinstance(v, bool):
            raise RuleConfigError(f"rule field {name!r} must be true or false, got {v!r}")
    elif spec.kind is str:
        if not isinstance(v, str) or v not in words:
            raise RuleConfigError(f"rule field {name!r} must be {' or '.join(map(repr, words))}, got {v!r}")
    elif words:
        lo, hi = spec.limits
        if not (isinstance(v, str) and v in words) and (
                isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi):
            raise RuleConfigError(f"rule field {name!r} must be an integer from {lo} to {hi} or "
                                  f"{' or '.join(map(repr, words))}, got {v!r}")
    else:
        if isinstance(v, bool) or not isinstance(v, int):
            raise RuleConfigError(f"rule field {name!r} must be an integer, got {type(v).__name__} {v!r}")
        _check_limits(name, spec, v, "")


def _check_limits(name: str, spec: Rule, x: int, where: str) -> None:
    lo, hi = spec.limits
    if not lo <= x <= hi:
        raise RuleConfigError(f"rule field {name!r} must be between {lo} and {hi}, got {x}{where}")


def _validate(c: RuleConfig) -> None:
    for name, spec in RULE_FIELDS.items():
        _check_field(name, spec, getattr(c, name))
    if len(c.minimums) > MAX_ROUNDS:
        raise RuleConfigError(f"rule field 'minimums' holds one minimum per round, at most {MAX_ROUNDS}; "
                              f"got {len(c.minimums)}")
    for name in PER_ROUND_FIELDS:
        v = getattr(c, name)
        if name != "minimums" and isinstance(v, tuple) and len(v) != c.rounds:
            raise RuleConfigError(
                f"rule field {name!r} holds one entry per round: {c.rounds} (the length of minimums), "
                f"got {len(v)}")
    if c.players % c.teams:
        raise RuleConfigError(
            f"rule field 'teams' must be at least 2 and divide players ({c.players}) evenly, got {c.teams}")
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
    if name in PER_ROUND_FIELDS and isinstance(value, list):
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
