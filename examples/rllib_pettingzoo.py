"""RLlib on the AEC env: ``PettingZooEnv`` and RLlib's action-masking RLModule, trained with PPO.

    pip install -e ".[ray]"            # ray[rllib]==2.60.0: it pins gymnasium==1.2.2 (see below)
    python examples/rllib_pettingzoo.py --iterations 2

Plain RLlib (new API stack: ``RLModule``, ``Learner``, ``EnvRunner``), not the project's
``backend: rllib`` (docs/scaling_out.md section 4, which has its own env wrapper and module). What a user
taking RLlib to ``handfoot_v0.env()`` must know:

* **The env**: RLlib's ``PettingZooEnv`` wrapper runs the AEC env as it is. It returns, at every step,
  the observation of the player to act only, with the reward that player has accumulated since it last
  acted (the AEC env's ``last()``); at game end every player gets its final observation and reward, so
  each seat's return is exactly its AEC return (tests/test_examples.py checks it on a whole game).
* **The observation key**: RLlib's masking module (``ActionMaskingTorchRLModule``, shipped in
  ``ray.rllib.examples``) reads ``obs["observations"]`` and ``obs["action_mask"]``; the env, as every
  PettingZoo classic env, gives ``obs["observation"]`` and ``obs["action_mask"]``.
  :class:`RLlibObservation`, a PettingZoo wrapper of a few lines, renames that one key (observation
  space included) and multiplies the observation by the fixed per-index scale every learner of the
  project uses (``handfoot_env.observation.observation_scale``: every entry to about [-1, 1]); the
  mask, rewards and turn order are the env's own. The module adds ``log(mask)`` (clamped to the
  smallest float) to the logits in every forward pass, exploration and training alike, so every
  sampled action is legal and PPO's ratio and entropy see only the legal actions. Importing it logs
  one deprecation warning (it subclasses ``PPOTorchRLModule``, the old name of
  ``DefaultPPOTorchRLModule``); it works as it is.
* **Who plays**: one policy, ``shared``, plays all four seats (self-play with parameter sharing): both
  teams' experience trains it. For one policy per team, map ``player_0``/``player_2`` and
  ``player_1``/``player_3`` to two module ids in ``policy_mapping_fn``.
* **Rewards** are the env's defaults (each round: the team's round score minus the opponents',
  / 1000); partners get the same rewards.
* **Legality is checked, not assumed**: a callback (:class:`CountIllegal`) looks at every action in
  every sampled episode and the mask its player saw when taking it, and reports the count as the
  metric ``illegal_actions`` (with ``actions_checked``). The env itself would end the game with -1 for
  an illegal move.
* **gymnasium**: the ``ray`` extra pins ``ray[rllib]==2.60.0``, which pins ``gymnasium==1.2.2``;
  installing it downgrades a newer gymnasium (1.4). The env works on both; the tests run on the one
  installed.

``main`` trains a few PPO iterations on a private local Ray (one CPU; sampling and learning in the
driver process, tiny batches), shuts that Ray down and returns a summary of what it sampled and what
the learner reported. For more throughput raise ``num_env_runners`` (each runner is a Ray actor
holding its own env) and the batch sizes in :func:`make_config`.
"""
from __future__ import annotations

import argparse
from typing import Any, Dict

import numpy as np
import ray
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from ray.tune.registry import register_env

from handfoot_env import handfoot_v0
from handfoot_env.observation import observation_scale

ENV_NAME = "handfoot_aec"
POLICY = "shared"
OBS_KEY = "observations"        # where RLlib's masking module reads the observation (PettingZoo: "observation")


class RLlibObservation(BaseWrapper):
    """The AEC env with its observation scaled and under ``OBS_KEY`` instead of ``"observation"``."""

    def __init__(self, env):
        super().__init__(env)
        rules = env.unwrapped.rules
        self.scale = observation_scale(rules.players, rules.teams)

    def observation_space(self, agent: str) -> spaces.Dict:
        space = self.env.observation_space(agent)
        return spaces.Dict({OBS_KEY: space["observation"], "action_mask": space["action_mask"]})

    def observe(self, agent: str) -> Dict[str, np.ndarray]:
        obs = self.env.observe(agent)
        return {OBS_KEY: obs["observation"] * self.scale, "action_mask": obs["action_mask"]}


