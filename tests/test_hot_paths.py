"""The hot paths equal their plain definitions: the observation encoder (with its per-game table
and pile caches) equals the observation written plainly, the legal list equals every action
``reason_illegal`` accepts, masks equal the legal list, the pickup check's cheap bounds equal the
dynamic program alone, and a clone is an independent equal copy.

The observation's reference here is written from the layout in docs/observation.md, sharing no
code with :mod:`handfoot_env.observation`; mutation runs of that module (docs/testing.md) rely on it.
"""
from __future__ import annotations

import random
from typing import List

import numpy as np
import pytest

from handfoot_env.actions import NUM_ACTIONS, PICKUP
from handfoot_env.cards import NUM_KINDS, NUM_RANKS, VALUES
from handfoot_env.engine import ANSWER_PHASE, GAME_OVER, MAX_CANCELS_PER_TURN, Game
from handfoot_env.observation import action_mask, encode_observation, mask_of

PRESETS = ["pagat", "bicycle", "six_player", "individual"]

def _reference_encoding(game: Game, seat: int) -> np.ndarray:
    """The observation written plainly (the encoding before the speed work)."""
    n, nt = game.n, game.num_teams
    r = game.rules
    team = game.team_of[seat]
    v: List[float] = list(game.hands[seat])
    v += [1.0 if game.feet[seat] is None else 0.0, 1.0 if game.played_foot[seat] else 0.0]
    for o in range(1, n):
        q = (seat + o) % n
        v += [float(sum(game.hands[q])), 1.0 if game.feet[q] is None else 0.0, 1.0 if game.played_foot[q] else 0.0]
    for ot in range(nt):
        t = (team + ot) % nt
        for m in game.melds[t]:
            v.extend(m)
        v.extend(game.book_counts[t])
        v += [game.red3[t], 1.0 if game.opened[t] else 0.0]
    disc = game.discard
    v += [1.0 if disc and disc[-1] == k else 0.0 for k in range(NUM_KINDS)]
    v += [len(disc), 1.0 if game.pile_blocked() else 0.0]
    mine = game.current == seat and game.phase != GAME_OVER
    v.append(1.0 if mine and game.phase == 0 and game._pickup_reason(seat) is None and not game.hands[seat][13]
             else 0.0)
    take = game._take
    v.append(float(min(len(disc), take) if take else len(disc)))
    v += [disc.count(k) for k in range(NUM_KINDS)]
    v += [len(game.stock), game.round, game.minimum / 100.0, len(game.round_scores) / r.rounds]
    for ot in range(nt):
        t = (team + ot) % nt
        pts = 0
        for s, a, tw, j in game.books[t]:
            pts += a * (VALUES[s] if s < NUM_RANKS else 0) + 20 * tw + 50 * j
        for s, (a, tw, j) in enumerate(game.melds[t]):
            pts += a * (VALUES[s] if s < NUM_RANKS else 0) + 20 * tw + 50 * j
        c = game.book_counts[t]
        pts += c[0] * r.clean_book + c[1] * r.dirty_book + c[2] * r.wild_book + game.red3[t] * r.red_three_bonus
        v += [game.scores[t] / 1000.0, pts / 1000.0]
    v += [1.0 if game.phase == k else 0.0 for k in range(4)]
    v += [1.0 if mine and game.phase != ANSWER_PHASE else 0.0, 1.0 if mine and game.phase == ANSWER_PHASE else 0.0,
          ((game.turn_player - seat) % n) / n]
    own_turn = game.team_of[game.turn_player] == team
    opened = game.opened[team]
    if own_turn and not opened:
        v += [game.prov_value / 100.0, 1.0 if game.forced is not None else 0.0, float(sum(game.pending))]
    else:
        v += [0.0, 0.0, 0.0]
    v.append(1.0 if own_turn and game.incomplete >= 0 else 0.0)
    v.append(1.0 if own_turn and not opened and game.cancels < MAX_CANCELS_PER_TURN and any(game.prov) else 0.0)
    v += [1.0 if game.phase == ANSWER_PHASE else 0.0, 1.0 if game.asked else 0.0,
          1.0 if game.permission is True else 0.0, 1.0 if game.permission is False else 0.0]
    bc = game.book_counts[team]
    nc, nd, nw = r.going_out_books(game.round)
    v += [max(0, nc - bc[0]), max(0, nd - bc[1]), max(0, nw - bc[2])]
    v.append(1.0 if game.partners_ok(seat) else 0.0)
    return np.asarray(v, dtype=np.float32)


def _play_states(rules: str, games: int, seed: int):
    """States along random play biased towards melding and pickups (reaches opening, feet and going out)."""
    g = Game(rules)
    for k in range(games):
        rng = random.Random(seed + k)
        g.reset(seed=seed + k)
        style = k % 3
        while not g.game_over:
            legal = g.legal_actions()
            yield g, legal, rng
            melds = [a for a in legal if a >= 21]
            if style and melds and rng.random() < 0.8:
                a = max(melds) if style == 1 else rng.choice(melds)
            elif style and PICKUP in legal and rng.random() < 0.7:
                a = PICKUP
            else:
                a = rng.choice(legal)
            g.step(a)


