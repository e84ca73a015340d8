"""RLlib backend: PPO self-play on Ray (``backend: rllib``).

``handfoot train configs/train/rllib_selfplay.yaml`` (or any training config with ``backend:
rllib``) runs :class:`RLlibLearner` under the :class:`experiments.training.trainer.Trainer`: same
run folder, TensorBoard tags, ``metrics.jsonl`` rows, periodic duplicate-format evaluation,
``best``/``final`` checkpoints and ``final_eval.json`` as every backend.  Nothing in this module
reads ``sys.argv`` or starts Ray at import time: Ray workers import it by name (the env class,
the callbacks, the mapping function).

Environment: :class:`experiments.training.rllib_env.HandFootMultiAgentEnv` (see there).

Module (:class:`experiments.training.rllib_module.MaskedActorCritic`)
----------------------------------------------------------------------
Torch, masked logits in every forward pass, separate critic, the SB3 backend's
input scale.  ``learner`` is trained; ``snapshot_<k>`` modules are copies that
are refreshed from ``learner`` every ``snapshots.every_updates`` iterations
(round robin over the ``snapshots.keep`` slots; all slots start as copies of the
initial learner).  PPO only syncs the trained module to the env runners, so
snapshot weights are pushed to every runner explicitly.

The learner
-----------
:func:`build_algo_config` builds an RLlib ``PPOConfig`` (new API stack) from the same
``TrainConfig`` as the other backends (the ``rllib:`` section,
:class:`experiments.training.config.RLlibConfig`, holds the Ray/RLlib-only settings);
:meth:`RLlibLearner.setup` starts or joins Ray (:func:`experiments.ray_cluster.init_ray`) and
builds the Algorithm; one :meth:`RLlibLearner.iterate` is one ``Algorithm.train()``.
``total_timesteps`` counts learner transitions (steps of the ``learner`` module on any seat).
Checkpoints hold the RLlib Algorithm checkpoint (``algorithm/``) besides what the trainer writes.
Resuming restores the Algorithm checkpoint, which RLlib writes with pickle: it needs
``HANDFOOT_TRUST_PICKLE=1`` (docs/loading_files.md).  Ctrl-C stops between iterations with a
checkpoint, as every backend.

Ray itself (starting or joining a cluster, distributed evaluation) is :mod:`experiments.ray_cluster`.
This module imports Ray and RLlib at the top: the trainer imports it only for ``backend: rllib``.
"""
from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import ray
from ray.rllib.algorithms.ppo import PPOConfig as RLlibPPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

from agents.files import require_trust
from agents.rllib_policy import LEARNER, actor_weights
from experiments.config import ConfigError
from experiments.ray_cluster import init_ray, require_ray, resolve_address, shutdown_ray
from experiments.training.config import total_envs, validate_rllib
from experiments.training.learner import Iteration
from experiments.training.rllib_env import (
    HandFootMultiAgentEnv,
    SelfPlayMetrics,
    agent_to_module,
    snapshot_ids,
    spaces_for,
)
from experiments.training.rllib_module import module_spec
from handfoot_env.config import load_rules


def env_config(cfg: Any, seed: int) -> Dict[str, Any]:
    pool = 1 if cfg.snapshots.sampling == "latest" else int(cfg.snapshots.keep)
    return {"rules": cfg.rules, "reward": cfg.reward, "reward_scale": float(cfg.reward_scale),
            "max_actions": cfg.max_actions, "opponents": dict(cfg.opponents), "pool_size": pool, "seed": int(seed)}


def model_config(cfg: Any) -> Dict[str, Any]:
    r = load_rules(cfg.rules)
    return {"hidden": list(cfg.network.pi), "vf_hidden": list(cfg.network.vf), "activation": cfg.network.activation,
            "players": r.players, "teams": r.teams}


