"""The SB3 trainer: one self-play MaskablePPO run from a training config (``backend: sb3``).

Usage::

    handfoot train configs/train/quickstart.yaml
    handfoot train configs/train/quickstart.yaml --set total_timesteps=50000 --set ppo.n_steps=128
    handfoot train --resume runs/quickstart-s0/checkpoints/step_000100352    # continue a run
    handfoot train --help-config                                             # every config field

Python::

    from experiments.training.config import TrainConfig
    from experiments.training.run import train
    result = train(TrainConfig(total_timesteps=20_000))

What a run does (see :mod:`experiments.training.selfplay` for the environment design):

* builds ``n_envs`` :class:`~experiments.training.selfplay.SeatEnv` workers (``SubprocVecEnv``, one
  torch thread each) and a MaskablePPO model with :class:`~experiments.training.sb3.HandFootPolicy`
  (sizes from ``network``);
* before every rollout, pushes the learner's actor weights to the workers (they play the
  learner's partner and ``self`` opponents); every ``snapshots.every_updates`` updates it
  freezes a snapshot of the learner into the opponent pool (the last ``snapshots.keep`` are kept);
  each episode draws its opponents from the ``opponents`` mixture;
* every ``evaluation.every_timesteps`` evaluates the learner (greedy actor) with the duplicate
  evaluation harness (:mod:`experiments.evaluation`) in a round-robin with the
  ``evaluation.opponents``: win rate and ADP against each, and an Elo rating (Bradley-Terry on
  the round-robin, shifted so that ``random`` sits at 1000); the best checkpoint by
  ``evaluation.best_by`` is kept in ``RUN/best``;
* saves a checkpoint every ``checkpoint_every`` timesteps (``RUN/checkpoints/step_N``: ``actor.npz``
  for ``policy:PATH``; ``model_state.npz`` (policy and optimizer state), ``snapshots.npz`` (the
  opponent pool) and ``trainer.json`` for resuming; and SB3's ``model.zip`` for use with SB3)
  and ``RUN/final`` at the end.  Each checkpoint folder, ``best/``, ``final/`` and
  ``checkpoints/latest.txt`` is written under a temporary name and then swapped in.

Run folder (``run_dir/run_name``, default ``runs/NAME-sSEED``; an existing folder gets a
time suffix): ``config.yaml`` (resolved), ``run.json`` (seeds, package versions, git commit,
command line), ``tb/`` (TensorBoard: SB3's ``train/*``, ``rollout/*``, ``time/fps``; plus
``selfplay/*`` results of training games by opponent kind and ``eval/*``), ``metrics.jsonl``
(one line per rollout and per evaluation), ``checkpoints/``, ``best/``, ``final/``,
``evals/step_N/results.json`` (each evaluation), ``final_eval.json`` and ``learning_curve.png``.

``--resume PATH`` (a checkpoint folder, or a run folder: its latest checkpoint) continues in the
run folder that holds the checkpoint: the step count, snapshot pool, best score and schedules
continue, ``metrics.jsonl`` rows written after the checkpoint are dropped (the resumed run writes
them again) and TensorBoard logs go to the same ``tb/`` folder.  Resuming reads arrays and JSON
only: the model is rebuilt from the config and its state loaded from ``model_state.npz``
(``model.zip`` is not read).  A checkpoint of an older version (``snapshots.pkl``, no
``model_state.npz``) holds pickles and is resumed only with ``HANDFOOT_TRUST_PICKLE=1``.

Ctrl-C stops a run cleanly: the current environment step finishes, the run goes back to its last
update (the rollout in progress is dropped), a checkpoint ``RUN/checkpoints/step_N`` is written
and :class:`TrainingInterrupted` is raised (``handfoot train`` prints one line and exits 130);
``handfoot train --resume RUN`` continues.  A second Ctrl-C stops at once.  Worker processes
ignore Ctrl-C and exit when the trainer dies.

Reproducibility: the config ``seed`` seeds python ``random``, NumPy and torch (SB3's
``set_random_seed``), the worker environments (worker ``i`` gets ``seed + i``; its games,
learner seats, opponent draws, partner/snapshot sampling and heuristic seeds all come from
that one generator) and evaluation (``evaluation.seed``).  Workers return results in env order,
so the same config and seed give identical metrics on the same machine (timings excepted).
A resumed run reseeds from ``(seed, timesteps)``; it is reproducible itself but does not repeat
the uninterrupted run bit for bit.

Config errors (an unknown field, a badly typed value) name the field and exit with status 2.

``backend: rllib`` hands the whole run to :mod:`experiments.training.rllib` (RLlib PPO on Ray, same
run folder layout); everything above describes the default ``backend: sb3``.
"""
from __future__ import annotations

