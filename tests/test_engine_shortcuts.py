"""The engine's hot-path shortcuts decide exactly as the plain definitions they stand in for.

* ``opening_bounds`` (the cheap bounds in front of ``max_meld_value`` in the meld
  post check of an unopened team) never contradicts the dynamic program;
* with the bounds switched off (dynamic program only) the legal lists are the same;
* ``structural_ids`` (shared across slots, counts capped at the meld's room) equals
  ``structural_melds``.
"""
from __future__ import annotations

import itertools
import random

import handfoot_env.engine as engine
from handfoot_env.actions import CANCEL_MELDS, MELD_BASE
from handfoot_env.cards import JOKER, NUM_RANKS, NUM_SLOTS, RED3, TWO, VALUES, WILD_SLOT
from handfoot_env.engine import MELD_PHASE, Game
from handfoot_env.melds import opening_bounds, structural_ids, structural_melds, max_meld_value

PRESETS = ["pagat", "bicycle", "six_player", "individual"]


def _play(rules: str, games: int, seed: int):
    """Game states of random play that favours melds and ``cancel_melds`` (so that the
    teams stay unopened with the cancel spent, where the post check needs the minimum)."""
    rng = random.Random(seed)
    for i in range(games):
        g = Game(rules)
        g.reset(seed=seed * 1000 + i, round=1 + i % 4)
        while not g.game_over:
            legal = g.legal_actions()
            yield g, legal
            melds = [a for a in legal if a >= MELD_BASE]
            if CANCEL_MELDS in legal and rng.random() < 0.5:
                a = CANCEL_MELDS
            elif melds and rng.random() < 0.6:
                a = rng.choice(melds)
            else:
                a = rng.choice(legal)
            g.apply_legal(a)


def _post_dp_inputs(g: Game):
    """For every structurally valid meld of the player to act whose team is unopened and
    does not open with it: (hand, slot sizes, slots, max_cards, need) after the meld, as
    ``_meld_post_reason`` hands them to the bounds and the dynamic program."""
    p = g.current
    hand = g.hands[p]
    team = g.team_of[p]
    if g.phase != MELD_PHASE or hand[RED3] or g.opened[team]:
        return
    size = sum(hand)
    in_foot = g.feet[p] is None
    for s in range(NUM_SLOTS):
        if s == WILD_SLOT and not g.rules.wild_melds:
            continue
        n0, t0, j0 = g.melds[team][s]
        hn = hand[s] if s < NUM_RANKS else 0
        for aid, n, t, j, book in structural_melds(s, min(hn, 7), min(hand[TWO], 7), min(hand[JOKER], 7),
                                                    n0, t0, j0, g._double):
            value = g.prov_value + n * (VALUES[s] if s < NUM_RANKS else 0) + 20 * t + 50 * j
            left = size - n - t - j
            if value >= g.minimum or left == 0:
                continue
            h2 = hand[:]
            if s < NUM_RANKS:
                h2[s] -= n
            h2[TWO] -= t
            h2[JOKER] -= j
            slots = [list(m) for m in g.melds[team]]
            slots[s] = [0, 0, 0] if book else [n0 + n, t0 + t, j0 + j]
            sizes = [sum(m) for m in slots]
            yield h2, sizes, slots, left - (2 if in_foot else 0), g.minimum - value


def test_opening_bounds_never_contradict_the_dynamic_program():
    decided = {True: 0, False: 0, None: 0}
    checked = 0
    for rules in PRESETS:
        for g, _ in _play(rules, games=10, seed=5):
            for h2, sizes, slots, max_cards, need in _post_dp_inputs(g):
                best = max_meld_value(h2, slots, g.rules, max_cards)
                # the real need and a sweep of others, so that both bounds get tested at their edges
                for nd in {need, best, best + 1, *range(5, 200, 15)}:
                    if nd <= 0:
                        continue
                    verdict = opening_bounds(h2, sizes, g.rules.wild_melds, max_cards, nd)
                    decided[verdict] += 1
                    if verdict is not None:
                        assert verdict == (best >= nd), (rules, h2, sizes, max_cards, nd, best, verdict)
                checked += 1
    assert checked > 2000
    assert decided[True] > 1000 and decided[False] > 1000, decided


def _hand(**kinds):
    """A hand of card counts by kind name (``four=3``, ``king=3``, ``joker=1``)."""
    names = ["four", "five", "six", "seven", "eight", "nine", "ten", "jack", "queen", "king", "ace", "two", "joker",
             "red3", "black3"]
    h = [0] * len(names)
    for k, v in kinds.items():
        h[names.index(k)] = v
    return h


