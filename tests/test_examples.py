"""The examples under examples/ run: CleanRL-style PPO on the single-seat env, TorchRL, Tianshou and
RLlib on the AEC env.

TorchRL and Tianshou come with the ``examples`` extra, RLlib with the ``ray`` extra (scripts/test.sh
installs both); the main job's install has none of them, so their tests are skipped there.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

from handfoot_env.observation import observation_scale

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cleanrl_ppo_trains_on_the_single_seat_env():
    ex = _load("cleanrl_ppo")
    torch.manual_seed(0)
    before = [p.detach().clone() for p in ex.Agent(170, 705).parameters()]
    out = ex.train(total_timesteps=128, num_envs=2, num_steps=32, partner="random", opponents="random",
                   num_minibatches=2, update_epochs=1, verbose=False)
    assert out["steps"] == 128 and len(out["history"]) == 2
    assert all(abs(h["v_loss"]) < 1e6 and h["entropy"] > 0 for h in out["history"])
    assert any(not torch.equal(a, b) for a, b in zip(before, out["agent"].parameters()))


def test_torchrl_pettingzoo_wrapper_with_a_masked_policy():
    pytest.importorskip("torchrl")
    ex = _load("torchrl_pettingzoo")
    s = ex.main(steps=150, seed=0)
    assert s["steps"] == 150 and s["decisions"] == 150      # one player acts per step
    assert s["illegal"] == 0


def test_tianshou_pettingzoo_env_collects_whole_games_with_masked_policies():
    pytest.importorskip("tianshou")
    ex = _load("tianshou_pettingzoo")
    s = ex.main(games=1, seed=0, updates=2)
    assert s["games"] == 1 and s["steps"] > 100
    assert s["illegal"] == 0 and s["weights_changed"]


def test_rllib_pettingzoo_env_gives_each_seat_its_aec_return_and_one_observation_per_turn():
    pytest.importorskip("ray.rllib")
    ex = _load("rllib_pettingzoo")
    env = ex.make_env()
    space = env.observation_spaces["player_0"]
    assert set(space.spaces) == {ex.OBS_KEY, "action_mask"} and space[ex.OBS_KEY].shape == (170,)
    rng = np.random.default_rng(3)
    obs, _ = env.reset(seed=5)
    raw = env.env.unwrapped
    (first, o), = obs.items()
    assert np.array_equal(o[ex.OBS_KEY], raw.observe(first)["observation"] * observation_scale(4, 2))
    totals = dict.fromkeys(env.possible_agents, 0.0)
    steps = 0
    while True:
        assert len(obs) == 1, "turn-based: only the player to act observes"
        (agent, o), = obs.items()
        assert space.contains(o) and o["action_mask"].any()
        obs, rew, term, trunc, _ = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        steps += 1
        for a, r in rew.items():
            totals[a] += r
        if term["__all__"] or trunc["__all__"]:
            break
    assert term["__all__"] and not trunc["__all__"] and steps > 100
    assert set(obs) == set(env.possible_agents), "at game end every seat gets its last observation"
    scores = raw.state_dict()["scores"]
    assert raw.state_dict()["game_over"] and len(raw.state_dict()["round_scores"]) == raw.rules.rounds
    for a in env.possible_agents:     # the default reward: own team's score minus the other's, / 1000
        team = raw.game.team_of[raw.agent_name_mapping[a]]
        assert totals[a] == pytest.approx((scores[team] - scores[1 - team]) * raw.reward_scale)


@pytest.mark.parametrize("as_numpy", [False, True])
def test_rllib_pettingzoo_illegal_action_count_sees_an_action_its_mask_forbade(as_numpy):
    pytest.importorskip("ray.rllib")
    from types import SimpleNamespace

    from ray.rllib.env.single_agent_episode import SingleAgentEpisode
    from ray.rllib.utils.metrics.metrics_logger import MetricsLogger
    ex = _load("rllib_pettingzoo")

    def obs(*legal):
        mask = np.zeros(705, dtype=np.int8)
        mask[list(legal)] = 1
        return {ex.OBS_KEY: np.zeros(170, dtype=np.float32), "action_mask": mask}

    # player_0 takes 1 (legal), then 4 where only 3 is legal; player_1 has observed but not acted yet
    played = SingleAgentEpisode(observations=[obs(0, 1), obs(3), obs(5)], actions=[1, 4], rewards=[0.0, 0.0],
                                len_lookback_buffer=0)
    waiting = SingleAgentEpisode(observations=[obs(2)], len_lookback_buffer=0)
    if as_numpy:
        played.to_numpy()
    metrics = MetricsLogger()
    ex.CountIllegal().on_sample_end(metrics_logger=metrics, samples=[
        SimpleNamespace(agent_episodes={"player_0": played, "player_1": waiting})])
    assert metrics.peek("actions_checked") == 2 and metrics.peek("illegal_actions") == 1


def test_rllib_pettingzoo_ppo_trains_one_masked_policy_on_all_four_seats():
    pytest.importorskip("ray.rllib")
    ex = _load("rllib_pettingzoo")
    s = ex.main(iterations=2, seed=0, batch=128)
    assert s["iterations"] == 2 and s["env_steps"] == 256
    assert s["actions_checked"] > 200 and s["illegal"] == 0
    assert s["module_steps_trained"] >= 256 and s["weights_changed"]
    assert all(np.isfinite(s[k]) for k in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss"))
    assert s["entropy"] > 0
