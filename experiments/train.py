"""``handfoot train CONFIG``: self-play MaskablePPO from a YAML config.

Usage::

    handfoot train configs/train/quickstart.yaml
    handfoot train configs/train/quickstart.yaml --set total_timesteps=50000 --set ppo.n_steps=128
    handfoot train --resume runs/quickstart-s0/checkpoints/step_000100352    # continue a run
    handfoot train --help-config                                             # every config field

Python::

    from experiments.train import TrainConfig, train
    result = train(TrainConfig(total_timesteps=20_000))

What a run does (see :mod:`experiments.selfplay` for the environment design):

* builds ``n_envs`` :class:`~experiments.selfplay.SeatEnv` workers (``SubprocVecEnv``, one
  torch thread each) and a MaskablePPO model with :class:`~experiments.selfplay.HandFootPolicy`
  (sizes from ``network``);
* before every rollout, pushes the learner's actor weights to the workers (they play the
  learner's partner and ``self`` opponents); every ``snapshots.every_updates`` updates it
  freezes a snapshot of the learner into the opponent pool (the last ``snapshots.keep`` are kept);
  each episode draws its opponents from the ``opponents`` mixture;
* every ``evaluation.every_timesteps`` evaluates the learner (greedy actor) with the duplicate
  evaluation harness (:mod:`experiments.evaluate`) in a round-robin with the
  ``evaluation.opponents``: win rate and ADP against each, and an Elo rating (Bradley-Terry on
  the round-robin, shifted so that ``random`` sits at 1000); the best checkpoint by
  ``evaluation.best_by`` is kept in ``RUN/best``;
* saves a checkpoint every ``checkpoint_every`` timesteps (``RUN/checkpoints/step_N``: SB3
  ``model.zip`` with optimizer state, ``actor.npz`` for ``policy:PATH``, ``trainer.json`` and
  ``snapshots.pkl`` for resuming) and ``RUN/final`` at the end.

Run folder (``run_dir/run_name``, default ``runs/NAME-sSEED``; an existing folder gets a
time suffix): ``config.yaml`` (resolved), ``run.json`` (seeds, package versions, git commit,
command line), ``tb/`` (TensorBoard: SB3's ``train/*``, ``rollout/*``, ``time/fps``; plus
``selfplay/*`` results of training games by opponent kind and ``eval/*``), ``metrics.jsonl``
(one line per rollout and per evaluation), ``checkpoints/``, ``best/``, ``final/``,
``evals/step_N/results.json`` (each evaluation), ``final_eval.json`` and ``learning_curve.png``.

``--resume PATH`` (a checkpoint folder, or a run folder: its latest checkpoint) continues in the
checkpoint's run folder: the step count, snapshot pool, best score and schedules continue and
TensorBoard logs go to the same ``tb/`` folder.

Reproducibility: the config ``seed`` seeds python ``random``, NumPy and torch (SB3's
``set_random_seed``), the worker environments (worker ``i`` gets ``seed + i``; its games,
learner seats, opponent draws, partner/snapshot sampling and heuristic seeds all come from
that one generator) and evaluation (``evaluation.seed``).  Workers return results in env order,
so the same config and seed give identical metrics on the same machine (timings excepted).
A resumed run reseeds from ``(seed, timesteps)``; it is reproducible itself but does not repeat
the uninterrupted run bit for bit.

Config errors (an unknown field, a badly typed value) name the field and exit with status 2.

``backend: rllib`` hands the whole run to :mod:`experiments.rllib_backend` (RLlib PPO on Ray, same
run folder layout); everything above describes the default ``backend: sb3``.
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import json
import math
import os
import pickle
import platform
import random
import shutil
import subprocess
import sys
import time
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import numpy as np
import yaml

from agents.policy import ACTOR_FILE, save_actor
from handfoot_env.config import read_yaml as read_yaml_file

# =========================================================================== config


class ConfigError(ValueError):
    """A malformed train/experiment config (the CLI exits with status 2)."""


@dataclass
class PPOConfig:
    """MaskablePPO hyperparameters (SB3 names)."""

    learning_rate: float = 3e-4
    """Adam learning rate (constant)."""
    n_steps: int = 256
    """Transitions collected per environment per rollout; one update per rollout."""
    batch_size: int = 512
    """Minibatch size for the gradient steps."""
    n_epochs: int = 4
    """Passes over each rollout."""
    gamma: float = 0.995
    """Discount per learner decision (a game is about 250 decisions of one seat)."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_range: float = 0.2
    """PPO clip range."""
    ent_coef: float = 0.01
    """Entropy bonus coefficient."""
    vf_coef: float = 0.5
    """Value loss coefficient."""
    max_grad_norm: float = 0.5
    """Gradient norm clip."""
    target_kl: Optional[float] = None
    """Stop an update's epochs early when the approximate KL exceeds this (null: never)."""
    normalize_advantage: bool = True
    """Normalise advantages per minibatch."""


