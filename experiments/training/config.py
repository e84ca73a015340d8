"""The training config: every field of ``configs/train/*.yaml``, validated (``handfoot train --help-config``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import numpy as np

from agents.registry import BUILTIN, make_agent, side_specs, team_members
from experiments.config import ConfigError, _check_choice, apply_overrides, config_from_dict, read_yaml
from handfoot_env.config import load_rules
from handfoot_env.config import MAX_SEED
from experiments.recipes import find_config, recipe_names
from experiments.training.learner import backend, backend_names
from experiments.training.sections import (
    PPOConfig,
    DMCConfig,
    BCConfig,
    BatchedConfig,
    RLlibConfig,
    NetworkConfig,
    ShapingConfig,
    SnapshotConfig,
    LeagueConfig,
    EvaluationConfig,
)


#: opponent kinds of the mixture besides agent specs: the current learner, and its frozen snapshots
SELF = "self"
SNAPSHOTS = "self_snapshots"
#: the backends that can start from a policy's weights (``init``)
INIT_BACKENDS = ("batched",)
#: the project's own training backends, in the order their names are listed (experiments.training.backends
#: registers them; a plug-in learner adds its name to the registry)
BUILTIN_BACKENDS = ("sb3", "rllib", "batched", "dmc", "bc")


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
    dmc: DMCConfig = field(default_factory=DMCConfig)
    """backend: dmc only: Deep Monte-Carlo hyperparameters (network.pi sizes its Q network)."""
    bc: BCConfig = field(default_factory=BCConfig)
    """backend: bc only: behaviour cloning from a dataset (network.pi sizes its policy)."""
    network: NetworkConfig = field(default_factory=NetworkConfig)
    """Network sizes and critic inputs."""
    shaping: ShapingConfig = field(default_factory=ShapingConfig)
    """Optional reward shaping (off by default)."""
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    """Periodic and final evaluation."""
    league: LeagueConfig = field(default_factory=LeagueConfig)
    """League training (off by default; docs/league.md)."""
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
    init: Optional[str] = None
    """Start from a trained policy's weights: a spec (champion, policy:PATH) or a path (a checkpoint or run
    folder, an actor.npz). The actor's weights and shape (network.pi, network.activation: a config that sets
    either to another shape is refused) come from it; the critic and the optimiser start fresh. backend:
    batched only (null: a fresh network)."""
    progress: bool = True
    """Show tqdm progress bars."""
    backend: str = "sb3"
    """Training backend (experiments.training.learner's registry): sb3 (MaskablePPO, experiments.training.sb3),
    rllib (RLlib PPO on Ray, experiments.training.rllib), batched (PPO on many games at once,
    experiments.training.batched_ppo) or dmc (Deep Monte-Carlo with action features on the batched games,
    experiments.training.dmc) or bc (behaviour cloning from a Minari dataset, experiments.training.bc)."""
    rllib: RLlibConfig = field(default_factory=RLlibConfig)
    """backend: rllib only: Ray and RLlib settings (env runners, envs per runner, ...; see docs/scaling_out.md)."""
    batched: BatchedConfig = field(default_factory=BatchedConfig)
    """backend: batched and dmc only: games (played at once), samplers (processes), pipeline."""

    def validate(self) -> "TrainConfig":
        _check_choice("backend", self.backend, BUILTIN_BACKENDS + tuple(n for n in backend_names()
                                                                         if n not in BUILTIN_BACKENDS))
        validate_batched(self)
        if self.init is not None:
            if not self.init.strip():
                raise ConfigError("init: expected a trained policy (champion, policy:PATH or a path), or null")
            if self.backend not in INIT_BACKENDS:
                raise ConfigError(f"init: starting from a policy's weights is supported by backend: "
                                  f"{', '.join(INIT_BACKENDS)} only, not {self.backend}")
        if self.backend == "rllib":
            validate_rllib(self)
        elif self.backend == "dmc":
            validate_dmc(self)
        elif self.backend == "bc":
            validate_bc(self)
        elif self.backend not in BUILTIN_BACKENDS:
            backend(self.backend).check(self)           # a plug-in learner's own checks
        _check_choice("vec_env", self.vec_env, ("subproc", "dummy"))
        _check_choice("reward", self.reward, ("round_score_diff", "game_win"))
        _check_choice("network.activation", self.network.activation, ("tanh", "relu"))
        _check_choice("snapshots.sampling", self.snapshots.sampling, ("uniform", "latest"))
        _check_ranges(self)
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
            if k not in (SELF, SNAPSHOTS):
                check_spec(f"opponents.{k}", k)
        if sum(self.opponents.values()) <= 0:
            raise ConfigError("opponents: at least one weight must be positive")
        if self.league.enabled:
            validate_league(self)
        if not self.evaluation.opponents:
            raise ConfigError("evaluation.opponents: at least one opponent spec is needed")
        for spec in self.evaluation.opponents:
            check_spec("evaluation.opponents", spec)
        b = self.evaluation.best_by
        if b != "elo":
            kind, _, spec = b.partition(":")
            if kind not in ("win_rate", "adp") or spec not in self.evaluation.opponents:
                raise ConfigError(f"evaluation.best_by: expected elo, win_rate:SPEC or adp:SPEC with SPEC one of "
                                  f"evaluation.opponents {self.evaluation.opponents}, got {b!r}")
        try:
            rules = load_rules(self.rules)
        except Exception as e:  # noqa: BLE001 - report any rule problem as a config error
            raise ConfigError(f"rules: {e}") from None
        sides = [(f"opponents.{k}", k) for k in self.opponents if k not in (SELF, SNAPSHOTS)]
        for where, spec in sides + [("evaluation.opponents", s) for s in self.evaluation.opponents]:
            try:
                side_specs(spec, rules)          # a team spec: one member per seat of a team of these rules
            except ValueError as e:
                raise ConfigError(f"{where}: {e}") from None
        return self


def _check_ranges(cfg: TrainConfig) -> None:
    """The numeric fields' limits and the network's shape (one line naming the first out of range)."""
    big = 10 ** 12
    for name, v, lo, hi in (("total_timesteps", cfg.total_timesteps, 1, big), ("n_envs", cfg.n_envs, 1, 1024),
                            ("torch_threads", cfg.torch_threads, 1, 256),
                            ("ppo.n_steps", cfg.ppo.n_steps, 2, 1_000_000),
                            ("ppo.batch_size", cfg.ppo.batch_size, 2, 10_000_000),
                            ("ppo.n_epochs", cfg.ppo.n_epochs, 1, 1000),
                            ("snapshots.every_updates", cfg.snapshots.every_updates, 1, big),
                            ("snapshots.keep", cfg.snapshots.keep, 1, 1000),
                            ("evaluation.every_timesteps", cfg.evaluation.every_timesteps, 0, big),
                            ("evaluation.deals", cfg.evaluation.deals, 1, 1_000_000),
                            ("evaluation.final_deals", cfg.evaluation.final_deals, 0, 1_000_000),
                            ("evaluation.workers", cfg.evaluation.workers, 1, 256),
                            ("checkpoint_every", cfg.checkpoint_every, 0, big),
                            ("keep_checkpoints", cfg.keep_checkpoints, 0, 1_000_000),
                            ("seed", cfg.seed, 0, MAX_SEED)):
        if not lo <= v <= hi:
            raise ConfigError(f"{name}: must be between {lo} and {hi:,}, got {v}")
    for name, sizes in (("network.pi", cfg.network.pi), ("network.vf", cfg.network.vf)):
        if len(sizes) > 16 or any(not 1 <= h <= 65_536 for h in sizes):
            raise ConfigError(f"{name}: at most 16 layers of 1 to 65,536 units, got {list(sizes)}")


def check_spec(name: str, spec: str) -> None:
    """A ConfigError naming the field ``name`` unless ``spec`` is an agent spec, or a team of them
    (``team(A,B)``: its size is checked against the rules by :meth:`TrainConfig.validate`)."""
    try:
        members = team_members(spec)
    except ValueError as e:
        raise ConfigError(f"{name}: {e}") from None
    if members is not None:
        for member in members:
            check_spec(name, member)
        return
    if spec in BUILTIN:
        return
    if spec.startswith("policy:") and len(spec) > len("policy:"):
        return
    if spec.startswith("rllib:") and len(spec) > len("rllib:"):
        return
    try:    # py:package.module:ClassName, an entry point of handfoot.agents, or any other spec make_agent knows
        make_agent(spec, 0)
    except (ValueError, ImportError) as e:
        raise ConfigError(f"{name}: {e}") from None


def validate_league(cfg: TrainConfig) -> LeagueConfig:
    """The ``league:`` section of a league run, checked; a ConfigError names the field."""
    lc = cfg.league
    if cfg.backend not in ("batched", "dmc"):
        raise ConfigError(f"league: needs backend batched or dmc (the batched games), not {cfg.backend}")
    _check_choice("league.weighting", lc.weighting, ("hard", "variance", "uniform"))
    for name, v, lo, hi in (("league.self_play", lc.self_play, 0.0, 0.95), ("league.p", lc.p, 0.0, 100.0),
                            ("league.decay", lc.decay, 0.0, 1.0),
                            ("league.exploiter_share", lc.exploiter_share, 0.0, 0.9),
                            ("league.exploiter_threshold", lc.exploiter_threshold, 0.0, 1.0)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
            raise ConfigError(f"{name}: must be a number in [{lo:g}, {hi:g}], got {v!r}")
    for name, v, lo, hi in (("league.refresh_updates", lc.refresh_updates, 1, 10 ** 9),
                            ("league.main_exploiters", lc.main_exploiters, 0, 16),
                            ("league.exploiter_games", lc.exploiter_games, 1, 65_536),
                            ("league.exploiter_window", lc.exploiter_window, 1, 10 ** 6),
                            ("league.exploiter_budget", lc.exploiter_budget, 1, 10 ** 12),
                            ("league.keep_exploiters", lc.keep_exploiters, 0, 1000)):
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise ConfigError(f"{name}: must be an integer from {lo} to {hi:,}, got {v!r}")
    if len(set(lc.pool)) != len(lc.pool):
        raise ConfigError(f"league.pool: a spec is named twice in {lc.pool}")
    for spec in lc.pool:
        if not isinstance(spec, str) or spec in ("main", SELF, SNAPSHOTS) or "@" in spec \
                or spec.startswith("main_exploiter"):
            raise ConfigError(f"league.pool: {spec!r} is not an agent spec (the main, its snapshots and the "
                              f"exploiters are members already)")
        check_spec("league.pool", spec)
    if lc.exploiter_init is not None and not str(lc.exploiter_init).strip():
        raise ConfigError("league.exploiter_init: expected a trained policy (champion, policy:PATH or a path), or null")
    return lc


def check_agents(cfg: TrainConfig) -> None:
    """Load every agent the run plays (opponents, evaluation opponents) once, in this process.

    Run before any worker starts, so that a ``policy:`` path that does not exist, an unreadable
    checkpoint or an untrusted pickle is one ConfigError naming the field, not a worker's traceback.
    """
    specs = [(f"opponents.{k}", k) for k, w in cfg.opponents.items() if k not in (SELF, SNAPSHOTS) and w > 0]
    specs += [("evaluation.opponents", spec) for spec in cfg.evaluation.opponents]
    if cfg.league.enabled:
        specs += [("league.pool", spec) for spec in cfg.league.pool]
    for where, side in specs:
        for spec in team_members(side) or [side]:
            if spec in BUILTIN:
                continue
            try:
                make_agent(spec, 0)
            except Exception as e:  # noqa: BLE001 - any failure to load is the spec's problem, reported in one line
                raise ConfigError(f"{where}: cannot load agent {spec!r}: {e}") from None


def init_weights(cfg: TrainConfig) -> Dict[str, Any]:
    """The actor weights ``cfg.init`` names, checked against the run: a policy network (not an action-value
    one) that reads the observation of ``cfg.rules``, whose shape fits ``network.pi`` and
    ``network.activation`` where the config sets them; then ``cfg.network`` takes the policy's shape (so
    the run folder's config is the network trained).  One ConfigError for anything else."""
    from agents.policy import is_q
    from agents.registry import policy_weights
    from experiments.config import field_given
    from handfoot_env.observation import observation_size
    try:
        weights = policy_weights(str(cfg.init))
    except ValueError as e:
        raise ConfigError(f"init: {e}") from None
    if is_q(weights):
        raise ConfigError(f"init: {cfg.init!r} is an action-value network (backend: dmc); backend: "
                          f"{cfg.backend} starts from a policy network")
    r = load_rules(cfg.rules)
    n_obs = observation_size(r.players, r.teams)
    if int(weights["visible"]) != n_obs:
        raise ConfigError(f"init: {cfg.init!r} reads {int(weights['visible'])} observation entries, but the rules "
                          f"{cfg.rules!r} ({r.players} players in {r.teams} teams) give {n_obs}")
    hidden = [int(np.shape(w)[0]) for w, _ in weights["layers"]]
    activation = str(weights["activation"])
    net = cfg.network
    for name, given, theirs in (("network.pi", list(net.pi), hidden), ("network.activation", net.activation,
                                                                        activation)):
        if field_given(net, name.split(".")[1]) and given != theirs:
            raise ConfigError(f"{name}: {given} does not fit init {cfg.init!r}, whose actor has "
                              f"{theirs}; leave {name} out to take the policy's")
    net.pi, net.activation = hidden, activation
    return weights


def load_train_config(path: Union[str, Path, None], overrides: Optional[List[str]] = None) -> TrainConfig:
    """The training config of a YAML file, or of a shipped recipe by name (``quickstart``,
    :mod:`experiments.recipes`), with ``--set`` overrides."""
    if path:
        found = find_config(path, "train")
        if found is None:
            raise ConfigError(f"config file {str(path)!r} not found (nor a recipe: {', '.join(recipe_names('train'))})")
        path = found
    data = read_yaml(path) if path else {}
    source = f"{path}{' with --set' if overrides else ''}" if path else None
    return config_from_dict(TrainConfig, apply_overrides(data, overrides or []), source)


def env_kwargs(cfg: TrainConfig) -> Dict[str, Any]:
    return dict(rules=cfg.rules, opponents=dict(cfg.opponents), reward=cfg.reward, reward_scale=cfg.reward_scale,
                shaping_books=cfg.shaping.books, shaping_points=cfg.shaping.points,
                centralised_critic=cfg.network.centralised_critic, max_actions=cfg.max_actions,
                snapshot_sampling=cfg.snapshots.sampling)


_UNSUPPORTED_NOTE = "not supported by the rllib backend"


def validate_rllib(cfg: Any) -> RLlibConfig:
    """Check the parts of a TrainConfig that matter to the RLlib backend; its ``rllib`` section."""
    s = cfg.rllib

    def integer(name: str, lo: int, allow_none: bool = False) -> None:
        v = getattr(s, name)
        if v is None and allow_none:
            return
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ConfigError(f"rllib.{name}: expected an integer >= {lo}{' or null' if allow_none else ''}, got {v!r}")

    integer("num_env_runners", 0)
    integer("num_envs_per_env_runner", 1)
    integer("num_learners", 0)
    integer("num_cpus", 1, allow_none=True)
    integer("train_batch_size", 2, allow_none=True)
    integer("minibatch_size", 2, allow_none=True)
    rfl = s.rollout_fragment_length
    if rfl != "auto" and (isinstance(rfl, bool) or not isinstance(rfl, int) or rfl < 1):
        raise ConfigError(f"rllib.rollout_fragment_length: expected 'auto' or a positive integer, got {rfl!r}")
    for name in ("vf_clip_param", "sample_timeout_s"):
        v = getattr(s, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0):
            raise ConfigError(f"rllib.{name}: expected a positive number or null, got {v!r}")
    if cfg.network.centralised_critic:
        raise ConfigError(f"network.centralised_critic: {_UNSUPPORTED_NOTE}")
    if cfg.shaping.books or cfg.shaping.points:
        raise ConfigError(f"shaping: {_UNSUPPORTED_NOTE} (set shaping.books and shaping.points to 0)")
    if cfg.ppo.target_kl is not None:
        raise ConfigError(f"ppo.target_kl: {_UNSUPPORTED_NOTE} (RLlib's PPO has no early stopping); use null")
    if cfg.ppo.anneal_lr:
        raise ConfigError(f"ppo.anneal_lr: {_UNSUPPORTED_NOTE} (the backends batched and sb3 anneal); use false")
    return s


def total_envs(s: RLlibConfig) -> int:
    return max(1, int(s.num_env_runners)) * int(s.num_envs_per_env_runner)


def validate_dmc(cfg: Any) -> None:
    """Check the ``dmc:`` section and the fields DMC does not support; a ConfigError names the field."""
    d = cfg.dmc
    for name, v, lo, hi in (("dmc.rollout", d.rollout, 1, 10_000_000), ("dmc.batch_size", d.batch_size, 1, 10_000_000),
                            ("dmc.n_epochs", d.n_epochs, 1, 1000)):
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise ConfigError(f"{name}: must be an integer from {lo} to {hi:,}, got {v!r}")
    for name, v, lo, hi in (("dmc.epsilon", d.epsilon, 0.0, 1.0), ("dmc.gamma", d.gamma, 0.0, 1.0)):
        if not lo <= v <= hi:
            raise ConfigError(f"{name}: must be in [{lo:g}, {hi:g}], got {v}")
    for name, v in (("dmc.learning_rate", d.learning_rate), ("dmc.max_grad_norm", d.max_grad_norm)):
        if not v > 0:
            raise ConfigError(f"{name}: must be positive, got {v}")
    _check_choice("dmc.horizon", d.horizon, ("round", "game"))
    if d.horizon == "round" and cfg.reward == "game_win":
        raise ConfigError("dmc.horizon: round needs reward: round_score_diff (game_win pays only at the game's end); "
                          "use horizon: game")
    if not cfg.network.pi:
        raise ConfigError("network.pi: the action-value network needs at least one hidden layer")
    if cfg.network.centralised_critic:
        raise ConfigError("network.centralised_critic: not supported by backend: dmc (it has no critic)")
    if cfg.shaping.books or cfg.shaping.points:
        raise ConfigError("shaping: not supported by backend: dmc (Monte-Carlo returns of the env reward)")


def validate_bc(cfg: Any) -> None:
    """Check the ``bc:`` section; a ConfigError names the field."""
    b = cfg.bc
    if not isinstance(b.dataset, str) or not b.dataset.strip():
        raise ConfigError("bc.dataset: a Minari dataset id is needed (handfoot dataset collect ... --id ID)")
    for name, v, lo, hi in (("bc.batch_size", b.batch_size, 1, 1_000_000), ("bc.iteration", b.iteration, 1, 10 ** 9),
                            ("bc.split_seed", b.split_seed, 0, MAX_SEED)):
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise ConfigError(f"{name}: must be an integer from {lo} to {hi:,}, got {v!r}")
    if not b.learning_rate > 0:
        raise ConfigError(f"bc.learning_rate: must be positive, got {b.learning_rate}")
    if not 0.0 <= b.holdout < 1.0:
        raise ConfigError(f"bc.holdout: must be in [0, 1), got {b.holdout}")


#: where a learner's updates may run (``batched.device``)
DEVICES = ("auto", "cpu", "cuda")


def validate_batched(cfg: Any) -> BatchedConfig:
    """The ``batched:`` section, checked; :class:`experiments.config.ConfigError` names a bad field."""
    s = cfg.batched
    for name, lo, hi in (("games", 1, 65_536), ("samplers", 0, 1_024), ("max_lag", 1, 16)):
        v = getattr(s, name)
        if not lo <= v <= hi:
            raise ConfigError(f"batched.{name}: must be an integer from {lo} to {hi:,}, got {v!r}")
    if s.pipeline and s.samplers < 1:
        raise ConfigError("batched.pipeline: needs batched.samplers >= 1 (a sampler process to play while "
                          "the learner updates)")
    if s.samplers > s.games:
        raise ConfigError(f"batched.samplers: {s.samplers} samplers for {s.games} games")
    if s.ray is not None and s.samplers < 1:
        raise ConfigError("batched.ray: needs batched.samplers >= 1 (the Ray actors that play)")
    if not 0 < s.cpus_per_sampler <= 256:
        raise ConfigError(f"batched.cpus_per_sampler: must be a number above 0 and at most 256, got "
                          f"{s.cpus_per_sampler!r}")
    _check_choice("batched.device", s.device, DEVICES)
    from handfoot_env.compiled import resolve_core
    try:
        resolve_core(s.core)
    except ValueError as e:
        raise ConfigError(f"batched.core: {e}") from None
    return s
