"""Agents: the interface, the registry, legality and robustness over every preset, and the
promise that a seat's view (and so a heuristic's choice) never depends on hidden cards."""
from __future__ import annotations

import dataclasses
import random
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import agents
from agents import Agent, GreedyAgent, RandomAgent, StrategicAgent, make_agent
from agents.strategic import plan_meld_out
from handfoot_env import Game
from handfoot_env.actions import ANSWER_NO, ANSWER_YES, DISCARD_ACTION, DRAW, MELD_ACTION, NUM_ACTIONS, PICKUP
from handfoot_env.cards import BLACK3, NUM_KINDS, NUM_SLOTS, WILD_SLOT, counts_of
from handfoot_env.config import load_rules
from handfoot_env.engine import ANSWER_PHASE, DRAW_PHASE, MELD_PHASE, max_actions_per_game
from handfoot_env.view import SeatView, seat_view

PRESETS = ["pagat", "bicycle", "six_player", "individual"]
SPECS = ["random", "greedy", "strategic"]


def play(rules, specs, seed, check=None):
    """Play one game, agents by team; returns (game, actions)."""
    g = Game(rules)
    g.reset(seed=seed)
    agents = [make_agent(specs[g.team_of[p] % len(specs)], seed + p) for p in range(g.n)]
    for p, a in enumerate(agents):
        a.reset(p, g.rules, seed * 7 + p)
    limit = max_actions_per_game(g.rules)
    n = 0
    while not g.game_over:
        assert n < limit, "game did not end"
        p = g.current
        v = seat_view(g, p)
        if check is not None:
            check(g, p, v)
        a = agents[p].act(None, v)
        assert a in v.legal_actions, f"{specs} chose illegal {a}"
        g.step(a)
        n += 1
    return g, n


# ----------------------------------------------------------------------------- registry
def test_make_agent_specs():
    assert isinstance(make_agent("random", 1), RandomAgent)
    assert isinstance(make_agent("greedy", 1), GreedyAgent)
    assert isinstance(make_agent("strategic", 1), StrategicAgent)
    for a in (make_agent(s, 0) for s in SPECS):
        assert isinstance(a, Agent) and a.needs_observation is False


@pytest.mark.parametrize("spec", ["", "alphago", "Random", "policy:"])
def test_make_agent_unknown_spec(spec):
    with pytest.raises(ValueError):
        make_agent(spec, 0)


def test_make_agent_policy_missing_module_is_clear(monkeypatch):
    monkeypatch.setitem(sys.modules, "agents.policy", None)      # as if agents/policy.py were absent
    with pytest.raises(ImportError, match="agents/policy.py"):
        make_agent("policy:runs/x/model.zip", 0)


# ----------------------------------------------------------------------------- robustness
@pytest.mark.parametrize("rules", PRESETS)
def test_agents_finish_games_on_every_preset(rules):
    lineups = [["strategic", "greedy", "random"], ["greedy", "random", "strategic"], ["random", "strategic", "greedy"]]
    for i, specs in enumerate(lineups):
        g, n = play(rules, specs, seed=100 + i)
        assert g.game_over and n <= max_actions_per_game(g.rules)
        assert len(g.round_scores) >= g.rules.rounds


@pytest.mark.parametrize("rules", ["pagat", "bicycle"])
def test_strategic_self_play_never_stalls(rules):
    for seed in range(3):
        g, _ = play(rules, ["strategic"], seed=seed)
        assert g.game_over


def test_agents_are_deterministic_given_seeds():
    a, _ = play("pagat", ["random", "strategic"], seed=11)
    b, _ = play("pagat", ["random", "strategic"], seed=11)
    assert a.history == b.history and a.scores == b.scores


def test_heuristic_game_is_fast():
    t = time.perf_counter()
    play("pagat", ["strategic", "greedy"], seed=5)
    assert time.perf_counter() - t < 2.0       # typically ~0.04 s


def test_act_rejects_a_seat_that_is_not_to_act():
    g = Game("pagat")
    g.reset(seed=1)
    other = (g.current + 1) % g.n
    for spec in SPECS:
        a = make_agent(spec, 0)
        a.reset(other, g.rules, 0)
        with pytest.raises(ValueError):
            a.act(None, seat_view(g, other))


# ----------------------------------------------------------------------------- hidden state
def _perturb_hidden(g: Game, seat: int, rng: random.Random) -> Game:
    """A clone that differs from ``g`` only in cards ``seat`` cannot see."""
    h = g.clone()
    hidden = []       # count lists the seat cannot see: other hands, and every unpicked foot (its own too)
    for q in range(h.n):
        if q != seat:
            hidden.append(h.hands[q])
        if h.feet[q] is not None:
            hidden.append(h.feet[q])
    # swap random cards between hidden count lists and the stock (keeping sizes)
    for _ in range(20):
        src = rng.choice(hidden)
        kinds = [k for k in range(NUM_KINDS) if src[k]]
        if not kinds or not h.stock:
            continue
        k = rng.choice(kinds)
        i = rng.randrange(len(h.stock))
        src[k] -= 1
        src[h.stock[i]] += 1
        h.stock[i] = k
    rng.shuffle(h.stock)
    return h


