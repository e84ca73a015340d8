"""Helpers for scripted engine tests: stacking a shoe and playing named actions.

A shoe lists the top of the shoe in dealing order (docs/rules.md section 3): every
hand in seat order, then every foot in seat order, then the up-card, then the
stock top-down.  :func:`build_shoe` assembles that list from per-player lists,
so a test reads like the table it describes::

    g = new_game(hands=["K K 5 ...", ...], up="K", stock="9 9 4 4")
"""
from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple, Union

import pytest

from handfoot_env.actions import ACTION_NAMES, action_index
from handfoot_env.compiled import available as compiled_available
from handfoot_env.cards import CODES, NUM_KINDS, RED3, VALUES, deck_counts, kind_of
from handfoot_env.config import RuleConfig, load_rules
from handfoot_env.engine import Game

Cards = Union[str, Sequence[str], None]

#: the core :func:`new_game` plays on; the ``both_cores`` fixture runs a test module on each
CORE = "reference"


@pytest.fixture(autouse=True, params=["reference", "compiled"])
def both_cores(request):
    """Import into a test module to run each of its tests on both cores (``new_game``'s games)."""
    global CORE
    if request.param == "compiled" and not compiled_available():
        pytest.skip("the compiled core needs Numba")
    CORE = request.param
    yield request.param
    CORE = "reference"

#: default filler for hands and feet that a test does not spell out in full:
#: no pairs, no wilds, no threes, so it enables no pickup and no meld by itself.
FILLER_HAND = "4 5 6 7 8 9 10 J Q K A 4 5 6 7 8 9 10 J Q K A".split()
FILLER_FOOT = "5 6 7 8 9 10 J Q K A 4 5 6 7 8 9 10 J Q K A 4".split()


def cards(spec: Cards) -> List[str]:
    """``"K K 2 JK"`` -> ``["K", "K", "2", "JK"]``; lists are copied; ``None`` -> ``[]``."""
    if spec is None:
        return []
    if isinstance(spec, str):
        return spec.split()
    return [str(c) for c in spec]


def counts(spec: Cards) -> List[int]:
    """Count list over the 15 kinds of a card spec."""
    out = [0] * NUM_KINDS
    for c in cards(spec):
        out[kind_of(c)] += 1
    return out


def _fill(given: List[str], size: int, filler: Sequence[str], what: str) -> List[str]:
    if len(given) > size:
        raise ValueError(f"{what} has {len(given)} cards, more than {size}")
    return given + list(filler[: size - len(given)])


def build_shoe(rules: Union[str, RuleConfig] = "pagat", hands: Optional[Sequence[Cards]] = None,
               feet: Optional[Sequence[Cards]] = None, up: str = "4", stock: Cards = None,
               pad: bool = True, hand_filler: Sequence[str] = FILLER_HAND,
               foot_filler: Sequence[str] = FILLER_FOOT) -> List[str]:
    """The shoe list for ``Game.reset(shoe=...)``.

    ``hands`` and ``feet`` hold one card spec per player (missing players get
    only filler).  With ``pad`` a short hand or foot is completed with filler
    cards; without it every hand and foot must have exactly the rule size.
    """
    r = load_rules(rules)
    hands = list(hands or [])
    feet = list(feet or [])
    if len(hands) > r.players or len(feet) > r.players:
        raise ValueError(f"more hands/feet than the {r.players} players")
    out: List[str] = []
    for p in range(r.players):
        h = cards(hands[p]) if p < len(hands) else []
        if not pad and len(h) != r.hand_size:
            raise ValueError(f"hand of player_{p} has {len(h)} cards, not {r.hand_size}")
        out += _fill(h, r.hand_size, hand_filler, f"hand of player_{p}")
    for p in range(r.players):
        f = cards(feet[p]) if p < len(feet) else []
        if not pad and len(f) != r.foot_size:
            raise ValueError(f"foot of player_{p} has {len(f)} cards, not {r.foot_size}")
        out += _fill(f, r.foot_size, foot_filler, f"foot of player_{p}")
    out.append(up)
    out += cards(stock)
    return out


def leader(rules: Union[str, RuleConfig], round: int = 1) -> int:
    """The player who plays first in ``round``: left of the dealer, who moves one seat each round
    (docs/rules.md section 2; ``player_0`` in round 1)."""
    return (round - 1) % load_rules(rules).players


