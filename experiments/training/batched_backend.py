"""``backend: batched``: :mod:`experiments.training.batched_ppo` inside the training run of ``handfoot train``;
``backend: dmc``: :mod:`experiments.training.dmc` (Deep Monte-Carlo) in the same run, on the same games.

Any training config runs on it with ``backend: batched`` (``--set backend=batched``).  Same run
folder, ``config.yaml``/``run.json``, TensorBoard tags (``rollout/*``, ``train/*``,
``selfplay/*``, ``eval/*``, ``time/fps``), ``metrics.jsonl`` records, periodic duplicate
evaluation, snapshot pool, ``best``/``final`` and ``--resume`` as the SB3 backend
(:class:`experiments.training.trainer.Trainer` is the base class).  The config fields mean the same:

* ``total_timesteps`` counts learner decisions (both seats of the learning team);
* one PPO update per ``ppo.n_steps x n_envs`` decisions, ``ppo.*`` and ``network.*`` as SB3;
  ``n_envs`` only sizes the rollout (the games played at once are ``batched.games``);
* ``opponents``, ``snapshots.*``, ``reward``, ``reward_scale``, ``max_actions``, ``shaping.*``,
  ``network.centralised_critic``, ``evaluation.*``, ``checkpoint_every``, ``torch_threads``
  (the learner's threads; sampler processes use one).  ``vec_env`` does not apply.

``batched:`` settings (:data:`experiments.training.config.BATCHED_DEFAULTS`):

``games``      games played at once (over all sampler processes); one tick asks each for a move.
``samplers``   sampler processes (0: the games are played in the learner process).
``pipeline``   true: the next rollout is played while the learner updates (needs
               ``samplers >= 1``; the rollout lags the learner by one update); false: play, then
               update (strictly on-policy).

Checkpoints hold no pickle: ``actor.npz`` (for ``policy:PATH``), ``learner.npz`` (network and
Adam state, plain arrays), ``snapshots.npz`` (the pool, as the SB3 backend writes it) and
``trainer.json``; every ``.npz`` loads with ``allow_pickle=False``.  Ctrl-C writes a checkpoint
at the last finished update, as the other backends.

Reproducibility: ``seed`` seeds torch (initial weights), the minibatch order and the samplers
(``SeedSequence(seed)``, one child per sampler process: deals, learning team, opponents, snapshot
draws, heuristic seeds, sampled actions).  The same config and seed give the same weights and
``metrics.jsonl`` on the same machine; the figures depend on ``batched.games`` and
``batched.samplers``.  A resumed run reseeds from ``(seed, timesteps)`` as the other backends.
"""
from __future__ import annotations

import collections
import json
import time
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import torch as th
from torch.utils.tensorboard import SummaryWriter

from agents.policy import ACTOR_FILE, save_actor
from experiments.config import ConfigError, config_to_dict
from experiments.training.config import BATCHED_DEFAULTS, validate_batched
from experiments.runs import open_run, session_info, truncate_metrics, write_json
from experiments.training.batched_ppo import BatchedPPO
from experiments.training.dmc import DMCLearner
from experiments.training.trainer import SNAPSHOTS_FILE, Trainer, load_snapshots, run_session, save_snapshots

LEARNER_FILE = "learner.npz"