def build_algo_config(cfg: Any, seed: int):
    """The RLlib ``PPOConfig`` (new API stack) of a TrainConfig with ``backend: rllib``."""
    require_ray()

    s = validate_rllib(cfg)
    ec = env_config(cfg, seed)
    obs_space, act_space = spaces_for(cfg.rules)
    mc = model_config(cfg)
    modules = [LEARNER] + snapshot_ids(ec["pool_size"])
    specs = {m: module_spec(obs_space, act_space, mc) for m in modules}
    p = cfg.ppo
    batch = int(s.train_batch_size or p.n_steps * total_envs(s))
    mini = int(min(batch, s.minibatch_size or p.batch_size))
    conf = (RLlibPPOConfig()
            .environment(HandFootMultiAgentEnv, env_config=ec, disable_env_checking=True)
            .env_runners(num_env_runners=int(s.num_env_runners),
                         num_envs_per_env_runner=int(s.num_envs_per_env_runner),
                         episodes_to_numpy=bool(s.episodes_to_numpy),
                         rollout_fragment_length=s.rollout_fragment_length,
                         num_cpus_per_env_runner=1, sample_timeout_s=float(s.sample_timeout_s))
            .learners(num_learners=int(s.num_learners))
            .multi_agent(policies=set(modules), policy_mapping_fn=agent_to_module, policies_to_train=[LEARNER])
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
            .training(lr=float(p.learning_rate), train_batch_size_per_learner=batch, minibatch_size=mini,
                      num_epochs=int(p.n_epochs), gamma=float(p.gamma), lambda_=float(p.gae_lambda),
                      clip_param=float(p.clip_range), entropy_coeff=float(p.ent_coef),
                      vf_loss_coeff=float(p.vf_coef), grad_clip=float(p.max_grad_norm), grad_clip_by="global_norm",
                      use_kl_loss=False, vf_clip_param=float(s.vf_clip_param or 1e9))
            .callbacks(SelfPlayMetrics)
            .reporting(metrics_num_episodes_for_smoothing=100)
            .debugging(seed=int(seed), log_level="ERROR"))
    return conf


# ----------------------------------------------------------------------------- the trainer
def _num(x: Any) -> Optional[float]:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if np.isfinite(v) else None


class RLlibLearner:
    """RLlib PPO as a :class:`experiments.training.learner.SamplingLearner` (see the module docstring)."""

    own_snapshots = True        # the snapshot pool is the RLlib modules snapshot_<k>

    def __init__(self, cfg: Any):
        self.cfg = cfg
        self.algo = None
        self.owns_ray = False
        self.run: Any = None                     # the RunContext of setup

    # -------------------------------------------------------- weights
    def learner_state(self) -> Dict[str, Any]:
        st = self.algo.learner_group.get_state(components=f"learner/rl_module/{LEARNER}")
        return st["learner"]["rl_module"][LEARNER]

    def actor(self) -> Dict[str, Any]:
        return actor_weights(self.learner_state())

    def push_modules(self, states: Dict[str, Dict[str, Any]]) -> None:
        """Set module weights in the learner and on every env runner (snapshots are not synced by PPO)."""
        if not states:
            return
        self.algo.learner_group.set_state({"learner": {"rl_module": dict(states)}})
        self.algo.env_runner_group.foreach_env_runner(partial(_set_modules, states=states), local_env_runner=True)

    def freeze_snapshot(self, fill_all: bool = False) -> None:
        """Copy the learner into the next snapshot slot (round robin), or into every slot."""
        slots = snapshot_ids(env_config(self.cfg, 0)["pool_size"])
        if not slots:
            return
        st = self.learner_state()
        if fill_all:
            self.push_modules({m: st for m in slots})
            return
        state = self.run.state
        k = int(state.get("next_slot", 0)) % len(slots)
        self.push_modules({slots[k]: st})
        state["next_slot"] = k + 1

    # -------------------------------------------------------- setup
    def setup(self, run: Any, checkpoint: Optional[Dict[str, Any]]) -> None:
        cfg = self.cfg
        s = cfg.rllib
        self.run = run
        run.state.setdefault("next_slot", 0)
        run.state.setdefault("env_steps", 0)
        if checkpoint is not None:
            try:
                require_trust(run.resume / "algorithm", "an RLlib Algorithm checkpoint")
            except ValueError as e:
                raise ConfigError(f"resume: {e}") from None
        self.owns_ray = init_ray(s.address, num_cpus=s.num_cpus, quiet=run.quiet, ship_code=bool(s.ship_code))
        self.algo = build_algo_config(cfg, run.seed).build_algo()
        if checkpoint is not None:
            self.algo.restore_from_path(str((run.resume / "algorithm").resolve()))
            # snapshot slots are not synced by PPO's weight sync: push them from the restored learner group
            slots = snapshot_ids(env_config(cfg, 0)["pool_size"])
            if slots:
                lg = self.algo.learner_group.get_state(components=[f"learner/rl_module/{m}" for m in slots])
                self.push_modules(dict(lg["learner"]["rl_module"]))
        else:
            self.freeze_snapshot(fill_all=True)         # the pool starts as copies of the initial learner

    def describe(self, info: Dict[str, Any]) -> str:
        s = self.cfg.rllib
        info["seeds"]["python/numpy/torch/rllib"] = info["seeds"].pop("python/numpy/torch")
        info["seeds"]["envs"] = (f"base {self.run.seed}, per env: SeedSequence([base, env runner index, "
                                 f"vector index])")
        info["versions"]["ray"] = ray.__version__
        info["ray"] = {"address": resolve_address(s.address) or "local", "num_env_runners": s.num_env_runners,
                       "num_envs_per_env_runner": s.num_envs_per_env_runner,
                       "cluster_resources": {k: v for k, v in ray.cluster_resources().items()
                                             if k in ("CPU", "GPU", "memory")},
                       "nodes": len([n for n in ray.nodes() if n.get("Alive")])}
        return (f"RLlib PPO, {s.num_env_runners} env runner(s) x {s.num_envs_per_env_runner} envs, "
                f"Ray {info['ray']['address']}")

    # -------------------------------------------------------- one iteration
    def iterate(self, remaining: int, snapshots: Optional[List[Dict[str, Any]]]) -> Iteration:
        """One RLlib training iteration (sampling, then the PPO update)."""
        t0 = time.perf_counter()
        r = self.algo.train()
        return iteration_of(r, time.perf_counter() - t0, self.run.state)

    # -------------------------------------------------------- checkpoints
    def save(self, folder: Path) -> Dict[str, Any]:
        self.algo.save_to_path(str((folder / "algorithm").resolve()))
        return {}

    def close(self) -> None:
        try:
            if self.algo is not None:
                self.algo.stop()
        except Exception:  # noqa: BLE001 - stopping dead actors must not hide the real error
            pass
        if self.owns_ray:
            shutdown_ray()