def test_opening_bounds_on_hand_computed_hands():
    """Where the shortcut answers and what it answers, worked out by hand from its bounds: the upper
    bound (the best ``max_cards`` card values that could be melded) decides False just under it, the
    lower bound (melds the program certainly lists) decides True at it, and a meld of one or two
    cards (only an opened team's pickup overflow) leaves the answer to the program."""
    none = [0] * NUM_SLOTS
    # three kings (30) and three fours (15): every card melds, upper bound 45 = lower bound
    h = _hand(king=3, four=3)
    assert opening_bounds(h, none, True, 20, 45) is True
    assert opening_bounds(h, none, True, 20, 46) is False
    # five cards at most: upper bound 30 + 2 x 5 = 40; the lower bound has only the kings (30)
    assert opening_bounds(h, none, True, 5, 41) is False
    assert opening_bounds(h, none, True, 5, 40) is None
    assert opening_bounds(h, none, True, 5, 30) is True
    # a lone ace and a lone two: the ace alone cannot be melded (no meld of aces), the two adds 20
    assert opening_bounds(_hand(ace=1, two=1), none, True, 20, 21) is False
    # two pairs and one joker: one pair can take the joker (50 + 2 x 10), the other cannot be melded
    h = _hand(queen=2, jack=2, joker=1)
    assert opening_bounds(h, none, True, 20, 71) is False
    assert opening_bounds(h, none, True, 20, 70) is True           # queens and the joker: 20 + 50
    assert opening_bounds(_hand(queen=2, joker=1), none, True, 3, 70) is True    # exactly three cards
    # an unfinished meld of kings takes a single king
    one_king = list(none)
    one_king[9] = 3
    assert opening_bounds(_hand(king=1), one_king, True, 20, 11) is False
    assert opening_bounds(_hand(king=1), one_king, True, 20, 10) is True
    assert opening_bounds(_hand(king=3), one_king, True, 1, 10) is True        # one card may be melded
    assert opening_bounds(_hand(king=3), one_king, True, 1, 11) is False
    # three cards at most: the kings fill the upper bound (30) and the fours are never counted
    assert opening_bounds(_hand(king=3, four=3), none, True, 3, 30) is True
    assert opening_bounds(_hand(king=3, four=3), none, True, 3, 31) is False
    # three jokers make a wild meld of their own (150) when exactly three cards may be melded
    assert opening_bounds(_hand(joker=3), none, True, 3, 150) is True
    # seven cards: upper bound 150 + 30 + 5 = 185; the lower bound (wild meld, then the kings: 180)
    # cannot place a lone four, so 185 is left to the program
    h = _hand(joker=3, king=3, four=3)
    assert opening_bounds(h, none, True, 7, 186) is False
    assert opening_bounds(h, none, True, 7, 185) is None
    assert opening_bounds(h, none, True, 7, 180) is True
    # a lone ace cannot be melded, and the kings after it still count
    assert opening_bounds(_hand(ace=1, king=3), none, True, 20, 30) is True
    # ten kings: a book of seven, then a new meld of three (100)
    assert opening_bounds(_hand(king=10), none, True, 20, 100) is True
    # ... but with eight cards at most only the book counts for sure (70), the upper bound is 80
    assert opening_bounds(_hand(king=10), none, True, 8, 80) is None
    assert opening_bounds(_hand(king=10), none, True, 8, 70) is True
    # fifteen kings: a book and a second meld of at most seven (140), one king left over
    assert opening_bounds(_hand(king=15), none, True, 20, 141) is None
    assert opening_bounds(_hand(king=15), none, True, 20, 140) is True
    # new melds of a pair and one wild, after the naturals, as many as there are wilds and cards
    assert opening_bounds(_hand(king=3, queen=2, joker=1), none, True, 20, 100) is True
    h = _hand(queen=2, jack=2, joker=2)
    assert opening_bounds(h, none, True, 20, 140) is True
    assert opening_bounds(h, none, True, 6, 140) is True
    assert opening_bounds(h, none, True, 5, 130) is None               # room for one such meld only
    assert opening_bounds(_hand(queen=2, two=1), none, True, 20, 40) is True      # a two counts 20
    # meld sizes 1 and 2 (a pickup overflow) leave it to the program; 0 and 3 do not
    for slot in (4, WILD_SLOT):
        for size, answered in ((1, False), (2, False), (3, True)):
            sizes = list(none)
            sizes[slot] = size
            verdict = opening_bounds([0] * 15, sizes, True, 20, 10)
            assert (verdict is not None) == answered, (slot, size, verdict)
            if answered:
                assert verdict is False                             # nothing in hand: 0 < 10


def test_max_meld_value_on_hand_computed_hands():
    """The dynamic program's value at and just under the card limit (pagat: the double wild limit,
    wild melds allowed)."""
    rules = Game("pagat").rules
    empty = [[0, 0, 0]] * NUM_SLOTS
    assert max_meld_value(_hand(king=3), empty, rules, 3) == 30
    assert max_meld_value(_hand(king=3), empty, rules, 2) == 0              # no meld of two cards
    assert max_meld_value(_hand(king=3, joker=1), empty, rules, 3) == 70    # two kings and the joker
    assert max_meld_value(_hand(king=3, joker=1), empty, rules, 4) == 80    # three kings and the joker
    assert max_meld_value(_hand(joker=3), empty, rules, 3) == 150           # a wild meld
    assert max_meld_value(_hand(joker=3), empty, rules, 2) == 0
    assert max_meld_value(_hand(king=2, two=1), empty, rules, 3) == 40


def test_legal_lists_are_the_same_with_the_dynamic_program_alone(monkeypatch):
    states = [(rules, g.clone(), legal) for rules in PRESETS for g, legal in _play(rules, games=6, seed=9)]
    monkeypatch.setattr(engine, "opening_bounds", lambda *args: None)
    post_dp = 0
    for rules, g, legal in states:
        assert g.legal_actions() == legal, rules
        p = g.current
        post_dp += (g.phase == MELD_PHASE and not g.opened[g.team_of[p]] and g.cancels > 0)
    assert post_dp > 200


def test_structural_ids_match_the_structural_melds():
    for double in (True, False):
        for s in (0, 4, 10, WILD_SLOT):
            wide = 8 if s == WILD_SLOT else 4
            for hn, ht, hj in itertools.product(range(1 if s == WILD_SLOT else 9), range(wide), range(wide)):
                for n0, t0, j0 in itertools.product(range(1 if s == WILD_SLOT else 7), range(4), range(4)):
                    if n0 + t0 + j0 > 6:
                        continue
                    cand, ids = structural_ids(s, hn, ht, hj, n0, t0, j0, double)
                    assert cand == structural_melds(s, hn, ht, hj, n0, t0, j0, double)
                    assert ids == tuple(c[0] for c in cand)
