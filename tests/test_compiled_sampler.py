"""The batched samplers on the compiled core (``batched: {core: compiled}``) give exactly the samples of
the reference engine for the same seed: observations, masks, actions, log-probabilities, rewards, links,
traces and the finished games' statistics, rollout after rollout."""
from __future__ import annotations

import numpy as np
import pytest
import torch as th

from experiments.config import ConfigError
from experiments.training.batched_ppo import ActorCritic, actor_weights
from experiments.training.compiled_sampler import CompiledSampler
from experiments.training.sampler import Sampler
from experiments.training.sampler_group import make_sampler

pytest.importorskip("numba")


def _actor(seed: int, centralised: bool = False, q: bool = False):
    th.manual_seed(seed)
    if q:
        from experiments.training.dmc import QNetwork, q_weights
        return q_weights(QNetwork(4, 2, [16], "tanh"))
    return actor_weights(ActorCritic(4, 2, [16], [16], centralised_critic=centralised))


def _assert_same(a, b, where):
    assert sorted(a) == sorted(b), where
    for key in a:
        if isinstance(a[key], np.ndarray):
            np.testing.assert_array_equal(a[key], b[key], err_msg=f"{where}: {key}")
        else:
            assert a[key] == b[key], f"{where}: {key}"


CASES = [   # (rules, sampler settings, rollouts of 300 decisions): whole games, then cut ones (bootstraps)
    ("pagat", dict(opponents={"random": 1.0, "greedy": 1.0, "self": 1.0, "self_snapshots": 1.0}), 5),
    ("pagat", dict(opponents={"strategic": 1.0, "random": 1.0}, reward="game_win", max_actions=150), 2),
    ("bicycle", dict(opponents={"random": 1.0, "self_snapshots": 1.0}, shaping_books=0.1, shaping_points=0.5,
                     centralised_critic=True, max_actions=250), 2),
    ("six_player", dict(opponents={"greedy": 1.0, "self": 1.0}, max_actions=250), 2),
]


@pytest.mark.parametrize("rules,kw,rollouts", CASES, ids=[c[0] + "-" + "+".join(c[1]["opponents"]) for c in CASES])
def test_compiled_sampler_gives_the_reference_samples(rules, kw, rollouts):
    centralised = kw.get("centralised_critic", False)
    learner, snap = _actor(1, centralised), _actor(2)
    ref = Sampler(rules, games=2, seed=11, **kw)
    comp = CompiledSampler(rules, games=2, seed=11, **kw)
    games = 0
    for r in range(rollouts):
        snaps = [snap] if r == 0 else None
        a = ref.rollout(300, learner, snaps)
        b = comp.rollout(300, learner, snaps)
        _assert_same(a, b, f"{rules} rollout {r}")
        games += len(a["games"])
    assert games >= 1                    # the games' ends (rewards, statistics, new deals) were compared too
    for g_ref, g_comp in zip(ref.games, comp.games):
        assert g_ref.history == g_comp.history


def test_compiled_sampler_serves_an_action_value_learner():
    """DMC's sampler (epsilon-greedy action values over action features) on both cores."""
    q = _actor(3, q=True)
    kw = dict(opponents={"random": 1.0, "self": 1.0}, epsilon=0.1)
    a = Sampler("pagat", games=4, seed=5, **kw).rollout(300, q)
    b = CompiledSampler("pagat", games=4, seed=5, **kw).rollout(300, q)
    _assert_same(a, b, "dmc")


def test_core_names_a_sampler_and_bad_names_are_one_line_errors(tmp_path):
    assert type(make_sampler(core="reference", rules="pagat", games=1, seed=0, opponents={"random": 1})) is Sampler
    assert type(make_sampler(core="compiled", rules="pagat", games=1, seed=0, opponents={"random": 1})) \
        is CompiledSampler
    assert type(make_sampler(rules="pagat", games=1, seed=0, opponents={"random": 1})) is CompiledSampler
    from tests.test_batched_ppo import tiny_config
    with pytest.raises(ConfigError, match="batched.core: core must be"):
        tiny_config(tmp_path, batched={"core": "fast"})
    assert tiny_config(tmp_path, batched={"core": "reference"}).batched.core == "reference"


@pytest.mark.parametrize("rules", ["pagat", "bicycle", "six_player", "individual"])
def test_seat_view_read_from_the_row_is_the_reference_view(rules):
    """What heuristic seats of the compiled sampler see: every seat's view, every third step of random play."""
    import random

    from handfoot_env.compiled import load
    from handfoot_env.view import seat_view
    rng = random.Random(4)
    g = load().CompiledGame(rules)
    checked = 0
    for seed in (1, 2):
        g.reset(seed=seed)
        while not g.game_over and g.action_count < 900:
            if g.action_count % 3 == 0:
                ref = g.reference()
                for p in range(g.n):
                    assert g.seat_view(p) == seat_view(ref, p), (rules, seed, g.action_count, p)
                    checked += 1
            legal = g.legal_actions()
            g.apply_legal(legal[rng.randrange(len(legal))])
    assert checked > 500


@pytest.mark.parametrize("rules", ["pagat", "bicycle", "six_player", "individual"])
def test_critic_state_read_from_the_row_is_the_reference_state(rules):
    """The centralised critic's input at every decision of the compiled sampler: every other step of
    random play through whole games (feet picked up, rounds ended, a new deal's stock), into a
    buffer that held another state before."""
    import random

    from handfoot_env.compiled import load
    from handfoot_env.observation import encode_state
    rng = random.Random(5)
    g = load().CompiledGame(rules)
    out = None
    checked = rounds = 0
    for seed in (3, 4):
        g.reset(seed=seed)
        while not g.game_over and g.action_count < 1500:
            if g.action_count % 2 == 0:
                want = encode_state(g.reference())
                out = g.encode_state(out)
                assert out.dtype == np.float32 and out.shape == want.shape
                np.testing.assert_array_equal(out, want, err_msg=f"{rules} seed {seed} at {g.action_count}")
                checked += 1
            legal = g.legal_actions()
            g.apply_legal(legal[rng.randrange(len(legal))])
        rounds += g.rounds_finished
    assert checked > 300 and rounds >= 1