import json
import pickle
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import torch as th
import yaml
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import TensorBoardOutputFormat, configure
from tqdm import tqdm

from agents.files import require_trust
from agents.policy import ACTOR_FILE, actor_arrays, actor_from_arrays, save_actor
from agents.sb3_model import extract_weights
from experiments.config import ConfigError, config_to_dict
from experiments.evaluation.report import eval_line, plot_learning_curve
from experiments.evaluation.summary import eval_score, evaluate_policy
from experiments.processes import StopRequest
from experiments.runs import _json_default, end_session, replace_dir, truncate_metrics, write_json, write_text
from experiments.training.config import TrainConfig, env_kwargs
from experiments.training.sb3 import HandFootPolicy, build_model, load_model_state, model_state
from experiments.training.selfplay import make_vec_env
import random
from experiments.runs import start_session

MODEL_STATE = "model_state.npz"
SNAPSHOTS_FILE = "snapshots.npz"
LEGACY_SNAPSHOTS = "snapshots.pkl"


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


class _TrainerHooks(BaseCallback):
    """SB3's callback points, handed to the :class:`Trainer` (rollout start and end, each step)."""

    def __init__(self, trainer: "Trainer"):
        super().__init__()
        self.trainer = trainer
        self.results: List[Dict[str, Any]] = []

    def _on_rollout_start(self) -> None:
        self.trainer.on_rollout_start()
        self.results = []

    def _on_step(self) -> bool:
        if self.trainer.stop.requested:
            return False                  # Ctrl-C: SB3 stops after this step, before the update
        for info in self.locals["infos"]:
            r = info.get("selfplay")
            if r is not None:
                self.results.append(r)
        if self.trainer.bar is not None:
            self.trainer.bar.update(self.training_env.num_envs)
        return True

    def _on_rollout_end(self) -> None:
        self.trainer.on_rollout_end(self.results)


