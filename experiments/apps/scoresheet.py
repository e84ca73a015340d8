"""Score sheets: score Hand and Foot rounds written down at a real table (``handfoot score``).

This module checks written rounds and scores them with the game's own round
breakdown (:func:`handfoot_env.scoring.round_breakdown`, docs/rules.md section 6)
under any rule configuration (:class:`~handfoot_env.config.RuleConfig`).  It depends only on the standard
library, PyYAML and :mod:`handfoot_env.cards` / :mod:`handfoot_env.config`, so
``handfoot score`` starts fast and never loads PettingZoo or torch.

A team's round is written in one of two forms (docs/interface.md, "Score keeper"):

*totals form*, as on a paper sheet::

    clean_books: 1        # books of 7 cards without wilds
    dirty_books: 0        # books of 7 cards with wilds
    wild_books: 0         # books of 7 wild cards
    melded_points: 120    # card values of everything melded, books included
    red_threes: 1         # red threes laid down
    red_threes_left: 0    # red threes left in hands and unplayed feet
    went_out: false
    left_points: 35       # card values left in hands and feet (red threes excluded)

*cards form*, the cards themselves::

    melds: [[K, K, K, K, K, K, K], [9, 9, 2]]
    red_threes: 0
    went_out: true
    left: [A, 3R]         # cards left in hands and feet; a 3R scores red_three_left

Every key is optional (a missing count is 0, a missing ``went_out`` is false);
unknown keys are rejected.  A team's round score is::

    melded card values + clean_book x clean + dirty_book x dirty + wild_book x wild
    + red_three_bonus x red threes laid + go_out_bonus (if it went out)
    - card values left + red_three_left x red threes left   (red_three_left < 0)

Public functions
----------------
:func:`check_meld`     validate one meld (list of card codes) -> :class:`MeldInfo`
:func:`score_totals`   score one team's round from the totals form
:func:`score_cards`    score one team's round from the cards form
:func:`score_entry`    either form, chosen by its keys
:func:`score_round`    every team's entry of one round
:func:`score_sheet`    a whole sheet (mapping or YAML path) -> :class:`SheetResult`
:func:`load_sheet`     read a YAML sheet into a mapping
:func:`experiments.apps.score.score_sheet` and ``handfoot score`` score a whole sheet

Validation (each failure is a :class:`ScoreSheetError` whose message names the
round (1-based), the team and the entry)
--------------------------------------------------------------------------
Cards form, each meld:
  * a list of 3 to 7 known card codes (``4``..``10 J Q K A 2 JK``); threes
    (``3R``, ``3B``) are never melded;
  * one natural rank plus wilds, or all wild (only if ``rules.wild_melds``);
  * the wild limit of ``rules.wild_limit`` -- ``double``: naturals >= 2 x
    wilds; ``majority``: naturals > wilds;
  * a 7-card meld is a book: clean (no wilds), dirty (some wilds) or wild;
  * a team has at most one unfinished meld of each rank (and one unfinished
    wild meld) -- docs/rules.md 4.4.
  ``left`` is a list of known card codes (any kind; a ``3R`` counts
  ``rules.red_three_left``, a ``3B`` its card value 5).
Totals form:
  * counts and points are non-negative integers (booleans are refused),
    ``went_out`` is true or false;
  * no wild books when ``rules.wild_melds`` is false;
  * ``melded_points`` and ``left_points`` are multiples of 5 (every card value is);
  * ``melded_points`` is at least what the books alone must hold: a clean book
    at least 7 x 5 = 35, a dirty book 6 x 5 + a two = 50, a wild book 7 x 20
    = 140.  (Only this lower bound is checked; the sheet cannot say more.)
Both forms: red threes laid are a non-negative integer; the two forms are not
mixed in one entry.
Each round: an entry for every team and no other, at most one team went out,
no more red threes (laid and left, all teams) than the decks hold, and, over
the teams written in the cards form, no more cards of a kind than the decks
hold.
The sheet: a mapping with ``teams`` (distinct names, as many as
``rules.teams``), ``rounds`` (a list) and optional ``rules`` (preset name,
YAML path -- relative to the sheet's folder or the working directory -- or a
mapping of rule fields); at most ``rules.rounds`` rounds, plus extra rounds
only under ``tie_break: extra_round`` while the totals are tied.

Not checked, on purpose: whether the team that went out had the books
docs/rules.md section 5 asks for (``go_out_clean``, ``go_out_dirty``,
``go_out_wild``, one number or one per round: tables bend the rule, and the sheet
records what happened), first-meld minimums, and whether counts add up to the
cards dealt.  The rules may use every form a rule file may (per-round lists, any
preset).
"""
from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from handfoot_env.cards import BLACK3, CODES, JOKER, NUM_KINDS, NUM_RANKS, RED3, TWO, VALUES, deck_counts, kind_of
from handfoot_env.config import RuleConfig, RulesLike, load_rules
from handfoot_env.melds import wild_ok
from handfoot_env.scoring import BREAKDOWN_KEYS, round_breakdown

