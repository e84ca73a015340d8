"""Worlds a seat cannot tell apart (handfoot_env/belief.py): every sampled world shows the seat exactly
its view, conserves the cards, keeps the cards known to be in each hand there, plays on to the end on
both cores, and deals the unseen cards with the hypergeometric law of a uniform shuffle."""
from __future__ import annotations

import dataclasses
import math
import random

import numpy as np
import pytest

from handfoot_env.actions import ANSWER_NO, ANSWER_YES, DISCARD_BASE, MELD_BASE
from handfoot_env.belief import (InconsistentView, discard_likelihood, known_cards, public_round, sample_worlds,
                                 unseen_cards)
from handfoot_env.cards import RED3, deck_counts, kind_of
from handfoot_env.config import PRESETS
from handfoot_env.engine import Game
from handfoot_env.view import seat_view
from tests.helpers import answer_with_a_meld_owed



def _positions(preset: str, seeds, every: int):
    """(game, seat) at every ``every``-th action of random games (a copy of the game each)."""
    for seed in seeds:
        g = Game(preset)
        g.reset(seed=seed)
        rng = random.Random(seed)
        step = 0
        while not g.game_over:
            if step % every == 0:
                yield g.clone(), step
            g.apply_legal(rng.choice(g.legal_actions()))
            step += 1
        yield g.clone(), step


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_worlds_show_the_seat_its_view_and_keep_every_card(preset):
    positions = known_seen = 0
    worlds = []
    for g, step in _positions(preset, (1, 2), every=23):
        for seat in range(g.n):
            v = seat_view(g, seat)
            known = known_cards(v)
            pub = public_round(v)
            # what the record says holds in the real game
            for p in range(g.n):
                assert all(h >= k for h, k in zip(g.hands[p], known[p])), (preset, step, p)
                if not pub.may_hold_red_three[p]:
                    assert g.hands[p][RED3] == 0, (preset, step, p)
            if g.turn_player != seat:
                assert list(pub.pending) == g.pending
            known_seen += sum(map(sum, (known[p] for p in range(g.n) if p != seat)))
            for w in sample_worlds(v, 1, rng=step * 10 + seat):
                positions += 1
                assert seat_view(w, seat) == v, (preset, step, seat)
                assert seat_view(w, seat).public == v.public, (preset, step, seat)   # a world keeps the record too
                assert w.card_locations() == deck_counts(g.rules.decks)
                for p in range(g.n):
                    assert all(h >= k for h, k in zip(w.hands[p], known[p]))
                    if not pub.may_hold_red_three[p]:
                        assert w.hands[p][RED3] == 0
                if len(worlds) < 60:
                    worlds.append(w)
    assert positions >= 200 and known_seen > 0
    # every world plays on to the game's end: on the compiled core all at once ...
    pytest.importorskip("numba")
    from handfoot_env.compiled.batch import CoreBatch, state_row
    b = CoreBatch(preset, len(worlds))
    for i, w in enumerate(worlds):
        state_row(w, b.S[i])
    b.step(np.full(len(worlds), -1))
    rng = np.random.default_rng(0)
    for _ in range(20000):
        acts, done = b.random_actions(rng)
        if done == len(worlds):
            break
        b.step(acts)
    assert all(b.done(i) for i in range(len(worlds)))
    # ... and a few on the reference engine
    for w in worlds[:4]:
        r = random.Random(0)
        while not w.game_over:
            w.step(r.choice(w.legal_actions()))


def test_worlds_are_reproducible_and_differ_between_seeds():
    g = Game("pagat")
    g.reset(seed=5)
    v = seat_view(g, 2)
    a = [w.state_dict() for w in sample_worlds(v, 3, rng=7)]
    assert a == [w.state_dict() for w in sample_worlds(v, 3, rng=np.random.default_rng(7))]
    assert a != [w.state_dict() for w in sample_worlds(v, 3, rng=8)]
    assert sample_worlds(v, 0, rng=1) == []