def from_leader(rules: Union[str, RuleConfig], round: int, specs: Sequence[Cards]) -> List[Cards]:
    """Per-player card specs given in turn order from ``round``'s leader, put in seat order (the
    order :func:`new_game` takes): a scripted deal written once plays the same in any round."""
    n = load_rules(rules).players
    first = leader(rules, round)
    out: List[Cards] = [None] * n
    for i, spec in enumerate(specs):
        out[(first + i) % n] = spec
    return out


def new_game(rules: Union[str, RuleConfig] = "pagat", hands=None, feet=None, up: str = "4", stock: Cards = None,
             seed: int = 0, round: int = 1, scores=None, pad: bool = True, stacked: bool = True,
             **overrides) -> Game:
    """A :class:`Game` reset with a stacked shoe (``overrides`` are rule fields), on :data:`CORE`;
    ``stacked=False`` deals from the seed alone."""
    r = load_rules(rules, **overrides)
    if CORE == "compiled":
        from handfoot_env.compiled import load
        g = load().CompiledGame(r)
    else:
        g = Game(r)
    shoe = build_shoe(r, hands, feet, up, stock, pad=pad) if stacked else None
    g.reset(seed=seed, shoe=shoe, round=round, scores=scores)
    return g


def observed(g, seat: int) -> dict:
    """The observation of ``seat`` by index name, from the game's own core (the reference's
    ``encode_observation`` or the compiled kernel): ``{"go_out.clean_missing": 1.0, ...}``."""
    import numpy as np
    from handfoot_env.observation import encode_observation, observation_names
    r = g.rules
    names = observation_names(r.players, r.teams)
    if isinstance(g, Game):
        obs = encode_observation(g, seat, g.legal_actions() if seat == g.current else None)
    else:
        obs, mask = np.zeros(len(names), dtype=np.float32), np.zeros(len(ACTION_NAMES), dtype=np.int8)
        g.observe(seat, obs, mask)
    return dict(zip(names, obs.tolist()))


_IN_FOOT = object()


def position(seed: int, hand: Cards, foot=_IN_FOOT, *, opened: bool = False, melds: Optional[dict] = None,
             books: Optional[Sequence[int]] = None, discard: Cards = None, stock: Cards = None,
             rules: Union[str, RuleConfig] = "pagat", **overrides) -> Game:
    """A reference :class:`Game` dealt from ``seed`` whose player to act is put in a position
    directly, for states a scripted deal would take dozens of turns to reach: holding ``hand``; in
    the foot, having played from it, unless ``foot`` gives the foot's cards; the team ``opened``
    with unfinished ``melds`` (``{"K": (naturals, twos, jokers)}``, ``"W"`` the wild meld) and
    ``books`` (how many clean, dirty and wild: books of fours, fives and wilds); the pile
    ``discard`` (bottom first) and the ``stock`` (its top last) when given.  ``overrides`` are
    rule fields.

    Only what a test names is set: the cards are not conserved (the deal's other cards stay where
    they were), the team's ``meld_value`` is not updated, and the books are stand-ins (fours, fives,
    wilds).  Fine for legality, which reads none of these; a position whose round is then scored
    counts the stand-in books' bonuses but not their cards."""
    g = Game(rules, **overrides)
    g.reset(seed=seed)
    p, team = g.current, g.team_of[g.current]
    g.hands[p] = counts(hand)
    if foot is _IN_FOOT:
        g.feet[p], g.played_foot[p] = None, True
    else:
        g.feet[p] = counts(foot)
    g.opened[team] = opened
    for slot, meld in (melds or {}).items():
        g.melds[team][11 if slot == "W" else kind_of(slot)] = list(meld)
    if books is not None:                 # the counts and the books themselves (fours, fives, wilds)
        g.book_counts[team] = list(books)
        g.books[team] = ([(kind_of("4"), 7, 0, 0)] * books[0] + [(kind_of("5"), 5, 1, 1)] * books[1]
                         + [(11, 0, 4, 3)] * books[2])
    if discard is not None:
        g.discard = [kind_of(c) for c in cards(discard)]
    if stock is not None:
        g.stock = [kind_of(c) for c in cards(stock)]
    return g


def play(g: Game, *names: str) -> Game:
    """Step every named action in order (each must be legal)."""
    for name in names:
        g.step(action_index(name))
    return g


def turn(g: Game, discard: str) -> None:
    """A plain turn: draw two, discard ``discard``."""
    play(g, "draw", f"discard:{discard}")


def legal_names(g: Game) -> List[str]:
    return [ACTION_NAMES[a] for a in g.legal_actions()]


def is_legal(g: Game, name: str) -> bool:
    return action_index(name) in g.legal_actions()