__all__ = [
    "BREAKDOWN_KEYS",
    "CARDS_KEYS",
    "TOTALS_KEYS",
    "MeldInfo",
    "ScoreSheetError",
    "check_meld",
    "score_cards",
    "score_entry",
    "score_round",
    "score_totals",
]

#: keys of the totals form, in sheet order
TOTALS_KEYS = ("clean_books", "dirty_books", "wild_books", "melded_points", "red_threes",
               "red_threes_left", "went_out", "left_points")
#: keys of the cards form
CARDS_KEYS = ("melds", "red_threes", "went_out", "left")

#: the least card value a book can hold (see the module docstring)
MIN_BOOK_POINTS = {"clean": 7 * VALUES[0], "dirty": 6 * VALUES[0] + VALUES[TWO], "wild": 7 * VALUES[TWO]}

_WILD_LIMIT_TEXT = {"double": "double: naturals >= 2 x wilds", "majority": "majority: naturals > wilds"}


# --------------------------------------------------------------------------- errors


class ScoreSheetError(ValueError):
    """A score sheet, or one entry of it, that is malformed or breaks the rules.

    ``round`` (1-based), ``team`` and ``entry`` say where; ``str(err)`` reads
    ``round 2, team Them, meld 1 [9, 2, 2]: breaks the wild limit (...)``.
    """

    def __init__(self, message: str, *, round: int | None = None, team: str | None = None,
                 entry: str | None = None, source: str | None = None) -> None:
        self.message = message
        self.round = round
        self.team = team
        self.entry = entry
        self.source = source
        super().__init__(self._text())

    def _text(self) -> str:
        where = []
        if self.source:
            where.append(self.source)
        if self.round is not None:
            where.append(f"round {self.round}")
        if self.team is not None:
            where.append(f"team {self.team}")
        if self.entry:
            where.append(self.entry)
        return f"{', '.join(where)}: {self.message}" if where else self.message

    def located(self, *, round: int | None = None, team: str | None = None,
                source: str | None = None) -> ScoreSheetError:
        """A copy with the round / team / source filled in where not yet known."""
        return ScoreSheetError(self.message,
                               round=self.round if self.round is not None else round,
                               team=self.team if self.team is not None else team,
                               entry=self.entry,
                               source=self.source or source)