def _chi2(observed: np.ndarray, pmf: np.ndarray) -> tuple:
    """Pearson's statistic (bins with expected count under 5 pooled) and its 0.999 critical value
    (Wilson-Hilferty)."""
    n = observed.sum()
    exp = pmf * n
    order = np.argsort(-exp)
    keep = exp[order] >= 5
    o = np.append(observed[order][keep], observed[order][~keep].sum())
    e = np.append(exp[order][keep], exp[order][~keep].sum())
    if e[-1] == 0:
        o, e = o[:-1], e[:-1]
    stat = float(((o - e) ** 2 / e).sum())
    df = len(e) - 1
    z = 3.090
    crit = df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3
    return stat, crit


def _hypergeom(total: int, good: int, draws: int) -> np.ndarray:
    return np.array([math.comb(good, k) * math.comb(total - good, draws - k) / math.comb(total, draws)
                     for k in range(draws + 1)])


def test_a_kind_in_another_hand_is_hypergeometric():
    # the deal: no card known; every hidden place may hold a red three
    g = Game("pagat")
    g.reset(seed=11)
    v = seat_view(g, 0)
    assert not any(map(any, known_cards(v)))
    unseen = unseen_cards(v)
    total = sum(unseen)
    n_worlds = 3000
    worlds = sample_worlds(v, n_worlds, rng=3)
    for kind in ("K", "JK", "3R"):
        k = kind_of(kind)
        counts = np.bincount([w.hands[1][k] for w in worlds], minlength=14)[:14]
        stat, crit = _chi2(counts, _hypergeom(total, unseen[k], 13))
        assert stat < crit, (kind, stat, crit)
        # the test has power: a hand of 15 cards is rejected
        bigger = _hypergeom(total, unseen[k], 15)[:14]
        wrong, crit2 = _chi2(counts, bigger / bigger.sum())
        assert wrong > crit2, kind


def test_a_hand_that_cannot_hold_a_red_three_draws_from_the_other_cards():
    # after player 0's draw and discard, player 0's hand holds no red three (it would have been laid)
    g = Game("pagat")
    g.reset(seed=11)
    rng = random.Random(0)
    while g.round_actions < 1 or g.turn_player == 0:
        g.apply_legal([a for a in g.legal_actions() if a != 1][0] if g.current == 0 else rng.choice(g.legal_actions()))
    v = seat_view(g, 1)
    pub = public_round(v)
    assert not pub.may_hold_red_three[0] and pub.may_hold_red_three[2]
    unseen = unseen_cards(v)
    total = sum(unseen) - unseen[RED3]
    worlds = sample_worlds(v, 2000, rng=4)
    assert all(w.hands[0][RED3] == 0 for w in worlds)
    k = kind_of("Q")
    size = v.hand_sizes[0]
    counts = np.bincount([w.hands[0][k] for w in worlds], minlength=size + 1)
    stat, crit = _chi2(counts, _hypergeom(total, unseen[k], size))
    assert stat < crit


def test_pickup_cards_are_known_to_the_other_seats():
    from handfoot_env.actions import PICKUP
    found = 0
    for seed in range(40):
        g = Game("pagat")
        g.reset(seed=seed)
        rng = random.Random(seed)
        while not g.game_over and g.round == 1:
            legal = g.legal_actions()
            a = PICKUP if PICKUP in legal else rng.choice(legal)
            p = g.current
            before = len(g.discard)
            g.apply_legal(a)
            if a == PICKUP and g.opened[g.team_of[p]] and before > 3:
                v = seat_view(g, (p + 1) % g.n)
                kn = known_cards(v)[p]
                assert sum(kn) >= min(before, 7) - 3     # the taken cards, less the top card
                assert all(h >= k for h, k in zip(g.hands[p], kn))
                for w in sample_worlds(v, 5, rng=seed):
                    assert all(h >= k for h, k in zip(w.hands[p], kn))
                    assert seat_view(w, v.seat) == v
                found += 1
                break
        if found >= 3:
            break
    assert found >= 3


def test_a_view_no_game_produces_is_one_clear_error():
    g = Game("pagat")
    g.reset(seed=2)
    g.apply_legal(g.legal_actions()[0])
    v = seat_view(g, 1)
    with pytest.raises(InconsistentView, match="pile"):
        sample_worlds(dataclasses.replace(v, discard=v.discard + (3,)), 1, rng=0)
    with pytest.raises(InconsistentView, match="up card"):
        sample_worlds(dataclasses.replace(v, up_card=-1), 1, rng=0)
    with pytest.raises(ValueError, match="n >= 0"):
        sample_worlds(v, -1)
    with pytest.raises(ValueError, match="rng"):
        sample_worlds(v, 1, rng="x")


