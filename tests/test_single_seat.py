"""The single-seat Gymnasium env: env checkers, MaskablePPO, rewards equal to the AEC env's, seeding."""
from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest

from handfoot_env import SINGLE_SEAT_ID, IllegalActionError, handfoot_v0, single_seat_v0
from handfoot_env.engine import GAME_OVER
from handfoot_env.observation import mask_of


def _play(env, seed, steps=None):
    """A whole episode with the space's own (masked) samples; the rewards and the last info."""
    obs, info = env.reset(seed=seed)
    rewards, done, n = [], False, 0
    while not done and (steps is None or n < steps):
        assert env.observation_space.contains(obs)
        assert np.array_equal(info["action_mask"], env.unwrapped.action_masks())
        obs, r, term, trunc, info = env.step(env.action_space.sample())
        rewards.append(r)
        done, n = term or trunc, n + 1
    return rewards, info


def test_gymnasium_check_env_is_clean():
    from gymnasium.utils.env_checker import check_env
    env = gymnasium.make(SINGLE_SEAT_ID, partner="random", opponents="random", render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


def test_sb3_check_env_is_clean():
    from stable_baselines3.common.env_checker import check_env
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(single_seat_v0.env(partner="random", opponents="greedy"))


def test_maskable_ppo_trains_on_it():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    env = gymnasium.make(SINGLE_SEAT_ID, partner="random", opponents="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [32]})
    model.learn(192)
    assert model.num_timesteps >= 192
    obs, info = env.reset(seed=1)
    for _ in range(30):
        masks = get_action_masks(env)
        a, _ = model.predict(obs, action_masks=masks)
        assert masks[int(a)]
        obs, r, term, trunc, info = env.step(a)
        if term or trunc:
            break


def test_registered_and_importable_without_agents_until_a_spec_is_built():
    code = ("import sys, gymnasium, handfoot_env\n"
            "from handfoot_env import single_seat_v0\n"
            "from agents_free import RandomLegal\n"
            "e = single_seat_v0.env(partner=RandomLegal, opponents=[RandomLegal(1), RandomLegal(2)])\n"
            "e.reset(seed=0)\n"
            "print('agents' in sys.modules, end=' ')\n"
            "e = gymnasium.make('handfoot/SingleSeat-v0', partner='random', opponents='greedy')\n"
            "print('agents' in sys.modules)\n")
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[1]
    helper = ("import random\n"
              "class RandomLegal:\n"
              "    def __init__(self, seed=0): self.rng = random.Random(seed)\n"
              "    def reset(self, seat, rules, seed): self.rng = random.Random(seed)\n"
              "    def act(self, observation, view): return self.rng.choice(view.legal_actions)\n")
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        pathlib.Path(tmp, "agents_free.py").write_text(helper)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                              env={**__import__("os").environ, "PYTHONPATH": f"{root}:{tmp}"}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True"]


def test_rewards_equal_what_the_aec_env_pays_the_seat():
    env = single_seat_v0.env(seat=1, partner="greedy", opponents="random")
    rewards, info = _play(env, seed=5)
    game = env.unwrapped.game
    assert game.phase == GAME_OVER and info["winner"] == game.winner and info["scores"] == list(game.scores)
    aec = handfoot_v0.raw_env()
    aec.reset(seed=game.seed)
    total = 0.0
    for _, a in game.history:
        aec.step(a)
        total += aec.rewards["player_1"]
    assert sum(rewards) == pytest.approx(total)
    assert total != 0


def test_seeded_episodes_repeat_and_reset_without_seed_moves_on():
    env = single_seat_v0.env(partner="greedy", opponents="greedy")
    a, _ = _play(env, seed=11, steps=60)
    first = env.unwrapped.game.history[:]
    b, _ = _play(env, seed=11, steps=60)
    assert a == b and env.unwrapped.game.history == first
    env.reset()
    assert env.unwrapped.game.history[:len(first)] != first


def test_mask_is_the_engine_legal_list_and_illegal_actions_are_refused():
    env = single_seat_v0.env(partner="random", opponents="random")
    obs, info = env.reset(seed=3)
    legal = env.unwrapped.game.legal_actions()
    assert np.array_equal(info["action_mask"], mask_of(legal))
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        env.step(illegal)


def test_other_rule_sets_and_seats():
    env = single_seat_v0.env(seat=2, rules="individual", partner=None, opponents="random")
    _play(env, seed=0, steps=30)
    env = single_seat_v0.env(seat=5, rules="six_player", partner="random", opponents="random", episode="round")
    rewards, info = _play(env, seed=0)
    assert env.unwrapped.game.round_scores and "winner" in info


@pytest.mark.parametrize("kwargs, message", [
    ({"seat": 4}, "seat must be an integer from 0 to 3"),
    ({"partner": None}, "partner: seat 0 has partners"),
    ({"opponents": ["random"]}, "opponents: 1 given for the 2 opponent seats"),
    ({"opponents": "nosuchagent"}, "opponents:"),
    ({"partner": 42}, "partner: 42 is not an agent spec"),
    ({"partner": "strategic(nope=1)"}, r"partner: agent spec 'strategic\(nope=1\)': StrategicAgent: unknown"),
])
def test_bad_arguments_are_one_clear_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        single_seat_v0.env(**kwargs)


def test_specs_with_arguments_set_the_agents_they_build():
    env = single_seat_v0.env(partner="strategic(draw_worth=1.5)", opponents=["greedy", "strategic(wilds=spend)"])
    env.reset(seed=0)
    partner, _, rival = env.players[2], env.players[1], env.players[3]
    assert partner.p["draw_worth"] == 1.5 and rival.p["wilds"] == "spend"
    _play(env, seed=0, steps=30)


def test_one_agent_object_cannot_hold_two_seats():
    from agents.heuristics import RandomAgent
    with pytest.raises(ValueError, match="one agent object cannot play several seats"):
        single_seat_v0.env(partner="random", opponents=RandomAgent(0))
    single_seat_v0.env(partner=RandomAgent(0), opponents=[RandomAgent(1), RandomAgent(2)]).reset(seed=0)


def test_step_after_the_end_asks_for_reset():
    env = single_seat_v0.env(partner="random", opponents="random", episode="round")
    _play(env, seed=2)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)
    assert not env.action_masks().any()