def _set_modules(er: Any, states: Dict[str, Dict[str, Any]]) -> bool:
    """On an env runner: set the weights of the modules it holds."""
    if getattr(er, "module", None) is None:
        return False
    for mid, st in states.items():
        if mid in er.module:
            er.module[mid].set_state(st)
    return True


# the SB3 backend's names for the update statistics (metrics.jsonl "update" rows, train/*)
_UPDATE_NAMES = (("learning_rate", "default_optimizer_learning_rate", 1.0), ("entropy_loss", "entropy", -1.0),
                 ("policy_gradient_loss", "policy_loss", 1.0), ("value_loss", "vf_loss", 1.0),
                 ("loss", "total_loss", 1.0), ("explained_variance", "vf_explained_var", 1.0))


def iteration_of(r: Dict[str, Any], wall: float, state: Dict[str, Any]) -> Iteration:
    """An RLlib result as the trainer's :class:`Iteration` (the learner's steps are its decisions)."""
    er = r.get("env_runners", {}) or {}
    lr = (r.get("learners", {}) or {}).get(LEARNER, {}) or {}
    steps_by_module = er.get("num_module_steps_sampled", {}) or {}
    learner_steps = int(steps_by_module.get(LEARNER, 0) or 0)
    env_steps = int(er.get("num_env_steps_sampled", 0) or 0)
    state["env_steps"] = int(state.get("env_steps", 0)) + env_steps
    state["iterations"] = int(state.get("updates", 0)) + 1
    rec: Dict[str, Any] = {"env_steps": env_steps, "learner_steps": learner_steps, "iteration_s": round(wall, 3)}
    scalars: Dict[str, float] = {"time/iteration_s": wall}
    sp = er.get("selfplay", {}) or {}
    games = int(_num(sp.get("games")) or 0)
    if games:
        rec["games"] = games
        rec["ep_rew_mean"] = (_num(sp.get("learner_return_sum")) or 0.0) / games
        rec["ep_len_mean"] = (_num(sp.get("learner_decisions_sum")) or 0.0) / games
        rec["actions_per_game"] = (_num(sp.get("actions_sum")) or 0.0) / games
        scalars["selfplay/score_diff"] = (_num(sp.get("score_diff_sum")) or 0.0) / games
        scalars["selfplay/truncated"] = (_num(sp.get("truncated")) or 0.0) / games
    for key, v in sorted(sp.items()):
        if key.startswith("games_vs_") and _num(v):
            kind = key[len("games_vs_"):]
            rec[f"result_vs_{kind}"] = (_num(sp.get(f"result_sum_vs_{kind}")) or 0.0) / float(v)
    upd: Dict[str, float] = {}
    for name, key, sign in _UPDATE_NAMES:
        v = _num(lr.get(key))
        if v is not None:
            upd[name] = sign * v
    if wall > 0:
        rec["env_steps_per_s"] = env_steps / wall
        scalars["time/learner_steps_per_s"] = learner_steps / wall
    return Iteration(decisions=learner_steps, update=upd, rollout=rec, scalars=scalars)
