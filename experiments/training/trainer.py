"""The trainer: one self-play training run of any backend, from a training config.

Usage::

    handfoot train configs/train/quickstart.yaml
    handfoot train configs/train/quickstart.yaml --set total_timesteps=50000 --set ppo.n_steps=128
    handfoot train --resume runs/quickstart-s0/checkpoints/step_000100352    # continue a run
    handfoot train --help-config                                             # every config field

Python::

    from experiments.training.config import TrainConfig
    from experiments.training.trainer import train
    result = train(TrainConfig(total_timesteps=20_000))

The :class:`Trainer` owns the run's schedule; the learning is a learner's, found by the config's
``backend`` in the registry of :mod:`experiments.training.learner` (sb3: :mod:`~experiments.training.sb3`,
rllib: :mod:`~experiments.training.rllib`, batched: :mod:`~experiments.training.batched_ppo`, dmc:
:mod:`~experiments.training.dmc`).  For the learners of the batched games the trainer owns the sampler
(:class:`experiments.training.sampler_group.SamplerGroup`: processes, or Ray actors with ``--ray``)
and hands each rollout to the learner.
What a run does:

* iterations of one rollout and one update until ``total_timesteps`` learner decisions;
* before every rollout, every ``snapshots.every_updates`` updates, it freezes a snapshot of the
  learner into the opponent pool (the last ``snapshots.keep`` are kept); each game draws its
  opponents from the ``opponents`` mixture (:mod:`experiments.training.selfplay`);
* every ``evaluation.every_timesteps`` evaluates the learner (greedy actor) with the duplicate
  evaluation harness (:mod:`experiments.evaluation`) in a round-robin with the
  ``evaluation.opponents``: win rate and ADP against each, and an Elo rating (Bradley-Terry on
  the round-robin, shifted so that ``random`` sits at 1000); the best checkpoint by
  ``evaluation.best_by`` is kept in ``RUN/best``;
* saves a checkpoint every ``checkpoint_every`` timesteps (``RUN/checkpoints/step_N``: ``actor.npz``
  for ``policy:PATH``, ``snapshots.npz`` (the opponent pool), ``trainer.json`` for resuming and the
  learner's own files: sb3 ``model_state.npz`` (and SB3's ``model.zip`` for use with SB3), batched
  and dmc ``learner.npz``, rllib ``algorithm/``) and ``RUN/final`` at the end.  Each checkpoint
  folder, ``best/``, ``final/`` and ``checkpoints/latest.txt`` is written under a temporary name and
  then swapped in.

Run folder (``run_dir/run_name``, default ``runs/NAME-sSEED``; an existing folder gets a
time suffix): ``config.yaml`` (resolved), ``run.json`` (seeds, package versions, git commit,
command line), ``tb/`` (TensorBoard: ``train/*`` (SB3's names), ``rollout/*``, ``time/*``,
``selfplay/*`` results of training games by opponent kind and ``eval/*``), ``metrics.jsonl``
(one line per rollout, per update and per evaluation), ``checkpoints/``, ``best/``, ``final/``,
``evals/step_N/results.json`` (each evaluation), ``final_eval.json`` and ``learning_curve.png``.

``--resume PATH`` (a checkpoint folder, or a run folder: its latest checkpoint) continues in the
run folder that holds the checkpoint: the step count, snapshot pool, best score and schedules
continue, ``metrics.jsonl`` rows written after the checkpoint are dropped (the resumed run writes
them again) and TensorBoard logs go to the same ``tb/`` folder.  Resuming reads arrays and JSON
only: the model is rebuilt from the config and its state loaded from ``model_state.npz``
(SB3's ``model.zip`` is not read).  A checkpoint of an older version (``snapshots.pkl``, no
``model_state.npz``) holds pickles and is resumed only with ``HANDFOOT_TRUST_PICKLE=1``.

Ctrl-C stops a run cleanly: the current environment step finishes, the run goes back to its last
update (the rollout in progress is dropped), a checkpoint ``RUN/checkpoints/step_N`` is written
and :class:`TrainingInterrupted` is raised (``handfoot train`` prints one line and exits 130);
``handfoot train --resume RUN`` continues.  A second Ctrl-C stops at once.  Worker processes
ignore Ctrl-C and exit when the trainer dies.

Reproducibility: the config ``seed`` seeds python ``random``, NumPy, torch, the games (sb3: worker
``i`` gets ``seed + i``; batched and dmc: ``SeedSequence(seed)``, one child per sampler process)
and evaluation (``evaluation.seed``); the same config and seed give identical metrics on the same
machine (timings excepted; RLlib's updates are not bit-for-bit repeatable; ``scripts/same_run.py``
compares two runs).  A resumed run reseeds
from ``(seed, timesteps)`` (:func:`resume_seed`); it is reproducible itself but does not repeat the
uninterrupted run bit for bit.

Config errors (an unknown field, a badly typed value) name the field and exit with status 2.
"""
from __future__ import annotations

