"""The training config's sections: one dataclass per part of ``configs/train/*.yaml`` (``ppo:``,
``dmc:``, ``bc:``, ``batched:``, ``rllib:``, ``network:``, ``shaping:``, ``snapshots:``, ``league:``,
``evaluation:``), their fields and defaults with a line each (``handfoot train --help-config``).
:class:`~experiments.training.config.TrainConfig` holds them and validates them together.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Optional


@dataclass
class PPOConfig:
    """MaskablePPO hyperparameters (SB3 names)."""

    learning_rate: float = 3e-4
    """Adam learning rate (constant unless ``anneal_lr``)."""
    anneal_lr: bool = False
    """Lower the learning rate linearly from ``learning_rate`` to 0 at ``total_timesteps``: each
    update's rate is ``learning_rate`` times the fraction of the run still to come (batched: before its
    rollout, so the first update has the full rate, as CleanRL's ``anneal_lr``; sb3: after it, SB3's
    ``progress_remaining``); backends batched and sb3 (a resumed pickle checkpoint of SB3 keeps the
    schedule it was saved with)."""
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
class DMCConfig:
    """Deep Monte-Carlo hyperparameters (``backend: dmc``, :mod:`experiments.training.dmc`)."""

    learning_rate: float = 3e-4
    """Adam learning rate (constant)."""
    rollout: int = 4096
    """Learner decisions played between two updates."""
    batch_size: int = 1024
    """Minibatch size of the regression of Q(s, a) on the Monte-Carlo returns."""
    n_epochs: int = 1
    """Passes over the decisions of the games that ended since the previous update."""
    epsilon: float = 0.05
    """Exploration: the learner plays a uniformly random legal action with this probability."""
    gamma: float = 1.0
    """Discount of the Monte-Carlo return per learner decision."""
    horizon: str = "round"
    """How far a decision's return reaches: round (to the end of its round: each round is a new deal)
    or game (to the end of the game; needed with reward: game_win)."""
    max_grad_norm: float = 10.0
    """Gradient norm clip."""


@dataclass
class BCConfig:
    """Behaviour cloning from a Minari dataset (``backend: bc``, :mod:`experiments.training.bc`;
    docs/datasets.md); ``total_timesteps`` counts the decisions trained on."""

    dataset: Optional[str] = None
    """The Minari dataset id (``handfoot dataset collect ... --id ID``; MINARI_DATASETS_PATH says where)."""
    learning_rate: float = 1e-3
    """Adam learning rate (constant)."""
    batch_size: int = 512
    """Decisions per gradient step."""
    iteration: int = 100_000
    """Decisions per iteration (one update row, with the held-out agreement)."""
    holdout: float = 0.05
    """Share of the dataset's games held out (never trained on; the agreement is measured on them)."""
    split_seed: int = 0
    """Seed of the draw of held-out games (the same split for every run seed)."""


@dataclass
class BatchedConfig:
    """The batched games (``backend: batched`` and ``dmc``; :mod:`experiments.training.sampler`)."""

    games: int = 128
    """Games played at once (over all sampler processes); one tick asks each for a move."""
    samplers: int = 1
    """Samplers: processes on this machine, or Ray actors with ``ray`` (0: the games are played in the
    learner process)."""
    pipeline: bool = True
    """true: the next rollouts are played while the learner updates (needs samplers >= 1; a rollout
    lags the learner by up to max_lag updates, corrected by the learner); false: play, then update
    (strictly on-policy)."""
    max_lag: int = 1
    """With pipeline: rollouts in flight at once, so a rollout is played by weights at most this many
    updates old (batched PPO corrects the lag with decoupled PPO's importance weights; DMC's
    Monte-Carlo targets need none)."""
    ray: Optional[str] = None
    """Run the samplers as Ray actors: local (a private local Ray) or a cluster address; null:
    processes on this machine (handfoot train --ray [ADDRESS] sets it; docs/scaling_out.md)."""
    cpus_per_sampler: float = 1.0
    """With ray: CPUs Ray reserves for each sampler actor."""
    device: str = "auto"
    """Where the learner's updates run: cpu, cuda, or auto (cuda when torch sees a GPU, else cpu).
    The samplers' forward passes stay in NumPy/torch on CPU."""
    core: str = "auto"
    """The rules the games are played on: compiled (handfoot_env.compiled, Numba), reference (the
    pure-Python engine) or auto (compiled when Numba is installed). Both give the same games, rewards
    and samples for the same seed; heuristic opponents see their SeatView on either."""
    parallel_update: bool = True
    """backend: batched: the PPO update runs the critic's forward and backward passes and the actor's
    weight gradients in a second thread beside the actor's passes, on a core no sampler process is
    playing on; the same weights and metrics, bit for bit, as in one thread (ignored by dmc)."""