def make_env(env_config: Dict[str, Any] | None = None) -> PettingZooEnv:
    """The RLlib multi-agent env: ``env_config`` holds ``handfoot_v0.env`` keyword arguments (rules, ...)."""
    return PettingZooEnv(RLlibObservation(handfoot_v0.env(**dict(env_config or {}))))


class CountIllegal(RLlibCallback):
    """After each sample: count the actions taken where the mask observed just before forbade them."""

    def on_sample_end(self, *, env_runner=None, metrics_logger=None, samples=(), **kwargs) -> None:
        checked = illegal = 0
        for episode in samples:
            for agent_episode in episode.agent_episodes.values():
                n = len(agent_episode)
                if n == 0:
                    continue
                obs = agent_episode.get_observations(slice(0, n))     # observation i: before action i
                # a dict of arrays once the episode is numpy'd (as sample() returns it), else a list of dicts
                masks = np.stack([o["action_mask"] for o in obs]) if isinstance(obs, list) else obs["action_mask"]
                actions = np.asarray(agent_episode.get_actions(slice(0, n)))
                checked += n
                illegal += int((np.asarray(masks)[np.arange(n), actions] == 0).sum())
        metrics_logger.log_value("actions_checked", checked, reduce="sum")
        metrics_logger.log_value("illegal_actions", illegal, reduce="sum")


def make_config(seed: int = 0, batch: int = 256, minibatch: int = 64, hidden: int = 64,
                env_config: Dict[str, Any] | None = None) -> PPOConfig:
    module = RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                          model_config={"fcnet_hiddens": [hidden], "head_fcnet_hiddens": []})
    return (PPOConfig()
            # RLlib's env check steps random actions that ignore the mask; the env would end its game with
            # the illegal-move penalty (and a warning), so it is off: tests/test_examples.py checks the env
            .environment(ENV_NAME, env_config=dict(env_config or {}), disable_env_checking=True)
            .multi_agent(policies={POLICY}, policy_mapping_fn=lambda agent_id, episode, **kw: POLICY)
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={POLICY: module}))
            .env_runners(num_env_runners=0, num_envs_per_env_runner=1)     # sample in this process
            .learners(num_learners=0)
            .training(train_batch_size_per_learner=batch, minibatch_size=minibatch, num_epochs=1, lr=3e-4)
            .callbacks(CountIllegal)
            .debugging(seed=seed))


def main(iterations: int = 2, seed: int = 0, batch: int = 256) -> dict:
    """Train ``iterations`` PPO iterations of ``batch`` env steps each; a summary of the run.

    ``env_steps``: decisions sampled (one per env step); ``episodes_finished``: whole games (a game takes
    hundreds of decisions, so tiny runs finish none); ``actions_checked``/``illegal``: :class:`CountIllegal`'s
    totals; ``module_steps_trained`` and the losses: the shared module's learner results of the last
    iteration; ``weights_changed``: whether the sampling module's weights differ from the initial ones.
    """
    register_env(ENV_NAME, make_env)
    started = not ray.is_initialized()        # a Ray the caller started is used and left running
    if started:
        ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    try:
        algo = make_config(seed, batch=batch).build_algo()
        before = {k: v.copy() for k, v in algo.get_module(POLICY).get_state().items()}
        results = [algo.train() for _ in range(iterations)]
        after = algo.get_module(POLICY).get_state()
        algo.stop()
    finally:
        if started:
            ray.shutdown()
    runners, learner = results[-1]["env_runners"], results[-1]["learners"][POLICY]
    return {
        "iterations": len(results),
        "env_steps": int(runners["num_env_steps_sampled_lifetime"]),
        "episodes_finished": int(runners.get("num_episodes_lifetime", 0)),
        "actions_checked": int(sum(r["env_runners"]["actions_checked"] for r in results)),
        "illegal": int(sum(r["env_runners"]["illegal_actions"] for r in results)),
        "module_steps_trained": int(learner["num_module_steps_trained_lifetime"]),
        **{k: float(learner[k]) for k in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss")},
        "weights_changed": any(not np.array_equal(before[k], after[k]) for k in before),
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=256, help="env steps per PPO iteration")
    a = ap.parse_args()
    s = main(a.iterations, a.seed, a.batch)
    print(f"{s['iterations']} PPO iterations, {s['env_steps']} env steps, {s['episodes_finished']} games finished; "
          f"{s['illegal']} illegal of {s['actions_checked']} actions; policy loss {s['policy_loss']:.4f}, "
          f"value loss {s['vf_loss']:.4f}, entropy {s['entropy']:.3f}; weights changed: {s['weights_changed']}")