import collections
import json
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import numpy as np
import torch as th
import yaml
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from agents.policy import ACTOR_FILE, actor_arrays, actor_from_arrays, save_actor
from experiments.config import config_to_dict, handfoot_command
from experiments.evaluation.report import eval_line, plot_learning_curve
from experiments.evaluation.summary import eval_score, evaluate_policy
from experiments.processes import StopRequest
from experiments.runs import (
    _json_default,
    end_session,
    open_run,
    replace_dir,
    session_info,
    start_session,
    truncate_metrics,
    write_json,
    write_text,
)
from experiments.training.config import TrainConfig, check_agents, init_weights
from experiments.training.learner import Iteration, RunContext
from experiments.training.backends import backend
from experiments.training.sampler_group import SamplerGroup, SamplersLost

SNAPSHOTS_FILE = "snapshots.npz"


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped the run after writing a checkpoint; the message says where and how to continue."""


def save_snapshots(pool: List[Dict[str, Any]], path: Path) -> None:
    """Write a snapshot pool (NumPy actor weights, oldest first) to one ``.npz`` of arrays."""
    arrays: Dict[str, np.ndarray] = {"count": np.asarray(len(pool), np.int64)}
    for k, w in enumerate(pool):
        arrays.update(actor_arrays(w, prefix=f"s{k}/"))
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def load_snapshots(path: Path) -> List[Dict[str, Any]]:
    """The snapshot pool written by :func:`save_snapshots` (read without pickle)."""
    with np.load(path, allow_pickle=False) as z:
        return [actor_from_arrays(z, prefix=f"s{k}/") for k in range(int(z["count"]))]


def resume_seed(seed: int, timesteps: int) -> int:
    """The seed of a session that starts at ``timesteps``: ``seed`` for a new run, else one derived
    from ``(seed, timesteps)`` so that a resumed run does not replay the first games."""
    if timesteps == 0:
        return int(seed)
    return int(np.random.SeedSequence([seed, timesteps]).generate_state(1)[0] % (2 ** 31))


# =========================================================================== trainer
class Trainer:
    """One run: the learner of ``cfg.backend``, the opponent pool, the schedules and the records."""

    def __init__(self, cfg: TrainConfig, run: Path, resume: Optional[Path] = None, quiet: bool = False):
        self.cfg = cfg
        self.run = run
        self.quiet = quiet
        self.resume = resume
        self.backend = backend(cfg.backend)
        self.learner: Any = self.backend.create(cfg)
        self.state: Dict[str, Any] = {"updates": 0, "best_score": None, "best_step": None, "next_eval": None,
                                      "next_checkpoint": None, "snapshot_updates": [], "evals": 0}
        self.snapshots: List[Dict[str, Any]] = []
        self.snapshots_changed = True
        self.episodes: collections.deque = collections.deque(maxlen=100)   # (return, length) of seat episodes
        self.timesteps = 0
        self.seed = int(cfg.seed)
        self.samplers: Optional[SamplerGroup] = None
        self.writer: Any = None
        self.bar: Any = None
        self.stop = StopRequest()
        self.interrupted = False
        self.lost: Optional[SamplersLost] = None      # the samplers' transport was lost (a Ray head)
        self.league: Any = None                       # league: the League (experiments.training.league)

    @property
    def own_snapshots(self) -> bool:
        """Whether the learner keeps the snapshot pool itself (RLlib's module slots)."""
        return bool(getattr(self.learner, "own_snapshots", False))

    # ---------------------------------------------------------------- helpers
    def log(self, msg: str) -> None:
        if self.quiet:
            return
        if self.bar is not None:
            self.bar.write(msg, file=sys.stderr)
        else:
            print(msg, file=sys.stderr, flush=True)

    def weights(self) -> Dict[str, Any]:
        return self.learner.actor()

    def metric(self, record: Dict[str, Any]) -> None:
        with open(self.run / "metrics.jsonl", "a") as f:
            f.write(json.dumps(record, default=_json_default) + "\n")

    def scalar(self, tag: str, value: Optional[float], step: int) -> None:
        if self.writer is not None and value is not None and np.isfinite(value):
            self.writer.add_scalar(tag, float(value), step)

    def steps(self) -> int:
        """Learner timesteps so far."""
        return int(self.timesteps)

    # ---------------------------------------------------------------- setup
    def setup(self) -> None:
        """Build the learner (from the checkpoint when resuming), the samplers and the logs."""
        cfg = self.cfg
        th.set_num_threads(cfg.torch_threads)
        checkpoint = None
        if self.resume is not None:
            checkpoint = json.loads((self.resume / "trainer.json").read_text())
            self.timesteps = int(checkpoint["num_timesteps"])
        self.seed = resume_seed(cfg.seed, self.timesteps)
        if checkpoint is not None and not self.own_snapshots and (self.resume / SNAPSHOTS_FILE).is_file():
            self.snapshots = load_snapshots(self.resume / SNAPSHOTS_FILE)
        run = RunContext(seed=self.seed, resume=self.resume, timesteps=self.timesteps, quiet=self.quiet,
                         state=self.state, snapshots=self.snapshots, stopping=lambda: self.stop.requested,
                         samplers_busy=lambda: self.samplers is not None and self.samplers.busy())
        self.learner.setup(run, checkpoint)
        self.context = run
        self.snapshots = run.snapshots
        if checkpoint is not None:
            self.state.update(checkpoint["state"])
        if cfg.league.enabled:
            from experiments.training.league import League
            self.league = League(cfg, self.run, self.seed, log=self.log, scalar=self.scalar, metric=self.metric)
            self.league.setup(self.resume, len(self.snapshots), self.timesteps, self.state,
                              samplers_busy=run.samplers_busy)
        if checkpoint is not None:
            truncate_metrics(self.run, self.timesteps)     # only once the checkpoint has loaded
        if self.backend.family == "rollout":
            from experiments.training.ray_samplers import transport_for     # Ray is imported only with --ray
            self.samplers = SamplerGroup.for_config(cfg, self.seed, transport=transport_for(cfg), log=self.log,
                                                    **self.learner.sampler_options())
        if self.writer is None:
            self.writer = SummaryWriter(str(self.run / "tb"))
        self.start_logs_and_schedules()

    def start_logs_and_schedules(self) -> None:
        """After setup: the config as TensorBoard text (new runs) and the first evaluation and
        checkpoint steps (a resumed run keeps its own)."""
        cfg = self.cfg
        if self.resume is None and self.writer is not None:
            self.writer.add_text("config", "```\n" + yaml.safe_dump(config_to_dict(cfg), sort_keys=False) + "\n```", 0)
        ev = cfg.evaluation
        if self.state["next_eval"] is None:
            self.state["next_eval"] = ev.every_timesteps if ev.every_timesteps > 0 else None
        if self.state["next_checkpoint"] is None:
            self.state["next_checkpoint"] = cfg.checkpoint_every if cfg.checkpoint_every > 0 else None

    def session_started(self, info: Dict[str, Any]) -> str:
        """After :meth:`setup`: complete the session's provenance ``info``; the line to log."""
        info["backend"] = self.cfg.backend
        if self.samplers is not None:
            info["batched"] = config_to_dict(self.cfg.batched)
            info["seeds"]["envs"] = f"SeedSequence({self.seed}), one child per sampler process"
        what = self.learner.describe(info)
        if self.samplers is not None:
            b = self.cfg.batched
            where = "Ray actor(s)" if b.ray is not None else "sampler process(es)"
            lag = f"pipelined, max_lag {b.max_lag}" if b.max_lag > 1 else "pipelined"
            what += f": {b.games} games, {b.samplers} {where}, {lag if b.pipeline else 'synchronous'}"
            for line in self.samplers.describe():
                self.log(line)
        resumed = f" (resumed from {self.resume} at {self.timesteps:,} steps)" if self.resume else ""
        return f"run folder: {self.run} ({what}){resumed}"

    # ---------------------------------------------------------------- between updates
    def freeze_snapshot_if_due(self, steps: int) -> bool:
        """Every ``snapshots.every_updates`` updates, freeze the learner into the pool (the last
        ``snapshots.keep`` are kept); whether the pool changed."""
        cfg = self.cfg
        upd = self.state["updates"]
        if upd == 0 or upd % cfg.snapshots.every_updates or upd in self.state["snapshot_updates"]:
            return False
        keep = cfg.snapshots.keep
        self.state["snapshot_updates"] = (list(self.state["snapshot_updates"]) + [upd])[-keep:]
        if self.own_snapshots:
            self.learner.freeze_snapshot()
            self.scalar("selfplay/snapshots", len(self.state["snapshot_updates"]), steps)
            return True
        self.snapshots = (self.snapshots + [self.learner.actor()])[-keep:]
        self.scalar("selfplay/snapshots", len(self.snapshots), steps)
        return True

    def between_updates(self) -> None:
        """Before every rollout: the snapshot, evaluation and checkpoint that are due."""
        if self.freeze_snapshot_if_due(self.timesteps):
            self.snapshots_changed = True
            if self.league is not None:
                self.league.snapshot_added(self.timesteps, len(self.snapshots))
        self.run_schedules(self.timesteps)

    def run_schedules(self, steps: int) -> None:
        """The periodic evaluation and checkpoint whose step has come."""
        self.evaluate_if_due(steps)
        self.checkpoint_if_due(steps)

    def evaluate_if_due(self, steps: int) -> None:
        if self.state["next_eval"] is not None and steps >= self.state["next_eval"]:
            self.evaluate(steps)
            while self.state["next_eval"] <= steps:
                self.state["next_eval"] += self.cfg.evaluation.every_timesteps

    def checkpoint_if_due(self, steps: int) -> None:
        nc = self.state["next_checkpoint"]
        if nc is not None and steps >= nc:
            while self.state["next_checkpoint"] <= steps:
                self.state["next_checkpoint"] += self.cfg.checkpoint_every
            self.checkpoint(self.run / "checkpoints" / f"step_{steps:09d}", periodic=True)

    # ---------------------------------------------------------------- one iteration
    def play_and_update(self, remaining: int) -> Optional[Iteration]:
        """One rollout and one update: the trainer's samplers and the learner's update (batched
        games), or the learner's own :meth:`~experiments.training.learner.SamplingLearner.iterate`."""
        pool = list(self.snapshots) if self.snapshots_changed and not self.own_snapshots else None
        if self.league is not None:       # the league's members and weights, when they changed
            pool = self.league.main_pool(self.snapshots, force=pool is not None)
            if pool is not None:
                self.league.log_weights(self.timesteps)
        self.snapshots_changed = False
        if self.samplers is None:
            return self.learner.iterate(remaining, pool)
        t0 = time.perf_counter()
        batch = self.samplers.next_rollout(self.learner.rollout_size, self.learner.actor(), pool,
                                           self.cfg.batched.pipeline, remaining)
        t1 = time.perf_counter()
        stats = self.learner.update(batch)
        # rollout_s: time the learner waited for the rollout (pipelined: only what the update did
        # not cover); update_s: the update
        games = batch["games"]
        return Iteration(decisions=int(batch["decisions"]), games=games, update=stats,
                         episodes=[(r, n) for g in games for r, n in zip(g["returns"], g["lengths"])],
                         scalars={"time/rollout_s": t1 - t0, "time/update_s": time.perf_counter() - t1})

    def record(self, it: Iteration, wall: float) -> None:
        """The rows of one iteration in metrics.jsonl (``rollout``, then ``update``) and TensorBoard."""
        steps = self.timesteps
        self.episodes.extend(it.episodes)
        rec: Dict[str, Any] = {"kind": "rollout", "timesteps": steps, "update": self.state["updates"]}
        if self.episodes:
            rec["ep_rew_mean"] = float(np.mean([e[0] for e in self.episodes]))
            rec["ep_len_mean"] = float(np.mean([e[1] for e in self.episodes]))
        by_kind: Dict[str, List[float]] = {}
        for g in it.games:
            by_kind.setdefault(g["opponent"], []).append(g["result"])
        for kind, vals in sorted(by_kind.items()):
            rec[f"result_vs_{kind}"] = float(np.mean(vals))
        if it.games:
            rec["games"] = len(it.games)
            self.scalar("selfplay/score_diff", float(np.mean([g["score_diff"] for g in it.games])), steps)
            self.scalar("selfplay/truncated", float(np.mean([g["truncated"] for g in it.games])), steps)
        rec.update(it.rollout)
        for k, v in rec.items():
            if k in ("ep_rew_mean", "ep_len_mean"):
                self.scalar(f"rollout/{k}", v, steps)
            elif k.startswith("result_vs_") or k == "games":
                self.scalar(f"selfplay/{k}", v, steps)
        for tag, v in it.scalars.items():
            self.scalar(tag, v, steps)
        if wall > 0:
            self.scalar("time/fps", it.decisions / wall, steps)
        self.metric(rec)
        if it.update:
            for k, v in it.update.items():
                self.scalar(f"train/{k}", v, steps)
            self.metric({"kind": "update", "timesteps": steps, "update": self.state["updates"], **it.update})

    # ---------------------------------------------------------------- evaluation and checkpoints
    def evaluate(self, steps: int, deals: Optional[int] = None, final: bool = False) -> Dict[str, Any]:
        cfg = self.cfg
        t0 = time.perf_counter()
        d = deals or cfg.evaluation.deals
        out = self.run / "evals" / (f"final_step_{steps:09d}" if final else f"step_{steps:09d}")
        summary = evaluate_policy(self.weights(), out, cfg.evaluation, cfg.rules, d,
                                  progress=final and cfg.progress and not self.quiet)
        summary["timesteps"] = steps
        summary["deals"] = d
        for spec, s in summary["per_opponent"].items():
            self.scalar(f"eval/win_rate_vs_{spec}", s["win_rate"], steps)
            self.scalar(f"eval/adp_vs_{spec}", s["adp"], steps)
        self.scalar("eval/elo", summary["elo"], steps)
        self.metric({"kind": "final_eval" if final else "eval", "timesteps": steps, "deals": d,
                     "elo": summary["elo"],
                     **{f"win_rate_vs_{k}": v["win_rate"] for k, v in summary["per_opponent"].items()},
                     **{f"win_rate_ci_vs_{k}": v["win_rate_ci"] for k, v in summary["per_opponent"].items()},
                     **{f"adp_vs_{k}": v["adp"] for k, v in summary["per_opponent"].items()}})
        self.log(eval_line(summary, steps, final, time.perf_counter() - t0))
        if not final:
            self.state["evals"] = self.state.get("evals", 0) + 1
            score = eval_score(summary, cfg.evaluation.best_by)
            best = self.state.get("best_score")
            if best is None or score > best:
                self.state["best_score"] = score
                self.state["best_step"] = steps
                self.checkpoint(self.run / "best", periodic=False, extra={"eval.json": summary})
        if self.writer is not None:
            self.writer.flush()
        return summary

    def checkpoint(self, path: Path, periodic: bool, extra: Optional[Dict[str, Any]] = None) -> None:
        """Write a checkpoint to ``path`` (``extra``: more JSON files in it, by name): the learner's
        files, ``actor.npz``, the snapshot pool and ``trainer.json``; committed in one swap."""
        tmp = self.checkpoint_tmp(path)
        meta = self.learner.save(tmp)
        save_actor(self.weights(), tmp / ACTOR_FILE)
        if not self.own_snapshots:
            save_snapshots(self.snapshots, tmp / SNAPSHOTS_FILE)
        if self.league is not None:
            self.league.save(tmp, self.timesteps)
            self.league.write_run_files(self.timesteps, self.writer)
        write_json(tmp / "trainer.json", {"num_timesteps": int(self.timesteps), "state": self.state,
                                          "backend": self.cfg.backend, **meta, "config": config_to_dict(self.cfg)})
        self.commit_checkpoint(tmp, path, periodic, extra)

    @staticmethod
    def checkpoint_tmp(path: Path) -> Path:
        """A fresh, empty folder next to ``path`` to write its new checkpoint in."""
        tmp = path.with_name(path.name + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        return tmp

    def commit_checkpoint(self, tmp: Path, path: Path, periodic: bool,
                          extra: Optional[Dict[str, Any]] = None) -> None:
        """Swap a checkpoint written to ``tmp`` (plus the JSON files ``extra``) into place; point
        ``latest.txt`` at it; rotate the periodic ones."""
        for name, data in (extra or {}).items():
            write_json(tmp / name, data)
        replace_dir(tmp, path)
        if periodic:
            ck = self.run / "checkpoints"
            write_text(ck / "latest.txt", path.name + "\n")
            if self.cfg.keep_checkpoints > 0:
                olds = sorted(p for p in ck.iterdir() if p.is_dir() and p.name.startswith("step_")
                              and p.name[len("step_"):].isdigit() and p != path)
                for p in olds[:max(0, len(olds) + 1 - self.cfg.keep_checkpoints)]:
                    shutil.rmtree(p)

    # ---------------------------------------------------------------- run
    def learn(self) -> None:
        """Iterations until ``total_timesteps``, or until Ctrl-C (the update in hand finishes; a
        rollout cut short is dropped)."""
        total = self.cfg.total_timesteps
        if self.timesteps >= total:
            self.log(f"already at {self.timesteps:,} timesteps (total_timesteps {total:,})")
            return
        if self.cfg.progress and not self.quiet:
            self.bar = tqdm(total=total, initial=self.timesteps, unit="step", desc=f"train ({self.cfg.backend})",
                            file=sys.stderr, dynamic_ncols=True, smoothing=0.05)
        try:
            with self.stop:
                while self.timesteps < total and not self.stop.requested:
                    self.between_updates()
                    t0 = time.perf_counter()
                    try:
                        it = self.play_and_update(total - self.timesteps)
                    except SamplersLost as e:     # the learner is as after its last update
                        self.lost = e
                        break
                    if it is None:
                        break
                    self.timesteps += it.decisions
                    self.context.timesteps = self.timesteps
                    self.state["updates"] += 1
                    self.record(it, time.perf_counter() - t0)
                    if self.league is not None:
                        self.league.after_main(it.games, self.timesteps, self.learner.actor(),
                                               lambda: self.stop.requested)
                    if self.bar is not None:
                        self.bar.update(it.decisions)
            self.interrupted = self.stop.requested
        finally:
            if self.bar is not None:
                self.bar.close()
                self.bar = None

    def raise_if_interrupted(self, history: List[Dict[str, Any]], t0: float) -> None:
        """After :meth:`learn`: if Ctrl-C stopped it, or its samplers were lost, write a checkpoint
        (``checkpoints/step_N``, pointed to by ``latest.txt``), close the session in ``run.json`` and
        raise :class:`TrainingInterrupted` (Ctrl-C) or :class:`SamplersLost` (one line: what was lost,
        where the checkpoint is, how to continue)."""
        if not self.interrupted and self.lost is None:
            return
        steps = self.steps()
        path = self.run / "checkpoints" / f"step_{steps:09d}"
        self.checkpoint(path, periodic=True)
        end_session(self.run, history, time.perf_counter() - t0)
        resume = f"checkpoint {path}; continue with: {handfoot_command()} train --resume {self.run}"
        if self.lost is not None:
            raise SamplersLost(f"{self.lost} at {steps:,} timesteps; {resume}")
        raise TrainingInterrupted(f"interrupted at {steps:,} timesteps; {resume}")

    def finish(self) -> Dict[str, Any]:
        """The evaluation and checkpoint due at the last step, the final checkpoint, best model,
        final evaluation and learning curve; the run's result."""
        cfg = self.cfg
        steps = self.timesteps
        self.run_schedules(steps)
        self.checkpoint(self.run / "final", periodic=False)
        if self.state.get("best_score") is None:     # no evaluation during training: final is best
            tmp = self.run / "best.tmp"
            if tmp.exists():
                shutil.rmtree(tmp)
            shutil.copytree(self.run / "final", tmp)
            replace_dir(tmp, self.run / "best")
        final = None
        if cfg.evaluation.final_deals > 0:
            final = self.evaluate(steps, deals=cfg.evaluation.final_deals, final=True)
            write_json(self.run / "final_eval.json", final)
        if self.writer is not None:
            self.writer.flush()
        plot_learning_curve(self.run)
        out = {"run": str(self.run), "timesteps": steps, "final_eval": final, "best_step": self.state.get("best_step"),
               "best_score": self.state.get("best_score"), "iterations": int(self.state["updates"])}
        if "env_steps" in self.state:
            out["env_steps"] = int(self.state["env_steps"])
        return out

    def close(self) -> None:
        """Stop the samplers and the learner, flush the logs (also after an error)."""
        for part in (self.samplers, self.league, self.learner):
            try:
                if part is not None:
                    part.close()
            except Exception:  # noqa: BLE001 - closing dead workers must not hide the real error
                pass
        if self.writer is not None:
            self.writer.flush()
            self.writer.close()


# =========================================================================== entry points
def run_session(trainer: Trainer, info: Dict[str, Any]) -> Dict[str, Any]:
    """Run one training session of ``trainer``, recording it in the run's ``run.json``.

    Seeds Python's and NumPy's generators from the config, sets the trainer up, lets it complete
    ``info`` (:meth:`Trainer.session_started`), learns, finishes (final checkpoint and evaluation)
    and always closes the trainer; returns its result with ``wall_s``.
    """
    random.seed(trainer.cfg.seed)
    np.random.seed(trainer.cfg.seed)
    t0 = time.perf_counter()
    history: List[Dict[str, Any]] = []
    try:
        trainer.setup()
        line = trainer.session_started(info)
        history = start_session(trainer.run, info)
        trainer.log(line)
        trainer.learn()
        trainer.raise_if_interrupted(history, t0)
        result = trainer.finish()
    finally:
        trainer.close()
    result["wall_s"] = time.perf_counter() - t0
    end_session(trainer.run, history, result["wall_s"])
    return result


def warm_core(cfg: TrainConfig) -> None:
    """The compiled core loaded before training starts its progress bar, when the batched samplers play
    on it: the first run after an install compiles it here, saying so, and the bar's rate starts after
    (``handfoot train`` and ``handfoot experiment`` call it)."""
    from handfoot_env.compiled import available, load, resolve_core
    if backend(cfg.backend).family == "rollout" and available() and resolve_core(cfg.batched.core) == "compiled":
        load()


def train(cfg: TrainConfig, resume: Optional[Union[str, Path]] = None, quiet: bool = False,
          argv: Optional[List[str]] = None) -> Dict[str, Any]:
    """Run (or continue) one training run of any backend in its run folder; returns
    ``{"run", "timesteps", "final_eval", "best_step", "best_score", "iterations", "wall_s"}``.

    The one in-process entry point (``handfoot train``, ``handfoot experiment`` and sweeps call it).
    Every agent the run plays is loaded once here before any worker starts (a bad ``policy:``
    path is a ConfigError); Ctrl-C ends the run with a checkpoint and :class:`TrainingInterrupted`.
    """
    cfg.validate()
    check_agents(cfg)
    if cfg.init is not None and not (resume or cfg.resume):
        init_weights(cfg)                   # a file that is not a policy, or a shape that does not fit: one line
    backend(cfg.backend).factory()          # a missing package (Ray for rllib) is a ConfigError before the run folder
    if cfg.league.enabled and (resume or cfg.resume):
        from experiments.runs import resolve_resume
        from experiments.training.league import check_league_checkpoint
        check_league_checkpoint(resolve_resume(resume or cfg.resume), cfg)   # another run's league: nothing written
    run, ck = open_run(cfg, resume or cfg.resume)
    info = session_info(cfg, ck, argv, {"python/numpy/torch": cfg.seed, "envs": None,
                                        "evaluation": cfg.evaluation.seed})
    return run_session(Trainer(cfg, run, resume=ck, quiet=quiet), info)


__all__ = ["Trainer", "TrainingInterrupted", "train", "run_session", "resume_seed", "save_snapshots",
           "load_snapshots", "SNAPSHOTS_FILE"]