def hand_codes(g: Game, p: int) -> List[str]:
    """Player ``p``'s hand as a sorted list of codes."""
    return sorted(c for k, n in enumerate(g.hands[p]) for c in [CODES[k]] * n)


def same_cards(count_list: Sequence[int], spec: Cards) -> bool:
    return list(count_list) == counts(spec)


def card_value(spec: Cards) -> int:
    return sum(VALUES[kind_of(c)] for c in cards(spec) if kind_of(c) != RED3)


def deck(rules: Union[str, RuleConfig] = "pagat") -> List[int]:
    return deck_counts(load_rules(rules).decks)


def melds_of(g: Game, team: int) -> dict:
    """Unfinished melds of a team: slot code -> (naturals, twos, jokers)."""
    from handfoot_env.cards import SLOT_CODES
    return {SLOT_CODES[s]: tuple(m) for s, m in enumerate(g.melds[team]) if sum(m)}


def iter_names(names: Iterable[int]) -> List[str]:
    return [ACTION_NAMES[a] for a in names]


# --------------------------------------------------------------------------
# An independent implementation of docs/rules.md section 6 (scoring), working on
# ``Game.state_dict()`` only.  It deliberately shares no code with the engine.

#: card values of docs/rules.md section 1 (red threes are scored as bonus/penalty)
RULE_VALUES = {"4": 5, "5": 5, "6": 5, "7": 5, "8": 10, "9": 10, "10": 10, "J": 10, "Q": 10, "K": 10,
               "A": 20, "2": 20, "JK": 50, "3B": 5}


def rule_value(codes: Iterable[str]) -> int:
    return sum(RULE_VALUES[c] for c in codes if c != "3R")


def book_kind(meld: dict) -> Optional[str]:
    """'clean' / 'dirty' / 'wild' for a seven-card meld, ``None`` for an unfinished one."""
    size = meld["naturals"] + meld["twos"] + meld["jokers"]
    if size != 7:
        return None
    if meld["rank"] == "W":
        return "wild"
    return "clean" if meld["twos"] + meld["jokers"] == 0 else "dirty"


def expected_round_scores(sd: dict, went_out: Optional[int] = None) -> List[int]:
    """Round score of every team for the position ``sd`` (a state_dict), by docs/rules.md section 6.

    ``went_out`` is the player who went out, if any.  Rule numbers come from
    ``sd["rules"]``.
    """
    r = sd["rules"]
    teams = r["teams"]
    out = []
    for t in range(teams):
        total = 0
        for m in sd["melds"][t]:
            rank = m["rank"]
            nat_value = 0 if rank == "W" else RULE_VALUES[rank]
            total += m["naturals"] * nat_value + 20 * m["twos"] + 50 * m["jokers"]
            kind = book_kind(m)
            if kind is not None:
                total += r[f"{kind}_book"]
        total += sd["red_threes"][t] * r["red_three_bonus"]
        if went_out is not None and went_out % teams == t:
            total += r["go_out_bonus"]
        for p in range(r["players"]):
            if p % teams != t:
                continue
            left = list(sd["hands"][p])
            if not sd["foot_picked_up"][p]:
                left += sd["feet"][p]
            total -= rule_value(left)
            total += left.count("3R") * r["red_three_left"]
        out.append(total)
    return out


def apply_last_action(sd: dict, name: str) -> Tuple[dict, Optional[int]]:
    """The position after the round's last action ``name``, from the state just before it.

    Returns (new state, player who went out or None).  Only the actions that
    can end a round are modelled: a discard, a meld and laying a red three
    (and, for the engine's no-legal-action safety net, asking and answering).
    """
    import copy
    sd = copy.deepcopy(sd)
    r = sd["rules"]
    p = sd["current_player"]
    team = p % r["teams"]
    hand = sd["hands"][p]
    in_foot = sd["foot_picked_up"][p]
    if name.startswith("discard:"):
        hand.remove(name.split(":")[1])
        sd["discard"].append(name.split(":")[1])
    elif name.startswith("meld:"):
        _, rank, n, t, j = name.split(":")
        n, t, j = int(n), int(t), int(j)
        for _ in range(n):
            hand.remove(rank)
        for _ in range(t):
            hand.remove("2")
        for _ in range(j):
            hand.remove("JK")
        for m in sd["melds"][team]:
            if m["rank"] == rank and book_kind(m) is None:
                m["naturals"] += n
                m["twos"] += t
                m["jokers"] += j
                break
        else:
            sd["melds"][team].append({"rank": rank, "naturals": n, "twos": t, "jokers": j})
    elif name == "lay_red_three":
        hand.remove("3R")
        sd["red_threes"][team] += 1
        if sd["stock"]:
            hand.append(sd["stock"].pop(0))
    elif name in ("ask_go_out", "answer_yes", "answer_no"):
        pass        # no card moves; the round can end after it only by the engine's safety net
    else:
        raise AssertionError(f"action {name!r} is not expected to end a round")
    went_out = None
    if not hand:
        if in_foot:
            went_out = p if name != "lay_red_three" else None
        else:
            sd["hands"][p] = list(sd["feet"][p])
            sd["feet"][p] = []
            sd["foot_picked_up"][p] = True
    return sd, went_out