@dataclass
class NetworkConfig:
    """Policy and value network sizes."""

    pi: List[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy (actor) MLP."""
    vf: List[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the value (critic) MLP."""
    activation: str = "tanh"
    """Hidden activation: tanh or relu."""
    ortho_init: bool = True
    """Orthogonal initialisation (SB3 default)."""
    centralised_critic: bool = False
    """Give the critic the perfect-information state (encode_state) as well; the actor still sees only its seat."""


@dataclass
class ShapingConfig:
    """Potential-based reward shaping (off when both weights are 0)."""

    books: float = 0.0
    """Weight of the own team's books made this round in the potential."""
    points: float = 0.0
    """Weight of the own team's table points this round / 1000 (melds, books, red threes) in the potential."""


@dataclass
class SnapshotConfig:
    """The pool of frozen learner snapshots used as opponents (kind ``self_snapshots``)."""

    every_updates: int = 10
    """Freeze a snapshot of the learner every this many PPO updates."""
    keep: int = 5
    """Keep the last this many snapshots."""
    sampling: str = "uniform"
    """Which snapshot an episode plays: uniform over the pool, or latest."""


@dataclass
class EvaluationConfig:
    """Periodic evaluation with the duplicate harness (experiments.evaluate)."""

    every_timesteps: int = 50_000
    """Evaluate every this many timesteps (0: only at the end)."""
    deals: int = 10
    """Duplicate deals per pairing in a periodic evaluation (two games each)."""
    opponents: List[str] = field(default_factory=lambda: ["random", "greedy"])
    """Agent specs the learner is evaluated against (a round-robin with the learner)."""
    final_deals: int = 50
    """Duplicate deals per pairing in the evaluation at the end of training (0: none)."""
    best_by: str = "elo"
    """Metric that picks the best checkpoint: elo, or win_rate:SPEC / adp:SPEC for one opponent."""
    seed: int = 1_000_003
    """Seed of the evaluation deals (the same deals at every evaluation)."""
    workers: int = 2
    """Processes for evaluation (results do not depend on it)."""


@dataclass
class TrainConfig:
    """One self-play training run.  Every field has a default; a YAML config overrides some."""

    name: str = "selfplay"
    """Run name (the run folder is run_dir/NAME-sSEED unless run_name is set)."""
    seed: int = 0
    """Seed of every random source (see the module docstring)."""
    rules: str = "pagat"
    """Rule preset name or YAML path."""
    total_timesteps: int = 200_000
    """Learner transitions to train for (over all envs)."""
    n_envs: int = 4
    """Parallel environments (each one game seen by one learner seat)."""
    vec_env: str = "subproc"
    """subproc (one process per env, uses all cores) or dummy (in-process, for tests)."""
    torch_threads: int = 1
    """Torch threads in the trainer process (workers always use 1)."""
    reward: str = "round_score_diff"
    """Env reward: round_score_diff (per round, team minus opponents x reward_scale) or game_win (+1/-1)."""
    reward_scale: float = 0.001
    """Scale of round_score_diff rewards."""
    max_actions: Optional[int] = None
    """Truncate a game after this many actions (null: 3000 per round)."""
    opponents: Dict[str, float] = field(default_factory=lambda: {"self_snapshots": 0.5, "random": 0.2,
                                                                   "greedy": 0.3})
    """Opponent mixture: self (current learner), self_snapshots (pool) or agent specs, with weights."""
    snapshots: SnapshotConfig = field(default_factory=SnapshotConfig)
    """Snapshot schedule."""
    ppo: PPOConfig = field(default_factory=PPOConfig)
    """PPO hyperparameters."""
    network: NetworkConfig = field(default_factory=NetworkConfig)
    """Network sizes and critic inputs."""
    shaping: ShapingConfig = field(default_factory=ShapingConfig)
    """Optional reward shaping (off by default)."""
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    """Periodic and final evaluation."""
    checkpoint_every: int = 100_000
    """Save a checkpoint every this many timesteps (0: only best and final)."""
    keep_checkpoints: int = 3
    """Keep the last this many periodic checkpoints (0: keep all)."""
    run_dir: str = "runs"
    """Parent folder of run folders."""
    run_name: Optional[str] = None
    """Run folder name (default NAME-sSEED; a time suffix is added if it exists)."""
    resume: Optional[str] = None
    """Checkpoint (or run folder) to continue from; same as --resume."""
    progress: bool = True
    """Show tqdm progress bars."""
    backend: str = "sb3"
    """Training backend: sb3 (MaskablePPO, this module) or rllib (RLlib PPO on Ray, experiments.rllib_backend)."""
    rllib: Dict[str, Any] = field(default_factory=dict)
    """backend: rllib only: Ray and RLlib settings (env runners, envs per runner, ...; see docs/scaling_out.md)."""

    def validate(self) -> "TrainConfig":
        _check_choice("backend", self.backend, ("sb3", "rllib"))
        if self.backend == "rllib":
            from experiments.rllib_backend import validate_config
            validate_config(self)
        _check_choice("vec_env", self.vec_env, ("subproc", "dummy"))
        _check_choice("reward", self.reward, ("round_score_diff", "game_win"))
        _check_choice("network.activation", self.network.activation, ("tanh", "relu"))
        _check_choice("snapshots.sampling", self.snapshots.sampling, ("uniform", "latest"))
        for name, v, lo in (("total_timesteps", self.total_timesteps, 1), ("n_envs", self.n_envs, 1),
                            ("torch_threads", self.torch_threads, 1), ("ppo.n_steps", self.ppo.n_steps, 2),
                            ("ppo.batch_size", self.ppo.batch_size, 2), ("ppo.n_epochs", self.ppo.n_epochs, 1),
                            ("snapshots.every_updates", self.snapshots.every_updates, 1),
                            ("snapshots.keep", self.snapshots.keep, 1),
                            ("evaluation.every_timesteps", self.evaluation.every_timesteps, 0),
                            ("evaluation.deals", self.evaluation.deals, 1),
                            ("evaluation.final_deals", self.evaluation.final_deals, 0),
                            ("evaluation.workers", self.evaluation.workers, 1),
                            ("checkpoint_every", self.checkpoint_every, 0),
                            ("keep_checkpoints", self.keep_checkpoints, 0), ("seed", self.seed, 0)):
            if v < lo:
                raise ConfigError(f"{name}: must be at least {lo}, got {v}")
        if self.max_actions is not None and self.max_actions < 1:
            raise ConfigError(f"max_actions: must be positive or null, got {self.max_actions}")
        for name, v in (("ppo.gamma", self.ppo.gamma), ("ppo.gae_lambda", self.ppo.gae_lambda)):
            if not 0.0 <= v <= 1.0:
                raise ConfigError(f"{name}: must be in [0, 1], got {v}")
        for name, v in (("ppo.learning_rate", self.ppo.learning_rate), ("ppo.clip_range", self.ppo.clip_range)):
            if v <= 0:
                raise ConfigError(f"{name}: must be positive, got {v}")
        if any(h < 1 for h in self.network.pi + self.network.vf):
            raise ConfigError(f"network.pi/vf: layer sizes must be positive, got {self.network.pi} / {self.network.vf}")
        if not self.opponents:
            raise ConfigError("opponents: the mixture is empty")
        for k, w in self.opponents.items():
            if w < 0:
                raise ConfigError(f"opponents.{k}: weight must be non-negative, got {w}")
            if k not in ("self", "self_snapshots"):
                _check_spec(f"opponents.{k}", k)
        if sum(self.opponents.values()) <= 0:
            raise ConfigError("opponents: at least one weight must be positive")
        if not self.evaluation.opponents:
            raise ConfigError("evaluation.opponents: at least one opponent spec is needed")
        for spec in self.evaluation.opponents:
            _check_spec("evaluation.opponents", spec)
        b = self.evaluation.best_by
        if b != "elo":
            kind, _, spec = b.partition(":")
            if kind not in ("win_rate", "adp") or spec not in self.evaluation.opponents:
                raise ConfigError(f"evaluation.best_by: expected elo, win_rate:SPEC or adp:SPEC with SPEC one of "
                                  f"evaluation.opponents {self.evaluation.opponents}, got {b!r}")
        try:
            from handfoot_env.config import load_rules
            load_rules(self.rules)
        except Exception as e:  # noqa: BLE001 - report any rule problem as a config error
            raise ConfigError(f"rules: {e}") from None
        return self


def _check_choice(name: str, value: Any, choices) -> None:
    if value not in choices:
        raise ConfigError(f"{name}: expected one of {', '.join(map(str, choices))}, got {value!r}")


def _check_spec(name: str, spec: str) -> None:
    from agents.registry import BUILTIN
    if spec in BUILTIN:
        return
    if spec.startswith("policy:") and len(spec) > len("policy:"):
        return
    if spec.startswith("rllib:") and len(spec) > len("rllib:"):
        return
    raise ConfigError(f"{name}: unknown agent spec {spec!r}; expected one of {', '.join(BUILTIN)} or policy:PATH")


# ------------------------------------------------------------------ generic validation
def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return f"{_type_name(args[0])} or null"
    if origin in (list, List):
        return f"list of {_type_name(typing.get_args(tp)[0])}"
    if origin in (dict, Dict):
        k, v = typing.get_args(tp)
        return f"mapping of {_type_name(k)} to {_type_name(v)}"
    if dataclasses.is_dataclass(tp):
        return "mapping"
    return getattr(tp, "__name__", str(tp))


def _convert(tp: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if origin is Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return _convert(args[0], value, where)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        return _from_dict(tp, value, where + ".")
    if origin in (list, List):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected {_type_name(tp)}, got {value!r}")
        (inner,) = typing.get_args(tp)
        return [_convert(inner, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin in (dict, Dict):
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected {_type_name(tp)}, got {value!r}")
        kt, vt = typing.get_args(tp)
        return {_convert(kt, k, f"{where} key"): _convert(vt, v, f"{where}.{k}") for k, v in value.items()}
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer() and abs(value) >= 1000:   # 1e6 in YAML
            return int(value)
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):           # YAML 1.1 reads 3e-4 as a string
            try:
                return float(value)
            except ValueError:
                pass
    elif tp is str:
        if isinstance(value, str):
            return value
    elif tp is Any:
        return value
    raise ConfigError(f"{where}: expected {_type_name(tp)}, got {value!r}")


def _from_dict(cls: Any, data: Dict[str, Any], prefix: str = "") -> Any:
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    kwargs = {}
    for key, value in data.items():
        if key not in names:
            raise ConfigError(f"unknown field '{prefix}{key}' (known fields: {', '.join(names)})")
        kwargs[key] = _convert(hints[key], value, prefix + key)
    return cls(**kwargs)


def config_from_dict(cls: Any, data: Optional[Dict[str, Any]]) -> Any:
    """A validated ``cls`` (a config dataclass) from a mapping; :class:`ConfigError` names any bad field."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"the config must be a mapping of fields, got {type(data).__name__}")
    cfg = _from_dict(cls, data)
    if hasattr(cfg, "validate"):
        cfg.validate()
    return cfg


def read_yaml(path: Union[str, Path]) -> Dict[str, Any]:
    data = read_yaml_file(path, ConfigError, "config file")
    return data if data is not None else {}


def apply_overrides(data: Dict[str, Any], overrides: List[str]) -> Dict[str, Any]:
    """``--set a.b=VALUE`` overrides (VALUE parsed as YAML)."""
    data = json.loads(json.dumps(data))
    for item in overrides or []:
        if "=" not in item:
            raise ConfigError(f"--set expects KEY=VALUE, got {item!r}")
        key, _, raw = item.partition("=")
        value = yaml.safe_load(raw)
        node = data
        parts = key.strip().split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {key}: {part} is not a mapping")
        node[parts[-1]] = value
    return data


def load_train_config(path: Union[str, Path, None], overrides: Optional[List[str]] = None) -> TrainConfig:
    data = read_yaml(path) if path else {}
    return config_from_dict(TrainConfig, apply_overrides(data, overrides or []))


def config_to_dict(cfg: Any) -> Dict[str, Any]:
    return dataclasses.asdict(cfg)


def field_docs(cls: Any) -> Dict[str, str]:
    """The docstring under every field of a config dataclass (read from the source)."""
    src = inspect.getsource(cls)
    tree = ast.parse(src)
    body = tree.body[0].body
    docs = {}
    for i, node in enumerate(body):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and i + 1 < len(body):
            nxt = body[i + 1]
            if isinstance(nxt, ast.Expr) and isinstance(getattr(nxt, "value", None), ast.Constant) \
                    and isinstance(nxt.value.value, str):
                docs[node.target.id] = nxt.value.value.strip()
    return docs


def describe_config(cls: Any, prefix: str = "", instance: Any = None) -> List[str]:
    """Lines ``name: type = default  doc`` for every field, nested sections expanded."""
    lines = []
    docs = field_docs(cls)
    hints = typing.get_type_hints(cls)
    inst = instance if instance is not None else cls()
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        val = getattr(inst, f.name)
        if dataclasses.is_dataclass(tp):
            lines.append(f"{prefix}{f.name}:  {docs.get(f.name, '')}")
            lines += describe_config(tp, prefix + "  ", val)
        else:
            lines.append(f"{prefix}{f.name}: {_type_name(tp)} = {json.dumps(val)}\n{prefix}    {docs.get(f.name, '')}")
    return lines


# =========================================================================== run folder
def package_versions() -> Dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version
    out = {"python": platform.python_version()}
    for pkg in ("torch", "stable-baselines3", "sb3-contrib", "gymnasium", "pettingzoo", "numpy", "handfoot"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def git_commit() -> Optional[str]:
    try:
        r = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10,
                           cwd=Path(__file__).resolve().parent)
        if r.returncode == 0:
            dirty = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True, timeout=10,
                                   cwd=Path(__file__).resolve().parent)
            return r.stdout.strip() + ("-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return None


def make_run_folder(cfg: TrainConfig) -> Path:
    base = Path(cfg.run_dir)
    name = cfg.run_name or f"{cfg.name}-s{cfg.seed}"
    run = base / name
    if run.exists():
        run = base / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"
        i = 1
        while run.exists():
            run = base / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}-{i}"
            i += 1
    run.mkdir(parents=True)
    return run


def write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, default=_json_default) + "\n")
    os.replace(tmp, path)


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


# =========================================================================== model
def env_kwargs(cfg: TrainConfig) -> Dict[str, Any]:
    return dict(rules=cfg.rules, opponents=dict(cfg.opponents), reward=cfg.reward, reward_scale=cfg.reward_scale,
                shaping_books=cfg.shaping.books, shaping_points=cfg.shaping.points,
                centralised_critic=cfg.network.centralised_critic, max_actions=cfg.max_actions,
                snapshot_sampling=cfg.snapshots.sampling)


def build_model(cfg: TrainConfig, venv, seed: int):
    import torch as th
    from sb3_contrib import MaskablePPO

    from experiments.selfplay import ACTIVATIONS, HandFootPolicy, observation_scale
    from handfoot_env.config import load_rules
    from handfoot_env.observation import observation_size
    r = load_rules(cfg.rules)
    scale = observation_scale(r.players, r.teams, with_state=cfg.network.centralised_critic)
    fek: Dict[str, Any] = {"scale": scale.tolist()}
    if cfg.network.centralised_critic:
        fek["actor_visible"] = observation_size(r.players, r.teams)
    p = cfg.ppo
    policy_kwargs = dict(net_arch=dict(pi=list(cfg.network.pi), vf=list(cfg.network.vf)),
                         activation_fn=ACTIVATIONS[cfg.network.activation], ortho_init=cfg.network.ortho_init,
                         features_extractor_kwargs=fek)
    th.set_num_threads(cfg.torch_threads)
    return MaskablePPO(HandFootPolicy, venv, learning_rate=p.learning_rate, n_steps=p.n_steps,
                       batch_size=p.batch_size, n_epochs=p.n_epochs, gamma=p.gamma, gae_lambda=p.gae_lambda,
                       clip_range=p.clip_range, ent_coef=p.ent_coef, vf_coef=p.vf_coef,
                       max_grad_norm=p.max_grad_norm, target_kl=p.target_kl,
                       normalize_advantage=p.normalize_advantage, policy_kwargs=policy_kwargs, seed=seed,
                       device="cpu", verbose=0)


# =========================================================================== evaluation
ELO_ANCHOR = 1000.0


def evaluate_policy(weights: Dict[str, Any], out_dir: Path, cfg: EvaluationConfig, rules: str, deals: int,
                    label: str = "learner", progress: bool = False) -> Dict[str, Any]:
    """Evaluate actor ``weights`` with the duplicate harness: round-robin with ``cfg.opponents``.

    The actor is written to ``out_dir/actor.npz`` and played as ``policy:out_dir``.  Returns
    ``{"per_opponent": {spec: {win_rate, win_rate_ci, adp, adp_ci}}, "elo", "results"}``.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    save_actor(weights, out_dir / ACTOR_FILE)
    return evaluate_spec(f"policy:{out_dir}", out_dir, cfg.opponents, rules, deals, cfg.seed, cfg.workers,
                         progress=progress)


def evaluate_spec(spec: str, out_dir: Path, opponents: List[str], rules: str, deals: int, seed: int,
                  workers: int, progress: bool = False, plots: bool = False) -> Dict[str, Any]:
    """Round-robin of ``spec`` with ``opponents`` (experiments.evaluate); the learner's numbers per opponent."""
    from experiments.evaluate import EvalConfig, run_evaluation
    agents = [spec] + [o for o in opponents if o != spec]
    ecfg = EvalConfig(agents=agents, games=deals, seed=seed, workers=workers, rules=rules, out=str(out_dir),
                      plots=plots, progress=progress)
    res = run_evaluation(ecfg, write=True)
    return summarize_eval(res, spec)


def summarize_eval(res: Dict[str, Any], spec: str) -> Dict[str, Any]:
    labels, specs = res["agents"], res["specs"]
    me = labels[specs.index(spec)]
    per: Dict[str, Dict[str, Any]] = {}
    pairs = res["pairs"] if res.get("mode") == "round_robin" else [res]
    for pr in pairs:
        a, b = pr["agents"]
        if me not in (a, b):
            continue
        other_spec = pr["specs"][1] if a == me else pr["specs"][0]
        flip = a != me
        wr, ci = pr["win_rate"], pr["win_rate_ci"]
        adp, adp_ci = pr["adp"], pr["adp_ci"]
        if flip:
            wr = 1.0 - wr
            ci = None if ci is None else [1.0 - ci[1], 1.0 - ci[0]]
            adp = -adp
            adp_ci = None if adp_ci is None else [-adp_ci[1], -adp_ci[0]]
        per[other_spec] = {"win_rate": wr, "win_rate_ci": ci, "adp": adp, "adp_ci": adp_ci,
                           "games": pr["games"], "deals": pr["deals"]}
    elo = None
    if "ratings" in res:
        ratings = res["ratings"]
        anchor_label = labels[specs.index("random")] if "random" in specs else None
        shift = ELO_ANCHOR - ratings[anchor_label] if anchor_label else 0.0
        elo = ratings[me] + shift
        ratings = {("trained" if k == me else k): v + shift for k, v in ratings.items()}
    else:
        ratings = None
        if "random" in per:   # a duel with random: Elo from the win rate (one virtual draw)
            p = (per["random"]["win_rate"] * per["random"]["games"] + 0.5) / (per["random"]["games"] + 1)
            elo = ELO_ANCHOR + 400 * math.log10(p / (1 - p))
    return {"per_opponent": per, "elo": elo, "ratings": ratings, "results_dir": res.get("out")}


def eval_score(summary: Dict[str, Any], best_by: str) -> float:
    if best_by == "elo":
        return float(summary["elo"]) if summary["elo"] is not None else -math.inf
    kind, _, spec = best_by.partition(":")
    return float(summary["per_opponent"][spec][kind])


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

    # ---------------------------------------------------------------- helpers
    def log(self, msg: str) -> None:
        if self.quiet:
            return
        if self.bar is not None:
            self.bar.write(msg, file=sys.stderr)
        else:
            print(msg, file=sys.stderr, flush=True)

    def weights(self) -> Dict[str, Any]:
        from experiments.selfplay import extract_weights
        return extract_weights(self.model.policy)

    def metric(self, record: Dict[str, Any]) -> None:
        with open(self.run / "metrics.jsonl", "a") as f:
            f.write(json.dumps(record, default=_json_default) + "\n")

    def scalar(self, tag: str, value: Optional[float], step: int) -> None:
        if self.writer is not None and value is not None and np.isfinite(value):
            self.writer.add_scalar(tag, float(value), step)

    # ---------------------------------------------------------------- setup
    def setup(self) -> None:
        import torch as th
        from stable_baselines3.common.logger import TensorBoardOutputFormat, configure

        from experiments.selfplay import make_vec_env
        cfg = self.cfg
        th.set_num_threads(cfg.torch_threads)
        th.distributions.Distribution.set_default_validate_args(False)   # skip per-step argument checks
        start_steps = 0
        if self.resume is not None:
            st = json.loads((self.resume / "trainer.json").read_text())
            start_steps = int(st["num_timesteps"])
        # a resumed run reseeds from (seed, timesteps) so that it does not replay the first games
        env_seed = cfg.seed if start_steps == 0 else int(np.random.SeedSequence([cfg.seed, start_steps])
                                                         .generate_state(1)[0] % (2 ** 31))
        self.env_seed = env_seed
        self.venv = make_vec_env(env_kwargs(cfg), cfg.n_envs, env_seed, subprocess=cfg.vec_env == "subproc")
        if self.resume is None:
            self.model = build_model(cfg, self.venv, cfg.seed)
        else:
            from sb3_contrib import MaskablePPO

            from experiments.selfplay import HandFootPolicy
            self.model = MaskablePPO.load(str(self.resume / "model.zip"), env=self.venv, device="cpu",
                                          custom_objects={"policy_class": HandFootPolicy})
            self.model.set_random_seed(env_seed)
            self.model.num_timesteps = start_steps
            st = json.loads((self.resume / "trainer.json").read_text())
            self.state.update(st["state"])
            with open(self.resume / "snapshots.pkl", "rb") as f:
                self.snapshots = pickle.load(f)
        tb = self.run / "tb"
        logger = configure(str(tb), ["tensorboard"])
        self.model.set_logger(logger)
        for fmt in logger.output_formats:
            if isinstance(fmt, TensorBoardOutputFormat):
                self.writer = fmt.writer
        if self.resume is None and self.writer is not None:
            self.writer.add_text("config", "```\n" + yaml.safe_dump(config_to_dict(cfg), sort_keys=False) + "\n```", 0)
        ev = cfg.evaluation
        if self.state["next_eval"] is None:
            self.state["next_eval"] = ev.every_timesteps if ev.every_timesteps > 0 else None
        if self.state["next_checkpoint"] is None:
            self.state["next_checkpoint"] = cfg.checkpoint_every if cfg.checkpoint_every > 0 else None
        self.sync(snapshots=True)

    def sync(self, snapshots: bool = False) -> None:
        """Push the learner's (and, when changed, the snapshot pool's) actor weights to every worker."""
        self.venv.env_method("set_learner", self.weights())
        if snapshots:
            self.venv.env_method("set_snapshots", self.snapshots)

    # ---------------------------------------------------------------- the loop hooks
    def on_rollout_start(self) -> None:
        """Between updates: snapshots, evaluation, checkpoints, then the weight sync."""
        cfg = self.cfg
        steps = self.model.num_timesteps
        self.record_update()
        changed = False
        upd = self.state["updates"]
        if upd > 0 and upd % cfg.snapshots.every_updates == 0 and upd not in self.state["snapshot_updates"]:
            self.snapshots.append(self.weights())
            self.state["snapshot_updates"].append(upd)
            self.snapshots = self.snapshots[-cfg.snapshots.keep:]
            self.state["snapshot_updates"] = self.state["snapshot_updates"][-cfg.snapshots.keep:]
            changed = True
            self.scalar("selfplay/snapshots", len(self.snapshots), steps)
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
        self.metric({"kind": "final_eval" if final else "eval", "timesteps": steps, "elo": summary["elo"],
                     **{f"win_rate_vs_{k}": v["win_rate"] for k, v in summary["per_opponent"].items()},
                     **{f"win_rate_ci_vs_{k}": v["win_rate_ci"] for k, v in summary["per_opponent"].items()},
                     **{f"adp_vs_{k}": v["adp"] for k, v in summary["per_opponent"].items()}})
        parts = ", ".join(f"{k} {v['win_rate']:.0%} (ADP {v['adp']:+.0f})" for k, v in summary["per_opponent"].items())
        elo = f"Elo {summary['elo']:.0f}" if summary["elo"] is not None else ""
        self.log(f"[{'final eval' if final else 'eval'} @ {steps:,}] win rate vs {parts}; {elo} "
                 f"({time.perf_counter() - t0:.1f}s)")
        if not final:
            self.state["evals"] = self.state.get("evals", 0) + 1
            score = eval_score(summary, cfg.evaluation.best_by)
            best = self.state.get("best_score")
            if best is None or score > best:
                self.state["best_score"] = score
                self.state["best_step"] = steps
                self.checkpoint(self.run / "best", periodic=False)
                write_json(self.run / "best" / "eval.json", summary)
        if self.writer is not None:
            self.writer.flush()
        return summary

    def checkpoint(self, path: Path, periodic: bool) -> None:
        tmp = path.with_name(path.name + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        self.model.save(str(tmp / "model.zip"))
        save_actor(self.weights(), tmp / ACTOR_FILE)
        with open(tmp / "snapshots.pkl", "wb") as f:
            pickle.dump(self.snapshots, f)
        write_json(tmp / "trainer.json", {"num_timesteps": int(self.model.num_timesteps), "state": self.state,
                                          "run": str(self.run), "config": config_to_dict(self.cfg)})
        self.commit_checkpoint(tmp, path, periodic)

    def commit_checkpoint(self, tmp: Path, path: Path, periodic: bool) -> None:
        """Move a checkpoint written to ``tmp`` into place; rotate the periodic ones."""
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
        if periodic:
            ck = self.run / "checkpoints"
            (ck / "latest.txt").write_text(path.name + "\n")
            if self.cfg.keep_checkpoints > 0:
                olds = sorted(p for p in ck.iterdir() if p.is_dir() and p.name.startswith("step_"))
                for p in olds[:-self.cfg.keep_checkpoints]:
                    shutil.rmtree(p)

    # ---------------------------------------------------------------- run
    def learn(self) -> None:
        from stable_baselines3.common.callbacks import BaseCallback
        trainer = self

        class _Hooks(BaseCallback):
            def _on_training_start(self) -> None:
                self.results: List[Dict[str, Any]] = []

            def _on_rollout_start(self) -> None:
                trainer.on_rollout_start()
                self.results = []

            def _on_step(self) -> bool:
                for info in self.locals["infos"]:
                    r = info.get("selfplay")
                    if r is not None:
                        self.results.append(r)
                if trainer.bar is not None:
                    trainer.bar.update(self.training_env.num_envs)
                return True

            def _on_rollout_end(self) -> None:
                trainer.on_rollout_end(self.results)

        remaining = self.cfg.total_timesteps - self.model.num_timesteps
        if remaining <= 0:
            self.log(f"already at {self.model.num_timesteps:,} timesteps "
                     f"(total_timesteps {self.cfg.total_timesteps:,})")
            return
        if self.cfg.progress and not self.quiet:
            from tqdm import tqdm
            self.bar = tqdm(total=self.cfg.total_timesteps, initial=self.model.num_timesteps, unit="step",
                            desc="train", file=sys.stderr, dynamic_ncols=True, smoothing=0.05)
        try:
            self.model.learn(total_timesteps=remaining, callback=_Hooks(), reset_num_timesteps=False)
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
            if (self.run / "best").exists():
                shutil.rmtree(self.run / "best")
            shutil.copytree(self.run / "final", self.run / "best")
        final = None
        if cfg.evaluation.final_deals > 0:
            final = self.evaluate(steps, deals=cfg.evaluation.final_deals, final=True)
            write_json(self.run / "final_eval.json", final)
        if self.writer is not None:
            self.writer.flush()
        plot_learning_curve(self.run)
        return {"run": str(self.run), "timesteps": steps, "final_eval": final, "best_step": self.state.get("best_step"),
                "best_score": self.state.get("best_score")}

    def close(self) -> None:
        try:
            self.venv.close()
        except Exception:  # noqa: BLE001 - closing dead workers must not hide the real error
            pass
        if self.writer is not None:
            self.writer.flush()


# =========================================================================== plots
def plot_learning_curve(run: Path) -> Optional[Path]:
    """``learning_curve.png``: evaluation win rates vs timesteps, and the mean episode reward."""
    path = run / "metrics.jsonl"
    if not path.exists():
        return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    evals = [r for r in recs if r.get("kind") == "eval"]
    rolls = [r for r in recs if r.get("kind") == "rollout" and "ep_rew_mean" in r]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    keys = sorted({k[len("win_rate_vs_"):] for r in evals for k in r if k.startswith("win_rate_vs_")})
    for k in keys:
        xs = [r["timesteps"] for r in evals if f"win_rate_vs_{k}" in r]
        ys = [r[f"win_rate_vs_{k}"] for r in evals if f"win_rate_vs_{k}" in r]
        lo = [(r.get(f"win_rate_ci_vs_{k}") or [y, y])[0] for r, y in zip(evals, ys)]
        hi = [(r.get(f"win_rate_ci_vs_{k}") or [y, y])[1] for r, y in zip(evals, ys)]
        a1.plot(xs, ys, marker="o", label=f"vs {k}")
        a1.fill_between(xs, lo, hi, alpha=0.15)
    a1.axhline(0.5, color="grey", lw=0.8, ls="--")
    a1.set_ylim(0, 1)
    a1.set_xlabel("timesteps")
    a1.set_ylabel("win rate of the argmax policy (95% CI)")
    a1.set_title("evaluation")
    if keys:
        a1.legend()
    if rolls:
        a2.plot([r["timesteps"] for r in rolls], [r["ep_rew_mean"] for r in rolls])
    a2.set_xlabel("timesteps")
    a2.set_ylabel("mean episode reward (last 100 games)")
    a2.set_title("training")
    fig.tight_layout()
    out = run / "learning_curve.png"
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


# =========================================================================== entry points
def resolve_resume(path: Union[str, Path]) -> Path:
    """A checkpoint folder from ``path`` (a checkpoint folder, or a run folder: its latest checkpoint)."""
    p = Path(path)
    if (p / "trainer.json").exists():
        return p
    latest = p / "checkpoints" / "latest.txt"
    if latest.exists():
        q = p / "checkpoints" / latest.read_text().strip()
        if (q / "trainer.json").exists():
            return q
    if (p / "final" / "trainer.json").exists():
        return p / "final"
    raise ConfigError(f"resume: {str(p)!r} is neither a checkpoint folder (trainer.json) nor a run folder with one")


def train(cfg: TrainConfig, resume: Optional[Union[str, Path]] = None, quiet: bool = False,
          argv: Optional[List[str]] = None) -> Dict[str, Any]:
    """Run (or continue) one training run; returns ``{"run", "timesteps", "final_eval", ...}``."""
    cfg.validate()
    if cfg.backend == "rllib":
        from experiments.rllib_backend import train as rllib_train
        return rllib_train(cfg, resume=resume, quiet=quiet, argv=argv)
    resume = resume or cfg.resume
    ck = resolve_resume(resume) if resume else None
    if ck is not None:
        run = Path(json.loads((ck / "trainer.json").read_text())["run"])
        if not run.exists():
            run = ck.parent.parent if ck.parent.name == "checkpoints" else ck.parent
    else:
        run = make_run_folder(cfg)
    (run / "config.yaml").write_text(yaml.safe_dump(config_to_dict(cfg), sort_keys=False))
    info = {"seed": cfg.seed, "seeds": {"python/numpy/torch": cfg.seed, "envs": None,
                                        "evaluation": cfg.evaluation.seed},
            "versions": package_versions(), "git_commit": git_commit(), "argv": argv if argv is not None else sys.argv,
            "started": time.strftime("%Y-%m-%d %H:%M:%S"), "platform": platform.platform(),
            "cpu_count": os.cpu_count(), "resumed_from": str(ck) if ck else None}
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    trainer = Trainer(cfg, run, resume=ck, quiet=quiet)
    t0 = time.perf_counter()
    try:
        trainer.setup()
        info["seeds"]["envs"] = f"worker i: {trainer.env_seed} + i"
        runs_json = run / "run.json"
        history = json.loads(runs_json.read_text()).get("sessions", []) if runs_json.exists() else []
        history.append(info)
        write_json(runs_json, {**info, "sessions": history})
        resumed = f" (resumed from {ck} at {trainer.model.num_timesteps:,} steps)" if ck else ""
        trainer.log(f"run folder: {run}{resumed}")
        trainer.learn()
        result = trainer.finish()
    finally:
        trainer.close()
    result["wall_s"] = time.perf_counter() - t0
    history[-1]["wall_s"] = result["wall_s"]
    write_json(run / "run.json", {**history[-1], "sessions": history})
    return result


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="handfoot train", description="Self-play MaskablePPO training from a YAML config.")
    p.add_argument("config", nargs="?", help="train config YAML (configs/train/*.yaml); optional with --resume")
    p.add_argument("--resume", help="checkpoint folder or run folder to continue from")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config field, e.g. --set total_timesteps=50000 --set ppo.n_steps=128")
    p.add_argument("--run-dir", help="parent folder of run folders (config run_dir)")
    p.add_argument("--run-name", help="run folder name (config run_name)")
    p.add_argument("--quiet", action="store_true", help="no progress bar or messages")
    p.add_argument("--help-config", action="store_true",
                   help="list every config field with its type, default and meaning")
    p.add_argument("--ray-address", metavar="ADDRESS",
                   help="backend: rllib: join this Ray cluster (same as RAY_ADDRESS=ADDRESS; default: a local Ray)")
    return p


def train_main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = _parser()
    try:
        args = p.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if args.help_config:
        print("\n".join(describe_config(TrainConfig)))
        return 0
    try:
        if args.config is None and not args.resume:
            raise ConfigError("a config file is needed (or --resume PATH)")
        if args.config is None:
            ck = resolve_resume(args.resume)
            data = json.loads((ck / "trainer.json").read_text())["config"]
            data = apply_overrides(data, args.overrides)
            cfg = config_from_dict(TrainConfig, data)
        else:
            cfg = load_train_config(args.config, args.overrides)
        if args.run_dir:
            cfg.run_dir = args.run_dir
        if args.run_name:
            cfg.run_name = args.run_name
        if args.ray_address:
            os.environ["RAY_ADDRESS"] = args.ray_address
        if args.resume:
            resolve_resume(args.resume)
    except ConfigError as e:
        print(f"handfoot train: config error: {e}", file=sys.stderr)
        return 2
    result = train(cfg, resume=args.resume, quiet=args.quiet, argv=["handfoot", "train"] + argv)
    fe = result.get("final_eval")
    print(f"run folder: {result['run']}  ({result['timesteps']:,} timesteps, {result['wall_s']:.0f}s)")
    if fe:
        for spec, s in fe["per_opponent"].items():
            ci = s["win_rate_ci"]
            cis = f" [{ci[0]:.1%}, {ci[1]:.1%}]" if ci else ""
            print(f"  vs {spec:<12} win rate {s['win_rate']:.1%}{cis}  ADP {s['adp']:+.0f}")
        if fe.get("elo") is not None:
            print(f"  Elo (random = {ELO_ANCHOR:.0f}): {fe['elo']:.0f}")
    return 0


main = train_main

if __name__ == "__main__":
    sys.exit(train_main())