class BatchedTrainer(Trainer):
    """One ``backend: batched`` (or ``dmc``) run: the :class:`Trainer` schedules with
    :class:`BatchedPPO` (or :class:`experiments.training.dmc.DMCLearner`) underneath."""

    def __init__(self, *a: Any, **kw: Any):
        super().__init__(*a, **kw)
        self.settings = validate_batched(self.cfg)
        self.learner: Any = None                 # BatchedPPO, or DMCLearner for backend: dmc
        self.backend = self.cfg.backend
        self.timesteps = 0
        self.episodes: collections.deque = collections.deque(maxlen=100)   # seat episodes (return, length)
        self.snapshots_changed = True

    # -------------------------------------------------------- weights
    def weights(self) -> Dict[str, Any]:
        return self.learner.actor()

    def sync(self, snapshots: bool = False) -> None:     # weights travel with every rollout request
        pass

    def steps(self) -> int:
        return int(self.timesteps)

    # -------------------------------------------------------- setup
    def setup(self) -> None:
        cfg = self.cfg
        th.set_num_threads(cfg.torch_threads)
        start = 0
        if self.resume is not None:
            st = json.loads((self.resume / "trainer.json").read_text())
            start = int(st["num_timesteps"])
            self.state.update(st["state"])
        self.timesteps = start
        self.env_seed = cfg.seed if start == 0 else int(
            np.random.SeedSequence([cfg.seed, start]).generate_state(1)[0] % (2 ** 31))
        learner_class = DMCLearner if cfg.backend == "dmc" else BatchedPPO
        self.learner = learner_class(cfg, self.settings, seed=self.env_seed, sampler_seed=self.env_seed)
        if self.resume is not None:
            path = self.resume / LEARNER_FILE
            try:
                with np.load(path, allow_pickle=False) as z:
                    self.learner.load_state_arrays({k: z[k] for k in z.files})
            except (OSError, ValueError, KeyError, RuntimeError, zipfile.BadZipFile) as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise ConfigError(f"resume: {str(path)!r} does not fit this config (network or learner "
                                  f"settings changed?): {first}") from None
            self.snapshots = load_snapshots(self.resume / SNAPSHOTS_FILE)
            truncate_metrics(self.run, start)     # only once the checkpoint has loaded
        self.writer = SummaryWriter(str(self.run / "tb"))
        self.start_logs_and_schedules()

    def session_started(self, info: Dict[str, Any]) -> str:
        s = self.settings
        info["backend"] = self.backend
        info["batched"] = s
        info["seeds"]["envs"] = f"SeedSequence({self.env_seed}), one child per sampler process"
        mode = "pipelined" if s["pipeline"] else "synchronous"
        algo = "batched DMC" if self.backend == "dmc" else "batched PPO"
        return (f"run folder: {self.run} ({algo}: {s['games']} games, {s['samplers']} sampler process(es), "
                f"{mode})" + (f" (resumed from {self.resume} at {self.timesteps:,} steps)" if self.resume else ""))

    # -------------------------------------------------------- between updates
    def between_updates(self) -> None:
        """Snapshot, evaluation and checkpoint when due (the SB3 trainer's on_rollout_start)."""
        if self.freeze_snapshot_if_due(self.timesteps):
            self.snapshots_changed = True
        self.run_schedules(self.timesteps)

    def record_rollout(self, batch: Dict[str, Any]) -> None:
        steps = self.timesteps
        games: List[Dict[str, Any]] = batch["games"]
        for g in games:
            for r, n in zip(g["returns"], g["lengths"]):
                self.episodes.append((r, n))
        rec: Dict[str, Any] = {"kind": "rollout", "timesteps": steps, "update": self.state["updates"]}
        if self.episodes:
            rec["ep_rew_mean"] = float(np.mean([e[0] for e in self.episodes]))
            rec["ep_len_mean"] = float(np.mean([e[1] for e in self.episodes]))
            self.scalar("rollout/ep_rew_mean", rec["ep_rew_mean"], steps)
            self.scalar("rollout/ep_len_mean", rec["ep_len_mean"], steps)
        by_kind: Dict[str, List[float]] = {}
        for g in games:
            by_kind.setdefault(g["opponent"], []).append(g["result"])
        for kind, vals in sorted(by_kind.items()):
            rec[f"result_vs_{kind}"] = float(np.mean(vals))
            self.scalar(f"selfplay/result_vs_{kind}", rec[f"result_vs_{kind}"], steps)
        if games:
            rec["games"] = len(games)
            self.scalar("selfplay/games", len(games), steps)
            self.scalar("selfplay/score_diff", float(np.mean([g["score_diff"] for g in games])), steps)
            self.scalar("selfplay/truncated", float(np.mean([g["truncated"] for g in games])), steps)
        self.metric(rec)

    def record_update(self, stats: Optional[Dict[str, float]] = None) -> None:
        if not stats:
            return
        steps = self.timesteps
        for k, v in stats.items():
            self.scalar(f"train/{k}", v, steps)
        self.metric({"kind": "update", "timesteps": steps, "update": self.state["updates"], **stats})

    # -------------------------------------------------------- checkpoints
    def checkpoint(self, path: Path, periodic: bool, extra: Optional[Dict[str, Any]] = None) -> None:
        tmp = self.checkpoint_tmp(path)
        save_actor(self.weights(), tmp / ACTOR_FILE)
        with open(tmp / LEARNER_FILE, "wb") as f:
            np.savez(f, **self.learner.state_arrays())
        save_snapshots(self.snapshots, tmp / SNAPSHOTS_FILE)
        write_json(tmp / "trainer.json", {"num_timesteps": int(self.timesteps), "state": self.state,
                                          "backend": self.backend, "config": config_to_dict(self.cfg)})
        self.commit_checkpoint(tmp, path, periodic, extra)

    # -------------------------------------------------------- run
    def learn(self) -> None:
        self.learn_in_iterations(f"train ({self.backend})")

    def iterate(self, total: int) -> None:
        """Rollout and update until ``total`` decisions, or until Ctrl-C (the update in hand finishes)."""
        while self.timesteps < total and not self.stop.requested:
            self.between_updates()
            t0 = time.perf_counter()
            snaps = list(self.snapshots) if self.snapshots_changed else None
            self.snapshots_changed = False
            batch = self.learner.rollout(snaps, remaining=total - self.timesteps)
            t1 = time.perf_counter()
            self.timesteps += int(batch["decisions"])
            self.state["updates"] += 1
            self.record_rollout(batch)
            stats = self.learner.update(batch)
            self.record_update(stats)
            t2 = time.perf_counter()
            # rollout_s: time the learner waited for the rollout (pipelined: only what the
            # update did not cover); update_s: the PPO update
            self.scalar("time/rollout_s", t1 - t0, self.timesteps)
            self.scalar("time/update_s", t2 - t1, self.timesteps)
            if t2 > t0:
                self.scalar("time/fps", batch["decisions"] / (t2 - t0), self.timesteps)
            if self.bar is not None:
                self.bar.update(int(batch["decisions"]))

    def finish(self) -> Dict[str, Any]:
        cfg = self.cfg
        steps = self.timesteps
        self.evaluate_if_due(steps)
        if self.state["next_checkpoint"] is not None and steps >= self.state["next_checkpoint"]:
            while self.state["next_checkpoint"] <= steps:
                self.state["next_checkpoint"] += cfg.checkpoint_every
            self.checkpoint(self.run / "checkpoints" / f"step_{steps:09d}", periodic=True)
        return self.finish_run(steps)

    def close(self) -> None:
        if self.learner is not None:
            self.learner.close()
        if self.writer is not None:
            self.writer.flush()
            self.writer.close()


def train(cfg: Any, resume: Any = None, quiet: bool = False, argv: Optional[List[str]] = None) -> Dict[str, Any]:
    """:func:`experiments.training.run.train` for ``backend: batched`` and ``dmc``.

    Same run folder and same result dict as the other backends."""
    validate_batched(cfg)
    run, ck = open_run(cfg, resume or cfg.resume)
    info = session_info(cfg, ck, argv, {"torch/minibatches": cfg.seed, "envs": None,
                                        "evaluation": cfg.evaluation.seed})
    return run_session(BatchedTrainer(cfg, run, resume=ck, quiet=quiet), info)


__all__ = ["BATCHED_DEFAULTS", "BatchedTrainer", "train"]