def _show(value: Any) -> str:
    """A value as it would be written in the YAML sheet, for messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show_item(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_show_item(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return repr(value)
    return str(value)


def _show_item(value: Any) -> str:
    if isinstance(value, str):
        return value if value and value.strip() == value and "," not in value else repr(value)
    return _show(value)


def _suggest(word: Any, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(str(word), list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


# --------------------------------------------------------------------------- melds


@dataclass(frozen=True)
class MeldInfo:
    """One validated meld."""

    #: natural rank code (``"4"`` .. ``"A"``) or ``"W"`` for a wild meld
    rank: str
    naturals: int
    twos: int
    jokers: int
    #: card values of its cards
    points: int
    #: ``"clean"``, ``"dirty"`` or ``"wild"`` for a book (7 cards), else ``None``
    book: str | None

    @property
    def wilds(self) -> int:
        return self.twos + self.jokers

    @property
    def size(self) -> int:
        return self.naturals + self.wilds


def _card_kind(code: Any) -> int:
    """Kind of one card code written in a sheet (YAML may give ``9`` as an int)."""
    if isinstance(code, bool) or not isinstance(code, (int, str)):
        raise ScoreSheetError(f"{_show(code)} is not a card code; expected one of {' '.join(CODES)}")
    if str(code).strip() == "3":
        raise ScoreSheetError("unknown card code 3: write a red three as 3R and a black three as 3B")
    try:
        return kind_of(str(code).strip())
    except ValueError:
        raise ScoreSheetError(
            f"unknown card code {_show_item(code)}; expected one of {' '.join(CODES)}") from None


def _card_list(cards: Any, what: str) -> list[int]:
    if isinstance(cards, (str, bytes)) or not isinstance(cards, (list, tuple)):
        raise ScoreSheetError(f"{what} must be a list of card codes such as [K, K, 2], got {_show(cards)}")
    return [_card_kind(c) for c in cards]


def check_meld(cards: Sequence[Any], rules: RulesLike = None) -> MeldInfo:
    """Validate one meld, a list of card codes, under ``rules``; return its :class:`MeldInfo`.

    Raises :class:`ScoreSheetError` (without a location) if the meld is not
    a legal end-of-round meld: 3..7 known cards, no threes, one natural rank or
    all wild (if allowed), within the wild limit.
    """
    rules = _rules(rules)
    kinds = _card_list(cards, "a meld")
    threes = [CODES[k] for k in kinds if k in (RED3, BLACK3)]
    if threes:
        raise ScoreSheetError(f"holds a three ({threes[0]}); threes are never melded")
    n = len(kinds)
    if n < 3:
        raise ScoreSheetError(f"has {n} card{'s' if n != 1 else ''}; a meld needs at least 3")
    if n > 7:
        raise ScoreSheetError(f"has {n} cards; a meld holds at most 7 (seven cards make a book, which is closed)")
    ranks = sorted({k for k in kinds if k < NUM_RANKS})
    if len(ranks) > 1:
        raise ScoreSheetError(
            f"mixes ranks {' and '.join(CODES[k] for k in ranks)}; a meld holds one natural rank (plus wilds)")
    naturals = sum(1 for k in kinds if k < NUM_RANKS)
    twos = kinds.count(TWO)
    jokers = kinds.count(JOKER)
    wilds = twos + jokers
    if naturals == 0:
        if not rules.wild_melds:
            raise ScoreSheetError("is a wild meld, but these rules allow no wild melds (wild_melds: false)")
        rank = "W"
    else:
        rank = CODES[ranks[0]]
        if not wild_ok(naturals, wilds, rules.wild_limit == "double"):
            raise ScoreSheetError(f"breaks the wild limit ({_WILD_LIMIT_TEXT[rules.wild_limit]})")
    book = None
    if n == 7:
        book = "wild" if naturals == 0 else ("clean" if wilds == 0 else "dirty")
    return MeldInfo(rank=rank, naturals=naturals, twos=twos, jokers=jokers,
                    points=sum(VALUES[k] for k in kinds), book=book)


# --------------------------------------------------------------------------- one team's round


def _rules(rules: RulesLike) -> RuleConfig:
    return rules if isinstance(rules, RuleConfig) else load_rules(rules)


def _count(entry: Mapping[str, Any], key: str) -> int:
    v = entry.get(key, 0)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ScoreSheetError(f"must be a non-negative integer, got {type(v).__name__}",
                              entry=f"{key} {_show(v)}")
    if v < 0:
        raise ScoreSheetError("must be a non-negative integer", entry=f"{key} {_show(v)}")
    return v


def _flag(entry: Mapping[str, Any], key: str) -> bool:
    v = entry.get(key, False)
    if not isinstance(v, bool):
        raise ScoreSheetError("must be true or false", entry=f"{key} {_show(v)}")
    return v


def _check_keys(entry: Any, allowed: Sequence[str]) -> None:
    if not isinstance(entry, Mapping):
        raise ScoreSheetError(
            f"a team's entry must be a mapping of {', '.join(TOTALS_KEYS)} (totals form) "
            f"or of {', '.join(CARDS_KEYS)} (cards form), got {_show(entry)}", entry="entry")
    for key in entry:
        if key not in allowed:
            if key in TOTALS_KEYS or key in CARDS_KEYS:
                hint = ("; list red threes left as 3R in 'left'" if key == "red_threes_left" else "")
                raise ScoreSheetError(
                    f"mixes the totals form ({', '.join(TOTALS_KEYS)}) and the cards form "
                    f"({', '.join(CARDS_KEYS)}){hint}", entry=f"{key} {_show(entry[key])}")
            raise ScoreSheetError(
                f"unknown key{_suggest(key, sorted(set(TOTALS_KEYS) | set(CARDS_KEYS)))}; an entry holds "
                f"{', '.join(TOTALS_KEYS)} (totals form) or {', '.join(CARDS_KEYS)} (cards form)",
                entry=f"{_show_item(key)}")


def _merge(entry: Any, fields: Mapping[str, Any]) -> Any:
    if entry is None:
        return dict(fields)
    if not isinstance(entry, Mapping):
        _check_keys(entry, ())      # raises: not a mapping
    return {**entry, **fields}


def score_totals(entry: Mapping[str, Any] | None = None, rules: RulesLike = None, **fields: Any) -> dict[str, int]:
    """Score one team's round given in the totals form.

    ``entry`` is a mapping with keys among :data:`TOTALS_KEYS` (keyword
    arguments are merged into it).  Returns a breakdown in signed points,
    keys :data:`BREAKDOWN_KEYS` plus ``total``.  Raises :class:`ScoreSheetError`.

    >>> score_totals(clean_books=1, melded_points=120, red_threes=1, left_points=35)["total"]
    685
    """
    rules = _rules(rules)
    entry = _merge(entry, fields)
    _check_keys(entry, TOTALS_KEYS)
    n = {k: _count(entry, k) for k in TOTALS_KEYS if k != "went_out"}
    went_out = _flag(entry, "went_out")
    if n["wild_books"] and not rules.wild_melds:
        raise ScoreSheetError("these rules allow no wild melds or books (wild_melds: false)",
                              entry=f"wild_books {n['wild_books']}")
    for key in ("melded_points", "left_points"):
        if n[key] % 5:
            raise ScoreSheetError("must be a multiple of 5 (every card value is)", entry=f"{key} {n[key]}")
    least = (n["clean_books"] * MIN_BOOK_POINTS["clean"] + n["dirty_books"] * MIN_BOOK_POINTS["dirty"]
             + n["wild_books"] * MIN_BOOK_POINTS["wild"])
    if n["melded_points"] < least:
        books = [f"{n[k + '_books']} {k}" for k in ("clean", "dirty", "wild") if n[k + "_books"]]
        raise ScoreSheetError(
            f"is less than the {least} points the books alone hold at least ({', '.join(books)}; a clean book "
            f"holds at least {MIN_BOOK_POINTS['clean']}, a dirty one {MIN_BOOK_POINTS['dirty']}, a wild one "
            f"{MIN_BOOK_POINTS['wild']})", entry=f"melded_points {n['melded_points']}")
    return round_breakdown(rules, melded=n["melded_points"], clean=n["clean_books"], dirty=n["dirty_books"],
                      wild=n["wild_books"], red_threes=n["red_threes"], went_out=went_out,
                      left=n["left_points"], red_threes_left=n["red_threes_left"])


def _cards_form(entry: Mapping[str, Any], rules: RuleConfig):
    """Validate a cards-form entry: (melds, left kinds, red threes laid, went_out)."""
    _check_keys(entry, CARDS_KEYS)
    raw_melds = entry.get("melds", [])
    if raw_melds is None:
        raw_melds = []
    if isinstance(raw_melds, (str, bytes)) or not isinstance(raw_melds, (list, tuple)):
        raise ScoreSheetError("must be a list of melds, each a list of card codes such as [K, K, 2]",
                              entry=f"melds {_show(raw_melds)}")
    melds: list[MeldInfo] = []
    unfinished: dict[str, int] = {}
    for i, cards in enumerate(raw_melds, 1):
        label = f"meld {i} {_show(cards)}"
        try:
            m = check_meld(cards, rules)
        except ScoreSheetError as e:
            raise ScoreSheetError(e.message, entry=label) from None
        if m.book is None:
            if m.rank in unfinished:
                what = "wild meld" if m.rank == "W" else f"meld of rank {m.rank}"
                raise ScoreSheetError(
                    f"is a second unfinished {what} (meld {unfinished[m.rank]} is one too); a team has at most "
                    f"one unfinished meld of each rank", entry=label)
            unfinished[m.rank] = i
        melds.append(m)
    raw_left = entry.get("left", [])
    if raw_left is None:
        raw_left = []
    try:
        left = _card_list(raw_left, "left")
    except ScoreSheetError as e:
        raise ScoreSheetError(e.message, entry=f"left {_show(raw_left)}") from None
    return melds, left, _count(entry, "red_threes"), _flag(entry, "went_out")


def score_cards(entry: Mapping[str, Any] | None = None, rules: RulesLike = None, **fields: Any) -> dict[str, int]:
    """Score one team's round given in the cards form.

    ``entry`` is a mapping with keys among :data:`CARDS_KEYS`: ``melds`` (a
    list of melds, each a list of card codes), ``red_threes`` (laid),
    ``went_out`` and ``left`` (card codes left in hands and feet).  Returns the
    same breakdown as :func:`score_totals`.  Raises :class:`ScoreSheetError`.

    >>> score_cards(melds=[["K"] * 7, [9, 9, 2]], went_out=True, left=["A", "3R"])["total"]
    590
    """
    rules = _rules(rules)
    entry = _merge(entry, fields)
    melds, left, red_threes, went_out = _cards_form(entry, rules)
    books = [m.book for m in melds]
    return round_breakdown(rules, melded=sum(m.points for m in melds), clean=books.count("clean"),
                      dirty=books.count("dirty"), wild=books.count("wild"), red_threes=red_threes,
                      went_out=went_out, left=sum(VALUES[k] for k in left if k != RED3),
                      red_threes_left=left.count(RED3))


def _is_cards_form(entry: Mapping[str, Any]) -> bool:
    return "melds" in entry or "left" in entry


def score_entry(entry: Mapping[str, Any], rules: RulesLike = None) -> dict[str, int]:
    """Score one team's round in either form: the cards form if it has ``melds`` or ``left``."""
    if isinstance(entry, Mapping) and _is_cards_form(entry):
        return score_cards(entry, rules)
    return score_totals(entry, rules)