# =========================================================================== trainer
class Trainer:
    """Holds one run: model, envs, opponent pool, schedules, logging (see the module docstring)."""

    def __init__(self, cfg: TrainConfig, run: Path, resume: Optional[Path] = None, quiet: bool = False):
        self.cfg = cfg
        self.run = run
        self.quiet = quiet
        self.resume = resume
        self.state: Dict[str, Any] = {"updates": 0, "best_score": None, "best_step": None, "next_eval": None,
                                      "next_checkpoint": None, "snapshot_updates": [], "evals": 0}
        self.snapshots: List[Dict[str, Any]] = []
        self.writer = None
        self.bar = None
        self.stop = StopRequest()
        self.interrupted = False

    # ---------------------------------------------------------------- helpers
    def log(self, msg: str) -> None:
        if self.quiet:
            return
        if self.bar is not None:
            self.bar.write(msg, file=sys.stderr)
        else:
            print(msg, file=sys.stderr, flush=True)

    def weights(self) -> Dict[str, Any]:
        return extract_weights(self.model.policy)

    def metric(self, record: Dict[str, Any]) -> None:
        with open(self.run / "metrics.jsonl", "a") as f:
            f.write(json.dumps(record, default=_json_default) + "\n")

    def scalar(self, tag: str, value: Optional[float], step: int) -> None:
        if self.writer is not None and value is not None and np.isfinite(value):
            self.writer.add_scalar(tag, float(value), step)

    # ---------------------------------------------------------------- setup
    def setup(self) -> None:
        cfg = self.cfg
        th.set_num_threads(cfg.torch_threads)
        th.distributions.Distribution.set_default_validate_args(False)   # skip per-step argument checks
        start_steps = 0
        legacy = False
        if self.resume is not None:
            st = json.loads((self.resume / "trainer.json").read_text())
            start_steps = int(st["num_timesteps"])
            legacy = self.check_resume_files()
            truncate_metrics(self.run, start_steps)
        # a resumed run reseeds from (seed, timesteps) so that it does not replay the first games
        env_seed = cfg.seed if start_steps == 0 else int(np.random.SeedSequence([cfg.seed, start_steps])
                                                         .generate_state(1)[0] % (2 ** 31))
        self.env_seed = env_seed
        self.venv = make_vec_env(env_kwargs(cfg), cfg.n_envs, env_seed, subprocess=cfg.vec_env == "subproc")
        if self.resume is None:
            self.model = build_model(cfg, self.venv, cfg.seed)
        elif legacy:                       # an older checkpoint: pickles, allowed by HANDFOOT_TRUST_PICKLE=1
            self.model = MaskablePPO.load(str(self.resume / "model.zip"), env=self.venv, device="cpu",
                                          custom_objects={"policy_class": HandFootPolicy})
            self.model.set_random_seed(env_seed)
            with open(self.resume / LEGACY_SNAPSHOTS, "rb") as f:
                self.snapshots = pickle.load(f)
        else:
            self.model = build_model(cfg, self.venv, env_seed)
            try:
                with np.load(self.resume / MODEL_STATE, allow_pickle=False) as z:
                    load_model_state(self.model, z, st["model"])
            except (KeyError, ValueError, RuntimeError) as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise ConfigError(f"resume: {self.resume / MODEL_STATE} does not fit the model of the config "
                                  f"(network or ppo settings changed?): {first[:200]}") from None
            self.snapshots = load_snapshots(self.resume / SNAPSHOTS_FILE)
        if self.resume is not None:
            self.model.num_timesteps = start_steps
            self.state.update(st["state"])
        tb = self.run / "tb"
        logger = configure(str(tb), ["tensorboard"])
        self.model.set_logger(logger)
        for fmt in logger.output_formats:
            if isinstance(fmt, TensorBoardOutputFormat):
                self.writer = fmt.writer
        self.start_logs_and_schedules()
        self.sync(snapshots=True)

    def check_resume_files(self) -> bool:
        """Check the checkpoint to resume before any worker starts; True for an older (pickle) checkpoint."""
        ck = self.resume
        if (ck / MODEL_STATE).is_file() and (ck / SNAPSHOTS_FILE).is_file():
            return False
        if (ck / LEGACY_SNAPSHOTS).is_file() and (ck / "model.zip").is_file():
            try:
                require_trust(ck / LEGACY_SNAPSHOTS, "a checkpoint of an older version (snapshots.pkl, model.zip)")
            except ValueError as e:
                raise ConfigError(f"resume: {e}") from None
            return True
        raise ConfigError(f"resume: {str(ck)!r} has no {MODEL_STATE} and {SNAPSHOTS_FILE} (not an sb3 checkpoint)")

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

    def freeze_snapshot_if_due(self, steps: int) -> bool:
        """Every ``snapshots.every_updates`` updates, freeze the learner into the pool (the last
        ``snapshots.keep`` are kept); whether the pool changed."""
        cfg = self.cfg
        upd = self.state["updates"]
        if upd == 0 or upd % cfg.snapshots.every_updates or upd in self.state["snapshot_updates"]:
            return False
        self.snapshots.append(self.weights())
        self.state["snapshot_updates"].append(upd)
        self.snapshots = self.snapshots[-cfg.snapshots.keep:]
        self.state["snapshot_updates"] = self.state["snapshot_updates"][-cfg.snapshots.keep:]
        self.scalar("selfplay/snapshots", len(self.snapshots), steps)
        return True

    def sync(self, snapshots: bool = False) -> None:
        """Push the learner's (and, when changed, the snapshot pool's) actor weights to every worker."""
        self.venv.env_method("set_learner", self.weights())
        if snapshots:
            self.venv.env_method("set_snapshots", self.snapshots)

    # ---------------------------------------------------------------- the loop hooks
    def on_rollout_start(self) -> None:
        """Between updates: snapshots, evaluation, checkpoints, then the weight sync."""
        steps = self.model.num_timesteps
        self.update_steps = steps         # where an interrupted rollout goes back to
        self.record_update()
        changed = self.freeze_snapshot_if_due(steps)
        self.run_schedules(steps)
        self.sync(snapshots=changed)

    def run_schedules(self, steps: int) -> None:
        """The periodic evaluation and checkpoint whose step has come (shared with the RLlib trainer)."""
        cfg = self.cfg
        self.evaluate_if_due(steps)
        nc = self.state["next_checkpoint"]
        if nc is not None and steps >= nc:
            self.checkpoint(self.run / "checkpoints" / f"step_{steps:09d}", periodic=True)
            while self.state["next_checkpoint"] <= steps:
                self.state["next_checkpoint"] += cfg.checkpoint_every

    def record_update(self) -> None:
        """The losses of the update that just ran (SB3's ``train/*`` values) into metrics.jsonl."""
        vals = {k[len("train/"):]: float(v) for k, v in self.model.logger.name_to_value.items()
                if k.startswith("train/") and isinstance(v, (int, float, np.floating, np.integer))}
        if vals and self.state["updates"] > 0:
            self.metric({"kind": "update", "timesteps": int(self.model.num_timesteps),
                         "update": self.state["updates"], **vals})

    def on_rollout_end(self, results: List[Dict[str, Any]]) -> None:
        """After a rollout: training-game statistics to TensorBoard and metrics.jsonl."""
        m = self.model
        steps = m.num_timesteps
        self.state["updates"] += 1            # the update that follows this rollout
        rec: Dict[str, Any] = {"kind": "rollout", "timesteps": steps, "update": self.state["updates"]}
        if len(m.ep_info_buffer) > 0:
            rec["ep_rew_mean"] = float(np.mean([e["r"] for e in m.ep_info_buffer]))
            rec["ep_len_mean"] = float(np.mean([e["l"] for e in m.ep_info_buffer]))
        by_kind: Dict[str, List[float]] = {}
        for r in results:
            by_kind.setdefault(r["opponent"], []).append(r["result"])
        for kind, vals in sorted(by_kind.items()):
            m.logger.record(f"selfplay/result_vs_{kind}", float(np.mean(vals)))
            rec[f"result_vs_{kind}"] = float(np.mean(vals))
        if results:
            m.logger.record("selfplay/games", len(results))
            m.logger.record("selfplay/score_diff", float(np.mean([r["score_diff"] for r in results])))
            m.logger.record("selfplay/truncated", float(np.mean([r["truncated"] for r in results])))
            rec["games"] = len(results)
        self.metric(rec)

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
        """Write a checkpoint to ``path`` (``extra``: more JSON files in it, by name)."""
        tmp = self.checkpoint_tmp(path)
        self.model.save(str(tmp / "model.zip"))
        save_actor(self.weights(), tmp / ACTOR_FILE)
        arrays, meta = model_state(self.model)
        with open(tmp / MODEL_STATE, "wb") as f:
            np.savez(f, **arrays)
        save_snapshots(self.snapshots, tmp / SNAPSHOTS_FILE)
        write_json(tmp / "trainer.json", {"num_timesteps": int(self.model.num_timesteps), "state": self.state,
                                          "model": meta, "config": config_to_dict(self.cfg)})
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

    def learn_in_iterations(self, desc: str) -> None:
        """The learning loop of a backend that trains in iterations (rllib, batched): its
        ``iterate(total)`` runs rollouts and updates until ``total`` timesteps or until Ctrl-C."""
        total = self.cfg.total_timesteps
        if self.timesteps >= total:
            self.log(f"already at {self.timesteps:,} timesteps (total_timesteps {total:,})")
            return
        if self.cfg.progress and not self.quiet:
            self.bar = tqdm(total=total, initial=self.timesteps, unit="step", desc=desc,
                            file=sys.stderr, dynamic_ncols=True, smoothing=0.05)
        try:
            with self.stop:
                self.iterate(total)
            self.interrupted = self.stop.requested
        finally:
            if self.bar is not None:
                self.bar.close()
                self.bar = None

    def steps(self) -> int:
        """Learner timesteps so far."""
        return int(self.model.num_timesteps)

    def raise_if_interrupted(self, history: List[Dict[str, Any]], t0: float) -> None:
        """After :meth:`learn`: if Ctrl-C stopped it, write a checkpoint (``checkpoints/step_N``, pointed
        to by ``latest.txt``), close the session in ``run.json`` and raise :class:`TrainingInterrupted`."""
        if not self.interrupted:
            return
        steps = self.steps()
        path = self.run / "checkpoints" / f"step_{steps:09d}"
        self.checkpoint(path, periodic=True)
        end_session(self.run, history, time.perf_counter() - t0)
        raise TrainingInterrupted(f"interrupted at {steps:,} timesteps; checkpoint {path}; "
                                  f"continue with: handfoot train --resume {self.run}")

    # ---------------------------------------------------------------- run
    def learn(self) -> None:
        remaining = self.cfg.total_timesteps - self.model.num_timesteps
        if remaining <= 0:
            self.log(f"already at {self.model.num_timesteps:,} timesteps "
                     f"(total_timesteps {self.cfg.total_timesteps:,})")
            return
        if self.cfg.progress and not self.quiet:
            self.bar = tqdm(total=self.cfg.total_timesteps, initial=self.model.num_timesteps, unit="step",
                            desc="train", file=sys.stderr, dynamic_ncols=True, smoothing=0.05)
        self.update_steps = self.model.num_timesteps
        try:
            with self.stop:
                self.model.learn(total_timesteps=remaining, callback=_TrainerHooks(self), reset_num_timesteps=False)
            if self.stop.requested:
                # the rollout in progress is dropped: the model is the one of its last update
                self.model.num_timesteps = self.update_steps
                self.interrupted = True
        finally:
            if self.bar is not None:
                self.bar.close()
                self.bar = None

    def finish(self) -> Dict[str, Any]:
        cfg = self.cfg
        steps = self.model.num_timesteps
        self.record_update()
        # the last update has not been seen by on_rollout_start: evaluate it here
        self.evaluate_if_due(steps)
        if self.state["next_checkpoint"] is not None and steps >= self.state["next_checkpoint"]:
            while self.state["next_checkpoint"] <= steps:
                self.state["next_checkpoint"] += cfg.checkpoint_every
            self.checkpoint(self.run / "checkpoints" / f"step_{steps:09d}", periodic=True)
        return self.finish_run(steps)

    def evaluate_if_due(self, steps: int) -> None:
        """The periodic evaluation, when its step has come."""
        if self.state["next_eval"] is not None and steps >= self.state["next_eval"]:
            self.evaluate(steps)
            while self.state["next_eval"] <= steps:
                self.state["next_eval"] += self.cfg.evaluation.every_timesteps

    def finish_run(self, steps: int) -> Dict[str, Any]:
        """Final checkpoint, best model, final evaluation and learning curve (both backends)."""
        cfg = self.cfg
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
        return {"run": str(self.run), "timesteps": steps, "final_eval": final, "best_step": self.state.get("best_step"),
                "best_score": self.state.get("best_score")}

    def session_started(self, info: Dict[str, Any]) -> str:
        """After :meth:`setup`: complete the session's provenance ``info``; the line to log."""
        info["seeds"]["envs"] = f"worker i: {self.env_seed} + i"
        resumed = f" (resumed from {self.resume} at {self.model.num_timesteps:,} steps)" if self.resume else ""
        return f"run folder: {self.run}{resumed}"

    def close(self) -> None:
        try:
            self.venv.close()
        except Exception:  # noqa: BLE001 - closing dead workers must not hide the real error
            pass
        if self.writer is not None:
            self.writer.flush()


# =========================================================================== entry points


def run_session(trainer: Trainer, info: Dict[str, Any]) -> Dict[str, Any]:
    """Run one training session of any backend's ``trainer``, recording it in the run's ``run.json``.

    Seeds Python's and NumPy's generators from the config, sets the trainer up, lets the
    backend complete ``info`` (:meth:`Trainer.session_started`), learns, finishes (final
    checkpoint and evaluation) and always closes the trainer; returns its result with ``wall_s``.
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
