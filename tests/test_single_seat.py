"""The single-seat Gymnasium env: env checkers, MaskablePPO, rewards equal to the AEC env's, seeding."""
from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest

from handfoot_env import SINGLE_SEAT_ID, IllegalActionError, handfoot_v0, single_seat_v0
from handfoot_env.config import PRESET_NAMES, load_rules
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


PAIRS = [(preset, seat) for preset in PRESET_NAMES for seat in range(load_rules(preset).players)]


def _seat_env(preset, seat, **kwargs):
    """``gymnasium.make`` of ``seat`` under ``preset`` against random agents (no partner where there is none)."""
    rules = load_rules(preset)
    partner = None if rules.teams == rules.players else "random"
    return gymnasium.make(SINGLE_SEAT_ID, seat=seat, rules=preset, partner=partner, opponents="random", **kwargs)


@pytest.mark.parametrize("preset, seat", PAIRS)
def test_gymnasium_check_env_is_clean_for_every_seat(preset, seat):
    from gymnasium.utils.env_checker import check_env
    env = _seat_env(preset, seat)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)


def test_gymnasium_check_env_renders_every_mode():
    from gymnasium.utils.env_checker import check_env
    env = _seat_env("pagat", 1, render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


@pytest.mark.parametrize("preset, seat", PAIRS)
def test_sb3_check_env_is_clean_for_every_seat(preset, seat):
    from stable_baselines3.common.env_checker import check_env
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(_seat_env(preset, seat).unwrapped)


def test_the_checkers_step_is_an_action_sampled_before_the_reset():
    """Why the default ends the episode on an illegal action: Gymnasium's check_env steps with an action
    the space drew in another state (it resets in between), which the rules may not allow after the reset."""
    env = single_seat_v0.env(seat=1, partner="random", opponents="random", illegal_action="raise")
    env.reset(seed=1)
    env.step(env.action_space.sample())
    env.action_space.seed(123)
    stale = env.action_space.sample()
    env.reset(seed=123)
    with pytest.raises(IllegalActionError, match="illegal action"):
        env.step(stale)


def test_maskable_ppo_trains_on_it():
    """On a vector env whose episodes end every few decisions (reset inside SB3's step), strict about
    illegal actions: an all-zero mask in a state it acts in would have it sample an illegal one."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_util import make_vec_env
    vec = make_vec_env(SINGLE_SEAT_ID, n_envs=2, seed=0, env_kwargs={
        "partner": "random", "opponents": "random", "max_actions": 60, "illegal_action": "raise"})
    model = MaskablePPO("MlpPolicy", vec, n_steps=64, batch_size=32, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [32]})
    model.learn(128)                                # one rollout of 2 x 64 decisions, one update
    assert model.num_timesteps >= 128 and len(model.ep_info_buffer) >= 4
    env = gymnasium.make(SINGLE_SEAT_ID, partner="random", opponents="random")
    obs, info = env.reset(seed=1)
    for _ in range(30):
        masks = get_action_masks(env)
        a, _ = model.predict(obs, action_masks=masks)
        assert masks[int(a)]
        obs, r, term, trunc, info = env.step(a)
        assert "illegal_action" not in info
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
    env = single_seat_v0.env(partner="random", opponents="random", illegal_action="raise")
    obs, info = env.reset(seed=3)
    legal = env.unwrapped.game.legal_actions()
    assert np.array_equal(info["action_mask"], mask_of(legal))
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    before = list(env.unwrapped.game.history)
    with pytest.raises(IllegalActionError, match="illegal action '"):
        env.step(illegal)
    assert env.unwrapped.game.history == before


@pytest.mark.parametrize("core", ["reference", "compiled"])
def test_an_illegal_action_ends_the_episode_by_default(core):
    env = single_seat_v0.env(seat=1, partner="random", opponents="random", core=core, episode="round")
    obs, info = env.reset(seed=3)
    before = list(env.unwrapped.game.history)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    obs, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["illegal_action"].startswith("illegal action ") and info["winner"] is None
    assert env.unwrapped.game.history == before            # the game did not move
    assert not info["action_mask"].any() and not env.unwrapped.action_masks().any()
    assert env.observation_space.contains(obs)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(int(np.flatnonzero(env.unwrapped.game.legal_actions())[0]))


@pytest.mark.parametrize("illegal_action", ["terminate", "raise"])
@pytest.mark.parametrize("action, message", [
    ("draw", "an action is an integer from 0 to 704"), (3.0, "got float"), (705, "from 0 to 704"),
    (-1, "from 0 to 704"), (True, "got bool"), (np.array([1, 2]), "got ndarray"), (None, "got NoneType")])
def test_what_is_not_an_action_id_is_always_an_error(illegal_action, action, message):
    env = single_seat_v0.env(partner="random", opponents="random", illegal_action=illegal_action)
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=message):
        env.step(action)
    env.step(np.array(int(np.flatnonzero(env.unwrapped.action_masks())[0])))   # the episode goes on


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
    ({"core": "fast"}, "core must be 'reference', 'compiled' or 'auto', got 'fast'"),
    ({"illegal_action": "ignore"}, r"illegal_action must be one of \('terminate', 'raise'\), got 'ignore'"),
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


# ------------------------------------------------------------------ the two cores
def _episode(core, preset, seat, seed, **kwargs):
    """Every return of one episode: the learner plays the space's own samples (seeded by reset)."""
    rules = load_rules(preset)
    partner = None if rules.teams == rules.players else "greedy"
    env = single_seat_v0.env(seat=seat, rules=preset, partner=partner, opponents="random", core=core, **kwargs)
    out = [env.reset(seed=seed)]
    while True:
        out.append(env.step(env.action_space.sample()))
        if out[-1][2] or out[-1][3]:
            return out, env


ROUND = {"episode": "round"}


@pytest.mark.parametrize("preset, seat, seed, kwargs", [
    ("pagat", 0, 0, ROUND), ("pagat", 3, 1, ROUND), ("six_player", 4, 2, ROUND), ("individual", 2, 3, ROUND),
    ("bicycle", 1, 4, ROUND), ("saskatchewan", 2, 5, ROUND), ("pagat", 2, 6, {"reward": "game_win"}),
    ("pagat", 1, 7, {"max_actions": 150})])
def test_both_cores_play_the_same_episode(preset, seat, seed, kwargs):
    from gymnasium.utils.env_checker import data_equivalence
    ref, ref_env = _episode("reference", preset, seat, seed, **kwargs)
    com, com_env = _episode("compiled", preset, seat, seed, **kwargs)
    assert com_env.core == "compiled" and type(com_env.game).__name__ == "CompiledGame"
    assert len(ref) == len(com) > 10
    assert ref[-1][3] == ("max_actions" in kwargs)                      # truncated at the cap, else ended
    assert any(step[1] != 0 for step in ref[1:]) != ("max_actions" in kwargs)   # a paid round or game
    for r, c in zip(ref, com):
        assert data_equivalence(r, c, exact=True)      # observations, rewards, ends, infos (masks)
    assert ref_env.game.history == com_env.game.history
    assert ref_env.render_mode is None and com_env.game.reference().history == ref_env.game.history


def test_the_default_core_is_the_compiled_one_where_numba_is_installed(monkeypatch):
    from gymnasium.utils.env_checker import data_equivalence
    monkeypatch.delenv("HANDFOOT_CORE", raising=False)
    assert single_seat_v0.env(partner="random", opponents="random").core == "compiled"
    assert single_seat_v0.env(partner="random", opponents="random", core="auto").core == "compiled"
    monkeypatch.setenv("HANDFOOT_CORE", "reference")                  # what "auto" means, as for the AEC env
    assert single_seat_v0.env(partner="random", opponents="random").core == "reference"
    monkeypatch.delenv("HANDFOOT_CORE")
    env = gymnasium.make(SINGLE_SEAT_ID, partner="random", opponents="random", core="reference",
                         render_mode="ansi")
    assert env.unwrapped.core == "reference"
    compiled = gymnasium.make(SINGLE_SEAT_ID, partner="random", opponents="random", render_mode="ansi")
    assert data_equivalence(env.reset(seed=2), compiled.reset(seed=2), exact=True)
    assert env.render() == compiled.render()


# ------------------------------------------------------------------ masks
def test_every_way_to_read_the_mask_through_gymnasium_make():
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from sb3_contrib.common.wrappers import ActionMasker
    env = gymnasium.make(SINGLE_SEAT_ID, partner="random", opponents="random")
    obs, info = env.reset(seed=5)
    mask = info["action_mask"]
    assert mask.dtype == np.int8 and mask.any()
    assert np.array_equal(env.action_masks(), mask)                       # the outermost layer's
    assert np.array_equal(env.unwrapped.action_masks(), mask)
    assert np.array_equal(env.get_wrapper_attr("action_masks")(), mask)
    assert is_masking_supported(env) and np.array_equal(get_action_masks(env), mask)
    wrapped = gymnasium.wrappers.RecordEpisodeStatistics(env)            # a user's wrapper on top
    assert np.array_equal(get_action_masks(wrapped), mask)
    masker = ActionMasker(wrapped, lambda e: e.unwrapped.action_masks())
    assert np.array_equal(masker.action_masks(), mask)
    assert env.spec.additional_wrappers[-1].name == "ActionMasks"
    again = env.spec.make()                                               # the spec makes it again
    assert np.array_equal(again.reset(seed=5)[1]["action_mask"], mask)


def test_a_terminal_observation_has_no_legal_action():
    env = single_seat_v0.env(partner="random", opponents="random", episode="round", max_actions=80)
    obs, info = env.reset(seed=9)
    assert not single_seat_v0.env(partner="random", opponents="random").action_masks().any()  # before reset
    done = False
    while not done:
        assert info["action_mask"].any()                                  # every state it acts in has one
        obs, r, term, trunc, info = env.step(env.action_space.sample())
        done = term or trunc
    assert trunc and info["truncated"]
    assert not info["action_mask"].any() and not env.action_masks().any()
    assert env.observation_space.contains(obs)


def test_sb3_vector_envs_give_maskable_ppo_a_mask_with_a_legal_action_at_every_step():
    """SB3's vector envs reset an ended episode inside step: the masks MaskablePPO reads next are the new
    episode's, never the terminal state's zeros."""
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_util import make_vec_env
    vec = make_vec_env(SINGLE_SEAT_ID, n_envs=2, seed=3, env_kwargs={
        "partner": "random", "opponents": "random", "max_actions": 60, "illegal_action": "raise"})
    vec.reset()
    rng, ends = np.random.default_rng(0), 0
    for _ in range(120):
        masks = get_action_masks(vec)
        assert masks.shape == (2, 705) and masks.any(axis=1).all()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, _, dones, infos = vec.step(actions)
        for i in np.flatnonzero(dones):
            ends += 1
            assert not infos[i]["action_mask"].any()                      # the terminal step's info
            assert np.array_equal(vec.reset_infos[i]["action_mask"], get_action_masks(vec)[i])
    assert ends >= 4


def test_a_cap_reached_before_the_learner_s_first_decision_is_refused_at_reset():
    env = single_seat_v0.env(seat=3, partner="random", opponents="random", max_actions=4)
    with pytest.raises(ValueError, match=r"max_actions=4 is reached before seat 3 first acts \(deal \d+\)"):
        env.reset(seed=0)
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError, match="call reset"):     # no move is played for another seat
        env.step(0)