def _entry_cards(entry: Mapping[str, Any]) -> list[int] | None:
    """Count per kind of the cards a validated cards-form entry shows, red threes laid included."""
    if not _is_cards_form(entry):
        return None
    counts = [0] * NUM_KINDS
    for cards in entry.get("melds") or []:
        for k in _card_list(cards, "a meld"):
            counts[k] += 1
    for k in _card_list(entry.get("left") or [], "left"):
        counts[k] += 1
    counts[RED3] += entry.get("red_threes", 0)
    return counts


# --------------------------------------------------------------------------- rounds and sheets


def score_round(round_entries: Mapping[str, Any], teams: Sequence[str], rules: RulesLike = None,
                round_no: int | None = None) -> dict[str, dict[str, int]]:
    """Score one round: ``{team: entry}`` for every team in ``teams`` -> ``{team: breakdown}``.

    Checks that every team and no other has an entry, at most one team went
    out, and the decks can supply the red threes and the cards shown.
    ``round_no`` (1-based) is only used in error messages.
    """
    rules = _rules(rules)
    if not isinstance(round_entries, Mapping):
        raise ScoreSheetError(f"a round must be a mapping of team name -> entry, got {_show(round_entries)}",
                              round=round_no)
    for name in round_entries:
        if name not in teams:
            raise ScoreSheetError(f"unknown team{_suggest(name, teams)}; the sheet's teams are {', '.join(teams)}",
                                  round=round_no, team=_show_item(name))
    out: dict[str, dict[str, int]] = {}
    went_out: str | None = None
    supply = deck_counts(rules.decks)
    seen = [0] * NUM_KINDS
    for team in teams:
        if team not in round_entries:
            raise ScoreSheetError("no entry for this team in this round", round=round_no, team=team)
        entry = round_entries[team]
        try:
            if entry is None:
                raise ScoreSheetError("is empty; write the team's totals or cards (all zero: e.g. left_points: 0)",
                                      entry="entry")
            out[team] = score_entry(entry, rules)
            if entry.get("went_out") is True:
                if went_out is not None:
                    raise ScoreSheetError(f"{went_out} went out too; at most one team goes out in a round",
                                          entry="went_out true")
                went_out = team
            counts = _entry_cards(entry)
            if counts is None:
                counts = [0] * NUM_KINDS
                counts[RED3] = entry.get("red_threes", 0) + entry.get("red_threes_left", 0)
            for k in range(NUM_KINDS):
                seen[k] += counts[k]
                if seen[k] > supply[k]:
                    what = "red threes" if k == RED3 else f"cards {CODES[k]}"
                    raise ScoreSheetError(
                        f"brings the {what} shown in this round (all teams) to {seen[k]}, but {rules.decks} "
                        f"decks hold only {supply[k]}",
                        entry="red threes" if k == RED3 else "cards")
        except ScoreSheetError as e:
            raise e.located(round=round_no, team=team) from None
    return out




# --------------------------------------------------------------------------- output