@pytest.mark.parametrize("rules", PRESETS)
def test_fast_paths_match_plain_definitions(rules):
    """legal_actions == every action reason_illegal accepts; encode_observation == the plain encoding
    (with and without the legal list); masks == the legal list."""
    for i, (g, legal, rng) in enumerate(_play_states(rules, games=2, seed=11)):
        if i % 5 == 0:
            assert legal == [a for a in range(NUM_ACTIONS) if g.reason_illegal(a) is None]
        for seat in range(g.n):
            ref = _reference_encoding(g, seat)
            got = encode_observation(g, seat)
            assert got.dtype == np.float32 and got.shape == ref.shape
            assert np.array_equal(got, ref), (rules, seat, np.flatnonzero(got != ref))
            m = action_mask(g, seat)
            assert m.dtype == np.int8 and m.shape == (NUM_ACTIONS,)
            assert list(np.flatnonzero(m)) == (legal if seat == g.current else [])
        assert np.array_equal(encode_observation(g, g.current, legal), encode_observation(g, g.current))


def test_mask_of_is_a_fresh_writable_int8_array():
    m = mask_of([3, 7, 700])
    assert m.dtype == np.int8 and m.shape == (NUM_ACTIONS,) and m.flags.writeable
    assert list(np.flatnonzero(m)) == [3, 7, 700]
    m2 = mask_of([3])
    m2[5] = 1
    assert m[5] == 0


def test_clone_is_independent_and_equal():
    for i, (g, legal, rng) in enumerate(_play_states("pagat", games=1, seed=3)):
        if i % 50:
            continue
        c = g.clone()
        assert c.state_dict() == g.state_dict()
        a = legal[0]
        c.step(a)
        assert g.legal_actions() == legal        # the original did not move


def test_cached_table_blocks_stay_right_across_clones():
    """The per-team observation cache is reset by every table change, also in a diverging clone."""
    rng = random.Random(3)
    g = Game("pagat")
    g.reset(seed=5)
    checked = 0
    while not g.game_over and checked < 300:
        encode_observation(g, 0)                       # fill the cache
        c = g.clone()
        for game in (g, c):                            # play the two copies apart
            if not game.game_over:
                game.step(rng.choice(game.legal_actions()))
            for seat in range(game.n):
                assert np.array_equal(encode_observation(game, seat), _reference_encoding(game, seat))
        checked += 1
    assert checked == 300


@pytest.mark.parametrize("rules,overrides", [("pagat", {}), ("pagat", {"pile_take": "all"}),
                                             ("pagat", {"pile_take": 2}), ("bicycle", {})])
def test_cached_pile_and_table_blocks_with_sparse_observations(rules, overrides):
    """The pile cache (counts updated card by card between pickups) and the table cache stay right
    when observations are taken only now and then (several discards and pickups in between)."""
    rng = random.Random(11)
    g = Game(rules, **overrides)
    checked = 0
    for seed in range(3):
        g.reset(seed=seed)
        while not g.game_over:
            if rng.random() < 0.15:
                seat = rng.randrange(g.n)
                assert np.array_equal(encode_observation(g, seat), _reference_encoding(g, seat))
                checked += 1
            legal = g.legal_actions()
            a = PICKUP if PICKUP in legal and rng.random() < 0.7 else rng.choice(legal)
            g.step(a)
    assert checked > 100
    g.reset(seed=4)                                    # the pile changed outside the engine
    encode_observation(g, 0)
    g.discard.append(0)
    assert np.array_equal(encode_observation(g, 0), _reference_encoding(g, 0))
    g.discard = [5, 5]
    assert np.array_equal(encode_observation(g, 1), _reference_encoding(g, 1))
    g.discard = [6, 6, 6]                              # a new pile one card longer than the cached one
    assert np.array_equal(encode_observation(g, 1), _reference_encoding(g, 1))


def test_pickup_shortcuts_agree_with_the_dynamic_program():
    """The unopened pickup check's cheap bounds give the same answer as max_meld_value alone."""
    from handfoot_env.cards import BLACK3, JOKER, NUM_RANKS, NUM_SLOTS, RED3, TWO, VALUES, WILD_SLOT
    from handfoot_env.engine import DRAW_PHASE
    from handfoot_env.melds import max_meld_value

    def dp_only(g, p):
        hand, top = g.hands[p], g.discard[-1]
        wild = top >= NUM_RANKS
        h2 = hand[:]
        h2[top] -= 2
        slots = [[0, 0, 0] for _ in range(NUM_SLOTS)]
        slots[WILD_SLOT if wild else top] = [3, 0, 0] if not wild else [0, 3 * (top == TWO), 3 * (top == JOKER)]
        avail = sum(hand) - 2 - (2 if g.feet[p] is None else 0)
        return 3 * VALUES[top] + max_meld_value(h2, slots, g.rules, avail) >= g.minimum

    checked = 0
    for preset in ("pagat", "bicycle"):
        for seed in range(12):
            g = Game(preset)
            g.reset(seed=seed, round=1 + seed % 4)
            rng = random.Random(seed)
            while not g.game_over:
                p = g.current
                top = g.discard[-1] if g.discard else RED3
                if (g.phase == DRAW_PHASE and not g.hands[p][RED3] and top not in (RED3, BLACK3)
                        and g.hands[p][top] >= 2 and not g.opened[g.team_of[p]]
                        and (top < NUM_RANKS or g.rules.wild_melds)):
                    assert (g._pickup_reason(p) is None) == dp_only(g, p)
                    checked += 1
                g.step(rng.choice(g.legal_actions()))
    assert checked > 100