def test_view_ignores_hidden_cards_and_stock_order():
    rng = random.Random(0)
    checked = {"n": 0, "changed": 0}

    def check(g, p, v):
        if rng.random() > 0.2:
            return
        h = _perturb_hidden(g, p, rng)
        # the world really differs
        if h.stock != g.stock or any(a != b for q, (a, b) in enumerate(zip(h.hands, g.hands)) if q != p):
            checked["changed"] += 1
        v2 = seat_view(h, p)
        assert v2 == v
        for spec in SPECS:
            a1, a2 = make_agent(spec, 3), make_agent(spec, 3)
            a1.reset(p, g.rules, 9)
            a2.reset(p, g.rules, 9)
            assert a1.act(None, v) == a2.act(None, v2)
        checked["n"] += 1

    for rules in ("pagat", "six_player"):
        play(rules, ["strategic", "greedy"], seed=21, check=check)
    assert checked["n"] > 50 and checked["changed"] > 0


def test_view_contents():
    g = Game("pagat")
    g.reset(seed=4)
    p = g.current
    v = seat_view(g, p)
    assert isinstance(v, SeatView)
    assert v.hand == tuple(g.hands[p]) and v.in_foot is False
    assert v.hand_sizes == tuple(sum(h) for h in g.hands)
    assert v.foot_sizes == (13,) * 4 and v.foot_picked_up == (False,) * 4
    assert v.stock_size == len(g.stock) and v.discard == tuple(g.discard)
    assert len(v.melds) == 2 and len(v.melds[0]) == NUM_SLOTS
    assert v.legal_actions == tuple(g.legal_actions()) and v.to_act
    assert v.legal_names[0] == "draw"
    other = seat_view(g, (p + 1) % 4)
    assert other.legal_actions == () and not other.to_act
    assert other.hand == tuple(g.hands[(p + 1) % 4])
    # the view holds no field with another player's cards or the stock
    names = {f.name for f in dataclasses.fields(SeatView)}
    assert not names & {"hands", "feet", "stock"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.seat = 3  # type: ignore[misc]
    with pytest.raises(ValueError):
        seat_view(g, 4)


# ----------------------------------------------------------------------------- scenarios
def _set_hand(g: Game, p: int, codes):
    g.hands[p] = counts_of(codes)


def _meld_state(rules="pagat", seed=3):
    """A game in the meld phase of player 0 with an opened team (cards are then set by the test)."""
    g = Game(rules)
    g.reset(seed=seed)
    g.phase = MELD_PHASE
    g.current = g.turn_player = 0
    g.opened = [True, True]
    g.discard = [0]
    return g


def _act(agent_cls, g, p=0, **kw):
    a = agent_cls(0, **kw) if kw else agent_cls(0)
    a.reset(p, g.rules, 0)
    return a.act(None, seat_view(g, p))


def test_strategic_puts_wilds_in_the_wild_meld_not_a_natural_meld():
    g = _meld_state()
    _set_hand(g, 0, ["K", "K", "K", "2", "2", "JK", "5", "9"])
    g.melds[0][9] = [4, 0, 0]                  # an unfinished K meld: the kings go there first
    assert _act(StrategicAgent, g) == MELD_ACTION[(9, 3, 0, 0)]
    g.hands[0] = counts_of(["2", "2", "JK", "5", "9"])
    g.melds[0][9] = [0, 0, 0]
    g.books[0] = [(9, 7, 0, 0)]
    assert _act(StrategicAgent, g) == MELD_ACTION[(WILD_SLOT, 0, 2, 1)]
    # greedy prefers the meld with the most cards, wilds included
    g2 = _meld_state()
    _set_hand(g2, 0, ["K", "K", "K", "2", "5", "9"])
    assert _act(GreedyAgent, g2) == MELD_ACTION[(9, 3, 1, 0)]


def test_strategic_opens_with_naturals_before_wilds():
    g = _meld_state()
    g.opened = [False, False]
    g.minimum = 50
    _set_hand(g, 0, ["A", "A", "A", "JK", "2", "6", "7", "9"])
    assert _act(StrategicAgent, g) == MELD_ACTION[(10, 3, 0, 0)]        # three aces = 60 >= 50


def test_strategic_discards_black_three_on_a_valuable_pile():
    g = _meld_state()
    _set_hand(g, 0, ["3B", "8", "Q", "K", "K", "JK"])
    g.discard = [0, 4, 5, 6, 11, 8, 9]        # a pile worth taking
    assert _act(StrategicAgent, g) == DISCARD_ACTION[BLACK3]


def test_strategic_answer_depends_on_its_own_cards():
    g = _meld_state()
    g.phase = ANSWER_PHASE
    g.asked = True
    g.turn_player = 0
    g.current = 2                              # the partner answers
    g.feet = [None, [0] * NUM_KINDS, None, [0] * NUM_KINDS]
    g.hands[1] = counts_of(["4"] * 3)
    g.hands[3] = counts_of(["4"] * 3)
    _set_hand(g, 2, ["5"])
    assert _act(StrategicAgent, g, p=2) == ANSWER_YES
    _set_hand(g, 2, ["JK", "JK", "A", "A", "K", "Q", "J", "10", "9", "2", "2"])
    assert _act(StrategicAgent, g, p=2) == ANSWER_NO
    assert _act(GreedyAgent, g, p=2) == ANSWER_YES


def test_greedy_takes_the_pile_when_it_can():
    g = Game("pagat")
    g.reset(seed=2)
    p = g.current
    g.opened = [True, True]
    g.discard.append(0)                        # a 4 on top; the player holds two 4s
    _set_hand(g, p, ["4", "4", "9", "K", "A"])
    legal = g.legal_actions()
    assert PICKUP in legal and DRAW in legal
    assert _act(GreedyAgent, g, p=p) == PICKUP


def test_plan_meld_out():
    rules = load_rules("pagat")
    empty = [[0, 0, 0] for _ in range(NUM_SLOTS)]
    # three kings and a discard: all but one card can go
    left, books = plan_meld_out(counts_of(["K", "K", "K", "5"]), empty, rules)
    assert left == 1 and books == [0, 0, 0]
    # a pair plus a wild, and four onto a meld of three: a clean book
    melds = [m[:] for m in empty]
    melds[0] = [3, 0, 0]
    left, books = plan_meld_out(counts_of(["4", "4", "4", "4", "9", "9", "2"]), melds, rules)
    assert left == 0 and books == [1, 0, 0]
    # black threes never meld; a lone natural without wilds cannot
    left, _ = plan_meld_out(counts_of(["3B", "3B", "7"]), empty, rules)
    assert left == 3
    # seven wilds: a wild book
    left, books = plan_meld_out(counts_of(["2"] * 4 + ["JK"] * 3), empty, rules)
    assert left == 0 and books == [0, 0, 1]


def test_random_agent_is_uniform_over_legal():
    g = Game("pagat")
    g.reset(seed=1)
    a = RandomAgent(0)
    a.reset(g.current, g.rules, 123)
    v = seat_view(g, g.current)
    picks = {a.act(None, v) for _ in range(50)}
    assert picks <= set(v.legal_actions) and len(picks) == len(v.legal_actions)


def test_phases_are_handled():
    """Every agent returns a legal action in draw, meld and answer phases of a real game."""
    seen = set()

    def check(g, p, v):
        seen.add(v.phase)

    play("pagat", ["strategic", "greedy"], seed=8, check=check)
    assert {DRAW_PHASE, MELD_PHASE} <= seen


def test_the_policy_networks_numpy_and_torch_paths_agree():
    """agents/policy.py holds a policy network's forward pass: NumPy for one observation, torch for many
    (the samplers and the search rollouts); the two agree within float32 rounding, and the torch path's
    greedy choice (its last layer only for the legal columns) is the NumPy argmax over the legal logits."""
    from agents.policy import NumpyPolicy, TorchPolicy, load_actor
    from agents.registry import SHIPPED
    from handfoot_env.observation import encode_observation
    w = load_actor(Path(agents.__file__).parent / SHIPPED["champion"])
    numpy_pol, torch_pol = NumpyPolicy(w), TorchPolicy(w)
    g, rng, rows, masks = Game("pagat"), random.Random(5), [], []
    g.reset(seed=5)
    while len(rows) < 60 and not g.game_over:
        legal = g.legal_actions()
        if len(legal) > 1:
            rows.append(encode_observation(g, g.current, legal))
            m = np.zeros(NUM_ACTIONS, np.int8)
            m[legal] = 1
            masks.append(m)
        g.apply_legal(rng.choice(legal))
    obs, mask = np.stack(rows).astype(np.float32), np.stack(masks)
    z_np = numpy_pol.logits(obs)
    np.testing.assert_allclose(torch_pol.logits(obs), z_np, rtol=1e-4, atol=1e-4)
    best = torch_pol.best(obs, mask)
    legal_z = np.where(mask > 0, z_np, -np.inf)
    top2 = np.sort(legal_z, axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 1e-3                     # rows whose best action no rounding can change
    assert clear.sum() > 40
    assert (best[clear] == legal_z.argmax(axis=1)[clear]).all()