@dataclass
class RLlibConfig:
    """Ray and RLlib settings (``backend: rllib``; docs/scaling_out.md)."""

    address: Optional[str] = None
    """Ray cluster to join (--ray-address / RAY_ADDRESS take precedence); null: a local Ray."""
    num_cpus: Optional[int] = None
    """CPUs of a private local Ray (null: all cores); ignored on a cluster."""
    ship_code: bool = False
    """Send this checkout to the cluster's workers (runtime_env working_dir)."""
    num_env_runners: int = 1
    """Sampling actors (each one CPU); 0: sample in the trainer process."""
    num_envs_per_env_runner: int = 4
    """Games stepped together by one env runner (batched inference)."""
    episodes_to_numpy: bool = False
    """RLlib's numpy conversion of episodes (slower for this env)."""
    train_batch_size: Optional[int] = None
    """Env steps per PPO update (null: ppo.n_steps x all envs)."""
    minibatch_size: Optional[int] = None
    """Minibatch size (null: ppo.batch_size)."""
    rollout_fragment_length: Any = "auto"
    """auto or a positive integer."""
    num_learners: int = 0
    """0: the learner runs in the trainer process."""
    vf_clip_param: Optional[float] = None
    """RLlib's value-loss clip (null: off, as in SB3)."""
    sample_timeout_s: float = 600.0
    """Seconds an env runner may take for its share of a rollout."""


@dataclass
class NetworkConfig:
    """Policy and value network sizes."""

    pi: List[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy (actor) MLP; with backend: dmc, of the action-value network Q(s, a)."""
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
class LeagueConfig:
    """League training (experiments.training.league, docs/league.md): the learner is the league's main
    agent, its opponents drawn by prioritised fictitious self-play over the members, with main
    exploiters trained against it. Off unless enabled; then the opponents mixture is not used."""

    enabled: bool = False
    """Train the run as a league (backend batched or dmc)."""
    pool: List[str] = field(default_factory=list)
    """Members from the start besides the main and its past snapshots: trained policies (champion,
    policy:PATH), played by their network, and agent specs (strategic, greedy, ...)."""
    self_play: float = 0.2
    """Share of the main's games against itself (the rest: PFSP over the other members)."""
    weighting: str = "hard"
    """PFSP weighting of a member from the main's recent win rate x against it: hard ((1-x)^p),
    variance (x(1-x)) or uniform."""
    p: float = 2.0
    """The exponent of the hard weighting."""
    refresh_updates: int = 5
    """Recompute the weights (and send the members' networks) every this many updates of the main."""
    decay: float = 0.99
    """The payoff table's recent counts of a pair are multiplied by this before each batch of its games is added."""
    main_exploiters: int = 1
    """Main exploiters: networks trained against the current main."""
    exploiter_share: float = 0.25
    """Share of the league's decisions the exploiters make (all of them together)."""
    exploiter_games: int = 64
    """Games each exploiter plays at once."""
    exploiter_init: Optional[str] = None
    """The exploiters' start weights (a trained policy's spec or path); null: the run's init, else a fresh network."""
    exploiter_threshold: float = 0.7
    """An exploiter restarts when its win rate against the main over its last exploiter_window games reaches this."""
    exploiter_window: int = 100
    """Games the threshold is measured over."""
    exploiter_budget: int = 2_000_000
    """An exploiter restarts after this many decisions since its last start."""
    keep_exploiters: int = 4
    """Frozen exploiters kept as members (the newest)."""


@dataclass
class EvaluationConfig:
    """Periodic evaluation with the duplicate harness (experiments.evaluation)."""

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


__all__ = ["PPOConfig", "DMCConfig", "BCConfig", "BatchedConfig", "RLlibConfig", "NetworkConfig", "ShapingConfig",
           "SnapshotConfig", "LeagueConfig", "EvaluationConfig"]