def test_policy_weights_read_the_last_discard_from_the_state_before_it():
    from agents.registry import make_agent
    from handfoot_env.observation import encode_observation
    champion = make_agent("champion")
    g = Game("pagat")
    g.reset(seed=9)
    rng = random.Random(9)
    checked = 0
    while checked < 5 and not g.game_over:
        legal = g.legal_actions()
        a = rng.choice(legal)
        p = g.current
        before = g.clone()
        g.apply_legal(a)
        if DISCARD_BASE <= a < MELD_BASE and g.phase == 0 and g.turn_player == (p + 1) % g.n and g.round_actions:
            view = seat_view(g, g.turn_player)
            got = discard_likelihood(champion, g, public_round(view))
            z = champion.policy.logits(encode_observation(before, p, legal)).astype(np.float64)[legal]
            e = np.exp(z - z.max())
            assert got == pytest.approx(float(e[legal.index(a)] / e.sum()), rel=1e-6)
            checked += 1
    assert checked == 5
    v = seat_view(g, g.current)
    worlds = sample_worlds(v, 4, rng=1, weight_by=champion)
    assert len(worlds) == 4 and all(seat_view(w, v.seat) == v for w in worlds)


def test_worlds_let_an_asking_turn_player_finish_a_pickup_meld_after_either_answer():
    """The seat is the partner asked to let the turn player go out, and the turn player still owes a
    meld the pile's pickup started: in every world that player's hand can complete it, whatever the
    answer (a hand that cannot leaves the world with no legal action)."""
    g = answer_with_a_meld_owed()
    seat = g.current
    assert g.turn_player != seat
    worlds = sample_worlds(seat_view(g, seat), 200, rng=3)
    for w in worlds:
        assert seat_view(w, seat) == seat_view(g, seat)
        for answer in (ANSWER_YES, ANSWER_NO):
            after = w.clone()
            after.apply_legal(answer)
            legal = after.legal_actions()
            assert legal and legal[-1] >= MELD_BASE, (answer, after.hands[after.turn_player])


@pytest.mark.parametrize("core", ["reference", "compiled"])
@pytest.mark.parametrize("preset", ["pagat", "six_player"])
def test_the_game_keeps_the_public_record_its_views_carry(core, preset):
    """The record a game keeps as actions apply (``view.public``) is at every step the one its round's
    record gives from the deal, on both cores, through new rounds and a copy that plays on differently."""
    from handfoot_env.compiled import make_game
    from handfoot_env.public import follow
    g = make_game(core, preset)
    g.reset(seed=11)
    rng = random.Random(11)
    copy, checked, rounds = None, 0, set()
    while not g.game_over:
        for seat in range(g.n):
            v = g.seat_view(seat)
            again = follow(None, None, v.rules, v.team_of, v.num_teams, v.up_card, v.minimum, v.round_history)
            assert v.public == again.snapshot(), (core, g.action_count, seat)
            assert public_round(v) is v.public
            checked += 1
        rounds.add(v.round)
        if copy is None and g.action_count == 120:
            copy = g.clone()
        g.apply_legal(rng.choice(g.legal_actions()))
    assert len(rounds) >= 2 and checked > 1000
    g.reset(seed=12)                          # a view read only after its game played on, and after a new deal
    views = []
    for _ in range(60):
        views.append(g.seat_view(g.current))
        g.apply_legal(rng.choice(g.legal_actions()))
    g.reset(seed=13)
    g.seat_view(0).public
    for v in reversed(views):
        assert v.public == follow(None, None, v.rules, v.team_of, v.num_teams, v.up_card, v.minimum,
                                  v.round_history).snapshot()
    for _ in range(40):                       # the copy branches off at action 120 and keeps its own record
        copy.apply_legal(rng.choice(copy.legal_actions()))
        v = copy.seat_view(0)
        assert v.public == follow(None, None, v.rules, v.team_of, v.num_teams, v.up_card, v.minimum,
                                  v.round_history).snapshot()