# --------------------------------------------------------------------------
# Scripted positions shared by the scenario and config tests

# A whole 108-card deal with two decks: the stock holds three cards, so the
# round runs out of stock on the first turn.  Every card is accounted for.
TWO_DECK_HANDS = [
    "K K K K K K K Q Q Q 2 3R 9",
    "4 4 5 5 6 6 7 7 8 8 10 10 J",
    "4 4 5 5 6 6 7 7 8 8 10 10 3R",
    "4 4 5 5 6 6 7 7 8 8 10 10 J",
]
TWO_DECK_FEET = [
    "A A A A A A A A JK Q Q Q Q",
    "9 9 9 9 9 9 9 J J J J J 3R",
    "2 2 2 2 2 2 2 JK JK JK 3B 3B 3B",
    "4 4 5 5 6 6 7 7 8 8 10 10 K",
]


def two_deck_game(hands=TWO_DECK_HANDS, feet=TWO_DECK_FEET, up="J", stock="Q 3B 3R", **overrides):
    return new_game(hands=hands, feet=feet, up=up, stock=stock, pad=False, decks=2, **overrides)


def books_game(last_draw="8 8", stop="p0_turn3", foot2=None, round: int = 1, **overrides) -> Game:
    """Play up to the start of the leader's third turn (the leader in the foot holding one 8).

    The leader is ``player_0`` in round 1 and moves one seat each round (:func:`leader`); the deal
    is written from the leader, so the game plays the same in every ``round`` (the opening, seven
    kings and seven aces, is worth 210, over every pagat minimum).  Turn 1: the leader makes two
    clean books and discards into the foot; the leader's partner makes two dirty books and
    discards into the foot.  Turn 2: the leader makes a wild book, melds 5s and 6s and discards
    down to one card; the partner plays from the foot.  ``last_draw`` is the leader's draw at turn
    3; ``foot2`` the partner's foot.
    """
    rules = load_rules("pagat", **overrides)
    me = leader(rules, round)
    mate, team = (me + 2) % rules.players, rules.team_of(me)
    g = new_game(hands=from_leader(rules, round, ["K K K K K K K A A A A A A", None,
                                                   "J J J J J J 2 10 10 10 10 10 2"]),
                 feet=from_leader(rules, round, ["2 2 2 2 JK JK JK 5 5 5 6 6 6", None, foot2]), up="9",
                 stock="A Q  4 9  10 A  5 9  8 8  4 10  6 7  8 9 " + last_draw, round=round, **overrides)
    assert g.current == me
    play(g, "draw", "meld:K:7:0:0", "meld:A:7:0:0", "discard:Q")
    turn(g, "4")
    play(g, "draw", "meld:J:6:1:0", "meld:10:6:1:0", "discard:A")
    turn(g, "5")
    assert g.book_counts[team] == [2, 2, 0] and g.feet[me] is None and g.feet[mate] is None
    play(g, "draw", "meld:W:0:4:3")
    assert g.book_counts[team] == [2, 2, 1]
    if stop == "p0_turn2":
        return g
    play(g, "meld:5:3:0:0", "meld:6:3:0:0", "discard:8")
    turn(g, "4")
    if stop == "p2_turn2":
        return g
    turn(g, "10")                                  # the partner plays from the foot
    turn(g, "7")
    assert g.current == me and hand_codes(g, me) == ["8"] and g.played_foot[mate]
    return g


def answer_with_a_meld_owed() -> Game:
    """A random Saskatchewan game (seed 137) at the first moment a player who owes the meld a pickup
    started has asked a teammate to let them go out: the teammate is to answer."""
    import random
    from handfoot_env.engine import ANSWER_PHASE
    g = Game("saskatchewan")
    g.reset(seed=137)
    rng = random.Random(137)
    while not (g.phase == ANSWER_PHASE and g.incomplete >= 0):
        g.apply_legal(rng.choice(g.legal_actions()))
    return g
