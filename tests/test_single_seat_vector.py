"""The single-seat env in vector envs and worker processes: legal samples from the masks, errors that
reach the parent, the module-qualified id for spawned workers, and what pickling carries."""
from __future__ import annotations

import copy
import functools
import pickle
import subprocess
import sys
import warnings

import cloudpickle
import gymnasium
import numpy as np
import pytest

from handfoot_env import SINGLE_SEAT_ID, IllegalActionError, single_seat_v0
from handfoot_env.single_seat import MaskedDiscrete

QUALIFIED_ID = f"handfoot_env:{SINGLE_SEAT_ID}"
SHORT = {"partner": "random", "opponents": "random", "max_actions": 60, "illegal_action": "raise"}


def _play_masked(envs, steps, seed=0):
    """Step ``envs`` with ``action_space.sample(mask=...)`` from the infos' masks; the episode ends seen."""
    obs, info = envs.reset(seed=seed)
    ends = 0
    for _ in range(steps):
        actions = envs.action_space.sample(mask=tuple(info["action_mask"]))
        obs, reward, terminated, truncated, info = envs.step(actions)
        assert envs.observation_space.contains(obs)
        ends += int(np.sum(terminated | truncated))
    return ends


# ------------------------------------------------------------------ legal samples in vector envs
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_vector_env_samples_legal_actions_with_the_masks_from_info(mode):
    envs = gymnasium.make_vec(SINGLE_SEAT_ID, num_envs=2, vectorization_mode=mode, **SHORT)
    try:
        assert type(envs.action_space) is gymnasium.spaces.MultiDiscrete        # Gymnasium's batch of Discrete
        # illegal_action="raise": one illegal sample would stop the run; autoresets are crossed
        assert _play_masked(envs, 80) >= 4
    finally:
        envs.close()


# ------------------------------------------------------------------ errors from workers
def test_illegal_action_error_pickles_with_its_message_and_fields():
    e = IllegalActionError(4, "the player must draw or take the pile before discarding")
    for copied in (pickle.loads(pickle.dumps(e)), cloudpickle.loads(cloudpickle.dumps(e)), IllegalActionError(e)):
        assert type(copied) is IllegalActionError
        assert str(copied) == str(e) == "illegal action 'ask_go_out': the player must draw or take the pile " \
                                        "before discarding"
        assert (copied.action, copied.reason) == (4, e.reason)
    assert str(IllegalActionError(705)) == "illegal action '705': not allowed now"


def test_an_async_worker_s_illegal_action_reaches_the_parent_as_the_project_s_error():
    envs = gymnasium.vector.AsyncVectorEnv(
        [functools.partial(single_seat_v0.env, seat=1, **SHORT) for _ in range(2)])
    try:
        _, info = envs.reset(seed=0)
        legal = int(np.flatnonzero(info["action_mask"][0])[0])
        illegal = int(np.flatnonzero(info["action_mask"][1] == 0)[0])
        with pytest.raises(IllegalActionError, match=r"^illegal action '[^']+': \S.*") as caught, \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")        # Gymnasium logs the worker's traceback as warnings
            envs.step(np.array([legal, illegal]))
        assert caught.value.action == illegal and caught.value.reason
    finally:
        envs.close(terminate=True)


# ------------------------------------------------------------------ spawned workers
def test_the_module_qualified_id_imports_the_package_in_a_fresh_interpreter():
    code = ("import gymnasium, sys\n"
            "try:\n"
            f"    gymnasium.make({SINGLE_SEAT_ID!r})\n"
            "except gymnasium.error.NamespaceNotFound:\n"
            "    print('not found', end=' ')\n"
            f"env = gymnasium.make({QUALIFIED_ID!r}, partner='random', opponents='random', core='reference')\n"
            "print(env.reset(seed=0)[1]['action_mask'].sum() > 0, 'handfoot_env' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["not", "found", "True", "True"]


@pytest.mark.parametrize("vector", ["sync", "async-spawn"])
def test_vector_envs_make_the_qualified_id(vector):
    kwargs = dict(SHORT, core="reference")
    # pickled by reference to gymnasium.make: a spawned worker imports handfoot_env only through the id
    # (SB3's SubprocVecEnv with start_method="spawn" makes its envs the same way)
    make = functools.partial(gymnasium.make, QUALIFIED_ID, **kwargs)
    if vector == "sync":
        envs = gymnasium.vector.SyncVectorEnv([make, make])
    else:
        envs = gymnasium.vector.AsyncVectorEnv([make, make], context="spawn")
    try:
        assert _play_masked(envs, 70, seed=1) >= 2
    finally:
        envs.close()


# ------------------------------------------------------------------ pickling the action space
def test_the_pickled_action_space_is_small_and_still_samples():
    env = single_seat_v0.env(partner="random", opponents="random")
    env.reset(seed=0)
    for dumps, loads in ((pickle.dumps, pickle.loads), (cloudpickle.dumps, cloudpickle.loads)):
        data = dumps(env.action_space)
        assert len(data) < 2000
        space = loads(data)
        assert type(space) is MaskedDiscrete and space == gymnasium.spaces.Discrete(705)
        space.seed(0)
        draws = {int(space.sample()) for _ in range(200)}               # no env: uniform over the space
        assert all(space.contains(a) for a in draws) and len(draws) > 100
        assert space.contains(int(space.sample(mask=env.action_masks())))


def test_copies_of_the_env_sample_from_their_own_state():
    env = single_seat_v0.env(partner="random", opponents="random", core="reference")
    env.reset(seed=0)
    for twin in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert twin.action_space._env is twin
        assert np.array_equal(twin.action_masks(), env.action_masks())
        twin.step(twin.action_space.sample())
        assert not np.array_equal(twin.action_masks(), env.action_masks())
        assert all(twin.action_masks()[twin.action_space.sample()] for _ in range(20))
    assert copy.deepcopy(env.action_space)._env is None                 # the space alone: no env
