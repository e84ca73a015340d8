"""RLlib backend: PPO self-play on Ray (``backend: rllib``) and Ray-distributed evaluation.

``handfoot train configs/train/rllib_selfplay.yaml`` (or any training config
with ``backend: rllib``) lands in :func:`train_main` / :func:`train` here.
Nothing in this module reads ``sys.argv`` or starts Ray at import time: Ray
workers import it by name (the env class, the callbacks, the mapping function).

Environment (:class:`HandFootMultiAgentEnv`)
--------------------------------------------
An RLlib ``MultiAgentEnv`` around ``handfoot_v0.raw_env`` (the AEC env, not
RLlib's ``PettingZooEnv`` wrapper, which hands the final reward to every agent
on the terminal step).  One episode is one game.  At ``reset`` it draws

* the **learner team** (uniformly, so the policy plays both teams and every
  seat position), and
* an **opponent** for the other team(s) from the configured mixture
  ``opponents: {kind: weight}``; kinds are ``self`` (the current learner on
  every seat), ``self_snapshots`` (one of ``pool_size`` frozen snapshots, drawn
  uniformly) and any ``agents.registry`` spec (``random``, ``greedy``,
  ``strategic``, ``policy:PATH``, ``rllib:PATH``).

Seats that a network plays are RLlib agents; their agent id names the module
that plays them, so the mapping function is a pure function of the id
(:func:`agent_to_module`): learner seats are ``player_<seat>`` -> module
``learner`` (both seats of the learner team share its parameters, and both
seats' experience trains it), snapshot seats are ``player_<seat>@snapshot_<k>``
-> module ``snapshot_<k>`` (not trained).  **Heuristic opponents are played
inside the env wrapper**: they need the seat's structured view
(``handfoot_env.view.SeatView``), not the encoded observation, so they cannot be
RLlib modules without shipping the engine state through the connector
pipeline; inside the env they are plain Python calls between two learner
decisions, and their seats are not agents at all.

Rewards: after every AEC step the wrapper reads the env's per-step
``rewards[player]`` and adds it to that seat's agent, including steps played by
heuristics in between; each agent gets exactly what the env assigns to its seat,
when it is assigned (RLlib keeps rewards of agents that are not acting and
credits them to the agent's previous action).  tests/test_ray.py checks the
returns against the AEC env's cumulative rewards.

Module (:class:`agents.rllib_policy.MaskedActorCritic`)
---------------------------------------------------------
Torch, masked logits in every forward pass, separate critic, the SB3 backend's
input scale.  ``learner`` is trained; ``snapshot_<k>`` modules are copies that
are refreshed from ``learner`` every ``snapshots.every_updates`` iterations
(round robin over the ``snapshots.keep`` slots; all slots start as copies of the
initial learner).  PPO only syncs the trained module to the env runners, so
snapshot weights are pushed to every runner explicitly.

Training driver
---------------
:func:`train` (called by ``experiments.train.train`` for ``backend: rllib``)
builds an RLlib ``PPOConfig`` (new API stack) from the same ``TrainConfig`` as
the SB3 backend (:func:`build_algo_config`; the ``rllib:`` section holds the
Ray/RLlib-only settings, :data:`RLLIB_DEFAULTS`), starts or joins Ray
(:func:`init_ray`) and runs an :class:`experiments.train.Trainer` subclass
(:func:`make_trainer`): same run folder, TensorBoard tags, ``metrics.jsonl``
records, periodic duplicate-format evaluation, ``best``/``final`` checkpoints and
``final_eval.json``.  ``total_timesteps`` counts learner transitions (steps of
the ``learner`` module on any seat).  Checkpoints hold the RLlib Algorithm
checkpoint (``algorithm/``), the NumPy actor (``actor.npz``) and
``trainer.json`` (for ``--resume``).

Ray
---
:func:`init_ray`: an address (``--ray-address`` / ``RAY_ADDRESS``, else the
config's ``rllib.address``) joins an existing cluster (``num_cpus`` is then not
passed: the cluster decides); without one a private local Ray is started with
``ray.init(address="local", num_cpus=..., include_dashboard=False)``.

Distributed evaluation: :func:`run_tasks_on_ray` runs the evaluation harness's
per-chunk function as Ray tasks (``handfoot evaluate ... --ray [ADDRESS]``); the
chunks come back in task order and are aggregated by the harness exactly as the
multiprocessing path does, so results are identical.
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import yaml

from handfoot_env.actions import NUM_ACTIONS
from handfoot_env.engine import GAME_OVER

LEARNER = "learner"
SNAPSHOT = "snapshot_"
SELF = "self"
SNAPSHOTS = "self_snapshots"


def have_ray() -> bool:
    try:
        import ray  # noqa: F401
        import ray.rllib  # noqa: F401
    except ImportError:
        return False
    return True


def require_ray() -> None:
    if not have_ray():
        raise ImportError("the RLlib backend needs Ray: pip install -e '.[ray]' (ray[rllib]==2.60.0)")


def agent_to_module(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """Policy mapping: ``player_<s>`` -> ``learner``; ``player_<s>@<module>`` -> ``<module>``."""
    aid = str(agent_id)
    return aid.split("@", 1)[1] if "@" in aid else LEARNER


def snapshot_ids(pool_size: int) -> List[str]:
    return [f"{SNAPSHOT}{k}" for k in range(int(pool_size))]


def spaces_for(rules: Any):
    """Plain gymnasium (observation, action) spaces of one seat under ``rules``."""
    from gymnasium import spaces

    from handfoot_env.config import load_rules
    from handfoot_env.observation import observation_size
    r = load_rules(rules)
    obs = spaces.Dict({
        "observation": spaces.Box(low=-np.inf, high=np.inf, shape=(observation_size(r.players, r.teams),),
                                  dtype=np.float32),
        "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8)})
    return obs, spaces.Discrete(NUM_ACTIONS)


# ----------------------------------------------------------------------------- the env
class HandFootEnvImpl:
    """One game of Hand and Foot as an RLlib ``MultiAgentEnv`` (see the module docstring).

    This is the implementation; :data:`HandFootMultiAgentEnv` is this class mixed
    with RLlib's ``MultiAgentEnv`` (built on first use, so importing this module
    does not import Ray).

    ``config`` keys: ``rules`` (preset / path / mapping), ``reward``,
    ``reward_scale``, ``episode``, ``max_actions`` (as ``handfoot_v0.env``),
    ``opponents`` (``{kind: weight}``), ``pool_size`` (snapshot slots),
    ``seed`` (base seed; combined with the runner's worker and vector index).
    """

    def __init__(self, config: Optional[Dict[str, Any]] = None):
        super().__init__()
        from handfoot_env.env import raw_env

        cfg = dict(config or {})
        rules = cfg.get("rules", "pagat")
        self.env = raw_env(rules=rules, reward=cfg.get("reward", "round_score_diff"),
                           reward_scale=float(cfg.get("reward_scale", 0.001)), episode=cfg.get("episode", "game"),
                           max_actions=cfg.get("max_actions"))
        self.game = self.env.game
        self.rules = self.env.rules
        self.pool_size = int(cfg.get("pool_size", 0))
        mix = {str(k): float(w) for k, w in dict(cfg.get("opponents") or {SELF: 1.0}).items() if float(w) > 0}
        if not mix:
            raise ValueError("opponents: the mixture needs at least one kind with a positive weight")
        if SNAPSHOTS in mix and self.pool_size < 1:
            raise ValueError("opponents: 'self_snapshots' needs pool_size >= 1")
        self.kinds = list(mix)
        w = np.asarray([mix[k] for k in self.kinds], dtype=np.float64)
        self.probs = w / w.sum()
        n = self.rules.players
        self.names = list(self.env.possible_agents)          # player_0 ...
        self.possible_agents = list(self.names) + [f"{p}@{m}" for p in self.names
                                                   for m in snapshot_ids(self.pool_size)]
        space, act = spaces_for(self.rules)
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: act for a in self.possible_agents}
        base = int(cfg.get("seed", 0))
        widx = int(getattr(config, "worker_index", 0) or 0)
        vidx = int(getattr(config, "vector_index", 0) or 0)
        self._seed_seq = (base, widx, vidx)
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([base, widx, vidx])))
        self._heuristics: Dict[Tuple[str, int], Any] = {}
        self.seat_ids: List[Optional[str]] = [None] * n     # agent id per seat (None: played inside)
        self.seat_agent: List[Any] = [None] * n
        self.learner_team = 0
        self.opponent = self.opponent_kind = SELF
        self.learner_seat = 0
        self.learner_return = 0.0
        self.learner_decisions = 0
        self.last_result: Optional[Dict[str, Any]] = None
        self.agents = []

    # ------------------------------------------------------------ helpers
    def _heuristic(self, spec: str, seat: int):
        key = (spec, seat)
        a = self._heuristics.get(key)
        if a is None:
            from agents.registry import make_agent
            a = make_agent(spec, int(self.rng.integers(2 ** 31)))
            self._heuristics[key] = a
        a.reset(seat, self.rules, int(self.rng.integers(2 ** 31)))
        return a

    def _setup_seats(self, opponent: str, learner_team: int) -> None:
        g = self.game
        snap = None
        if opponent == SNAPSHOTS:
            snap = f"{SNAPSHOT}{int(self.rng.integers(self.pool_size))}"
        for p in range(g.n):
            self.seat_agent[p] = None
            if g.team_of[p] == learner_team or opponent == SELF:
                self.seat_ids[p] = self.names[p]
            elif snap is not None:
                self.seat_ids[p] = f"{self.names[p]}@{snap}"
            else:
                self.seat_ids[p] = None
                self.seat_agent[p] = self._heuristic(opponent, p)
        self.opponent = snap or opponent
        self.opponent_kind = opponent
        self.agents = [a for a in self.seat_ids if a is not None]
        self.learner_seat = next(q for q in range(g.n) if g.team_of[q] == learner_team)

    def _obs(self, p: int) -> Dict[str, np.ndarray]:
        return self.env.observe(self.names[p])

    def _step_env(self, action: int, rewards: Dict[str, float]) -> None:
        env = self.env
        if self.game.current == self.learner_seat:
            self.learner_decisions += 1
        env.step(int(action))
        r = env.rewards
        for p, aid in enumerate(self.seat_ids):
            if aid is not None:
                v = r[self.names[p]]
                if v:
                    rewards[aid] = rewards.get(aid, 0.0) + float(v)
        v = r[self.names[self.learner_seat]]
        if v:
            self.learner_return += float(v)

    def _done(self) -> Tuple[bool, bool]:
        name = self.names[0]
        return bool(self.env.terminations[name]), bool(self.env.truncations[name])

    def _advance(self, rewards: Dict[str, float]) -> Tuple[bool, bool]:
        """Play the seats handled inside the env until an agent must act or the game ends."""
        from handfoot_env.view import seat_view
        g = self.game
        while True:
            term, trunc = self._done()
            if term or trunc:
                return term, trunc
            p = g.current
            if self.seat_ids[p] is not None:
                return False, False
            ag = self.seat_agent[p]
            obs = self._obs(p) if getattr(ag, "needs_observation", False) else None
            self._step_env(ag.act(obs, seat_view(g, p)), rewards)

    def _result(self, truncated: bool) -> Dict[str, Any]:
        g = self.game
        t = self.learner_team
        others = [g.scores[u] for u in range(g.num_teams) if u != t]
        if truncated or not g.round_scores:
            result = float("nan")
        elif g.phase == GAME_OVER:
            result = 0.5 if g.winner is None else float(g.winner == t)
        else:  # a one-round episode: that round decides
            totals = g.round_scores[-1]
            best = max(totals)
            result = 0.5 if totals.count(best) > 1 else float(totals[t] == best)
        return {"opponent": self.opponent_kind, "module": self.opponent, "learner_team": t, "result": result,
                "score_diff": float(g.scores[t] - max(others)), "truncated": bool(truncated),
                "learner_return": self.learner_return, "learner_decisions": self.learner_decisions,
                "actions": int(g.action_count)}

    # ------------------------------------------------------------ MultiAgentEnv API
    def reset(self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None):
        if seed is not None:
            self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(seed), *self._seed_seq])))
        options = dict(options or {})
        opponent = str(options.get("opponent", self.kinds[int(self.rng.choice(len(self.kinds), p=self.probs))]))
        team = int(options.get("learner_team", self.rng.integers(self.rules.teams)))
        game_seed = int(options.get("game_seed", self.rng.integers(2 ** 31)))
        while True:
            self.env.reset(seed=game_seed)
            self.learner_team = team
            self._setup_seats(opponent, team)
            self.last_result = None
            self.learner_return = 0.0
            self.learner_decisions = 0
            rewards: Dict[str, float] = {}
            term, trunc = self._advance(rewards)
            if not (term or trunc):
                break
            game_seed = int(self.rng.integers(2 ** 31))    # (never seen) the game ended without an agent acting
        p = self.game.current
        self._pending = rewards
        return {self.seat_ids[p]: self._obs(p)}, {}

    def step(self, action_dict: Dict[str, Any]):
        p = self.game.current
        aid = self.seat_ids[p]
        if aid not in action_dict:
            raise ValueError(f"HandFootMultiAgentEnv: {aid} is to act, got actions for {sorted(action_dict)}")
        rewards: Dict[str, float] = self._pending
        self._pending = {}
        rewards[aid] = rewards.get(aid, 0.0)
        self._step_env(action_dict[aid], rewards)
        term, trunc = self._advance(rewards)
        if term or trunc:
            self.last_result = self._result(truncated=trunc and not term)
            obs = {a: self._obs(q) for q, a in enumerate(self.seat_ids) if a is not None}
            for a in obs:
                rewards.setdefault(a, 0.0)
            return obs, rewards, {"__all__": term}, {"__all__": trunc and not term}, {}
        q = self.game.current
        return {self.seat_ids[q]: self._obs(q)}, rewards, {"__all__": False}, {"__all__": False}, {}


# ----------------------------------------------------------------------------- Ray classes (built lazily)
_LAZY: Dict[str, Any] = {}


def _build_lazy() -> Dict[str, Any]:
    if _LAZY:
        return _LAZY
    require_ray()
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

    env_cls = type("HandFootMultiAgentEnv", (HandFootEnvImpl, MultiAgentEnv),
                   {"__module__": __name__, "__doc__": HandFootEnvImpl.__doc__})

    class SelfPlayMetrics(RLlibCallback):
        """Per-iteration results of the training games, by opponent kind (``env_runners/selfplay/*``)."""

        def on_episode_end(self, *, episode=None, env_runner=None, metrics_logger=None, env=None, env_index=0,
                           **kwargs):
            try:
                e = env.envs[env_index].unwrapped
            except (AttributeError, IndexError):
                return
            r = getattr(e, "last_result", None)
            if r is None or metrics_logger is None:
                return
            log = metrics_logger.log_value
            log(("selfplay", "games"), 1, reduce="sum")
            log(("selfplay", "truncated"), int(r["truncated"]), reduce="sum")
            log(("selfplay", "score_diff_sum"), r["score_diff"], reduce="sum")
            log(("selfplay", "learner_return_sum"), r["learner_return"], reduce="sum")
            log(("selfplay", "actions_sum"), r["actions"], reduce="sum")
            log(("selfplay", "learner_decisions_sum"), r["learner_decisions"], reduce="sum")
            if r["result"] == r["result"]:        # not NaN (truncated games have no result)
                log(("selfplay", f"games_vs_{r['opponent']}"), 1, reduce="sum")
                log(("selfplay", f"result_sum_vs_{r['opponent']}"), r["result"], reduce="sum")

    SelfPlayMetrics.__module__ = __name__
    SelfPlayMetrics.__qualname__ = "SelfPlayMetrics"
    _LAZY.update(HandFootMultiAgentEnv=env_cls, SelfPlayMetrics=SelfPlayMetrics)
    return _LAZY


def __getattr__(name: str):
    if name in ("HandFootMultiAgentEnv", "SelfPlayMetrics"):
        return _build_lazy()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----------------------------------------------------------------------------- Ray
def resolve_address(address: Optional[str] = None) -> Optional[str]:
    """The cluster to join: ``address``, else ``RAY_ADDRESS``; ``None`` or ``local``: a private local Ray."""
    addr = address if address not in (None, "") else os.environ.get("RAY_ADDRESS") or None
    if addr is not None and str(addr).strip().lower() == "local":
        return None
    return addr


def init_ray(address: Optional[str] = None, num_cpus: Optional[int] = None, quiet: bool = False,
             ship_code: bool = False) -> bool:
    """Start or join Ray; ``True`` when this call started it (the caller then shuts it down).

    An address (argument, else ``RAY_ADDRESS``) joins that cluster and never
    passes ``num_cpus`` (the cluster's nodes declare their own resources);
    otherwise a private local instance is started with
    ``ray.init(address="local", num_cpus=num_cpus or os.cpu_count(), include_dashboard=False)``.
    ``ship_code`` sends this checkout to the workers as the job's ``working_dir``
    (for clusters whose nodes do not have handfoot installed).
    """
    require_ray()
    import ray
    if ray.is_initialized():
        return False
    addr = resolve_address(address)
    env_vars = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    runtime_env: Dict[str, Any] = {"env_vars": env_vars}
    if ship_code:
        from pathlib import Path
        root = Path(__file__).resolve().parent.parent
        runtime_env.update(working_dir=str(root), excludes=[".venv", "runs", ".git", "notebooks", "*.egg-info",
                                                            "__pycache__", ".pytest_cache", ".ruff_cache"])
    kw: Dict[str, Any] = dict(runtime_env=runtime_env, log_to_driver=not quiet,
                              logging_level="ERROR" if quiet else "WARNING")
    if quiet:
        import logging
        for name in ("ray", "ray.rllib", "ray.tune"):
            logging.getLogger(name).setLevel(logging.ERROR)
    if addr is None:
        ray.init(address="local", num_cpus=int(num_cpus or os.cpu_count() or 1), include_dashboard=False, **kw)
        return True
    try:
        ray.init(address=addr, **kw)
    except ConnectionError as e:
        if os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
            raise ConnectionError(
                f"{e}. Ray 2.60 clusters use token authentication by default: set RAY_AUTH_MODE=token and make "
                "the cluster's token available (~/.ray/auth_token, RAY_AUTH_TOKEN_PATH or RAY_AUTH_TOKEN); "
                "see docs/scaling_out.md") from e
        raise
    return True


def shutdown_ray() -> None:
    import ray
    if ray.is_initialized():
        ray.shutdown()


# ----------------------------------------------------------------------------- distributed evaluation
def ray_task_runner(address: Optional[str] = None, workers: int = 0, progress: bool = False):
    """``(task_runner, workers)`` for ``experiments.evaluate.run_evaluation(cfg, task_runner=...)``.

    Starts or joins Ray now (``address``, else ``RAY_ADDRESS``, else a private
    local Ray).  ``workers`` is the parallelism the harness should chunk the deals
    for: ``workers`` if it is above 1, else the cluster's CPU count.  The runner
    runs every chunk as a Ray task (:func:`run_tasks_on_ray`) and shuts down a
    Ray that was started here once the chunks are back.
    """
    started = init_ray(address, quiet=True)
    import ray
    n = int(workers) if workers and workers > 1 else max(1, int(ray.cluster_resources().get("CPU", 1)))

    def runner(fn: Callable[[Any], Any], tasks: Sequence[Any]) -> List[Any]:
        bar = None
        if progress:
            import sys

            from tqdm import tqdm
            bar = tqdm(total=len(tasks), unit="chunk", desc=f"evaluate (Ray, {n} CPUs)", file=sys.stderr,
                       dynamic_ncols=True)
        try:
            return run_tasks_on_ray(fn, tasks, address, progress=(lambda i, r: bar.update(1)) if bar else None)
        finally:
            if bar is not None:
                bar.close()
            if started:
                shutdown_ray()

    return runner, n


def run_tasks_on_ray(fn: Callable[[Any], Any], tasks: Sequence[Any], address: Optional[str] = None,
                     progress: Optional[Callable[[int, Any], None]] = None) -> List[Any]:
    """``[fn(t) for t in tasks]`` with every call a Ray task (1 CPU); results in task order.

    ``fn`` must be importable by name on the workers (e.g. ``experiments.evaluate._play_chunk``).
    ``progress(i, result)`` is called as tasks finish (in completion order).
    Ray is started (``address`` / ``RAY_ADDRESS`` / local) if it is not running; a
    Ray started here is shut down at the end.
    """
    started = init_ray(address, quiet=True)
    import ray
    try:
        remote = ray.remote(num_cpus=1, max_retries=2)(fn)
        refs = [remote.remote(t) for t in tasks]
        index = {r.hex(): i for i, r in enumerate(refs)}
        results: List[Any] = [None] * len(refs)
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                i = index[ref.hex()]
                results[i] = ray.get(ref)
                if progress is not None:
                    progress(i, results[i])
        return results
    finally:
        if started:
            shutdown_ray()


# ----------------------------------------------------------------------------- training config
#: the ``rllib:`` section of a training config (``backend: rllib``), with defaults
RLLIB_DEFAULTS: Dict[str, Any] = {
    "address": None,                 # Ray cluster to join (--ray-address / RAY_ADDRESS take precedence); null: local
    "num_cpus": None,                # CPUs of a private local Ray (null: all cores); ignored on a cluster
    "ship_code": False,              # send this checkout to the cluster's workers (runtime_env working_dir)
    "num_env_runners": 1,            # sampling actors (each one CPU); 0: sample in the trainer process
    "num_envs_per_env_runner": 4,    # games stepped together by one env runner (batched inference)
    "episodes_to_numpy": False,      # RLlib's numpy conversion of episodes: slower for this env (see docs)
    "train_batch_size": None,        # env steps per PPO update (null: ppo.n_steps x all envs)
    "minibatch_size": None,          # null: ppo.batch_size
    "rollout_fragment_length": "auto",
    "num_learners": 0,               # 0: the learner runs in the trainer process
    "vf_clip_param": None,           # RLlib's value-loss clip (null: off, as in SB3)
    "sample_timeout_s": 600.0,
}
_UNSUPPORTED_NOTE = "not supported by the rllib backend"


def rllib_settings(cfg: Any) -> Dict[str, Any]:
    """The ``rllib`` section of ``cfg`` merged over :data:`RLLIB_DEFAULTS` (ConfigError on a bad key)."""
    from experiments.train import ConfigError
    raw = dict(getattr(cfg, "rllib", None) or {})
    unknown = sorted(set(raw) - set(RLLIB_DEFAULTS))
    if unknown:
        raise ConfigError(f"unknown field 'rllib.{unknown[0]}' (known fields: {', '.join(RLLIB_DEFAULTS)})")
    out = dict(RLLIB_DEFAULTS)
    out.update(raw)
    return out


def validate_config(cfg: Any) -> Dict[str, Any]:
    """Check the parts of a TrainConfig that matter to the RLlib backend; the merged ``rllib`` section."""
    from experiments.train import ConfigError
    s = rllib_settings(cfg)

    def integer(name: str, lo: int, allow_none: bool = False) -> None:
        v = s[name]
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
    rfl = s["rollout_fragment_length"]
    if rfl != "auto" and (isinstance(rfl, bool) or not isinstance(rfl, int) or rfl < 1):
        raise ConfigError(f"rllib.rollout_fragment_length: expected 'auto' or a positive integer, got {rfl!r}")
    for name in ("episodes_to_numpy", "ship_code"):
        if not isinstance(s[name], bool):
            raise ConfigError(f"rllib.{name}: expected true or false, got {s[name]!r}")
    if s["address"] is not None and not isinstance(s["address"], str):
        raise ConfigError(f"rllib.address: expected a Ray address string or null, got {s['address']!r}")
    for name in ("vf_clip_param", "sample_timeout_s"):
        v = s[name]
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0):
            raise ConfigError(f"rllib.{name}: expected a positive number or null, got {v!r}")
    if cfg.network.centralised_critic:
        raise ConfigError(f"network.centralised_critic: {_UNSUPPORTED_NOTE}")
    if cfg.shaping.books or cfg.shaping.points:
        raise ConfigError(f"shaping: {_UNSUPPORTED_NOTE} (set shaping.books and shaping.points to 0)")
    if cfg.ppo.target_kl is not None:
        raise ConfigError(f"ppo.target_kl: {_UNSUPPORTED_NOTE} (RLlib's PPO has no early stopping); use null")
    return s


def total_envs(s: Dict[str, Any]) -> int:
    return max(1, int(s["num_env_runners"])) * int(s["num_envs_per_env_runner"])


def env_config(cfg: Any, seed: int) -> Dict[str, Any]:
    pool = 1 if cfg.snapshots.sampling == "latest" else int(cfg.snapshots.keep)
    return {"rules": cfg.rules, "reward": cfg.reward, "reward_scale": float(cfg.reward_scale),
            "max_actions": cfg.max_actions, "opponents": dict(cfg.opponents), "pool_size": pool, "seed": int(seed)}


def model_config(cfg: Any) -> Dict[str, Any]:
    from handfoot_env.config import load_rules
    r = load_rules(cfg.rules)
    return {"hidden": list(cfg.network.pi), "vf_hidden": list(cfg.network.vf), "activation": cfg.network.activation,
            "players": r.players, "teams": r.teams}


def build_algo_config(cfg: Any, seed: int):
    """The RLlib ``PPOConfig`` (new API stack) of a TrainConfig with ``backend: rllib``."""
    require_ray()
    from ray.rllib.algorithms.ppo import PPOConfig as RLlibPPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from agents.rllib_policy import module_spec
    s = validate_config(cfg)
    lazy = _build_lazy()
    ec = env_config(cfg, seed)
    obs_space, act_space = spaces_for(cfg.rules)
    mc = model_config(cfg)
    modules = [LEARNER] + snapshot_ids(ec["pool_size"])
    specs = {m: module_spec(obs_space, act_space, mc) for m in modules}
    p = cfg.ppo
    batch = int(s["train_batch_size"] or p.n_steps * total_envs(s))
    mini = int(min(batch, s["minibatch_size"] or p.batch_size))
    conf = (RLlibPPOConfig()
            .environment(lazy["HandFootMultiAgentEnv"], env_config=ec, disable_env_checking=True)
            .env_runners(num_env_runners=int(s["num_env_runners"]),
                         num_envs_per_env_runner=int(s["num_envs_per_env_runner"]),
                         episodes_to_numpy=bool(s["episodes_to_numpy"]),
                         rollout_fragment_length=s["rollout_fragment_length"],
                         num_cpus_per_env_runner=1, sample_timeout_s=float(s["sample_timeout_s"]))
            .learners(num_learners=int(s["num_learners"]))
            .multi_agent(policies=set(modules), policy_mapping_fn=agent_to_module, policies_to_train=[LEARNER])
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
            .training(lr=float(p.learning_rate), train_batch_size_per_learner=batch, minibatch_size=mini,
                      num_epochs=int(p.n_epochs), gamma=float(p.gamma), lambda_=float(p.gae_lambda),
                      clip_param=float(p.clip_range), entropy_coeff=float(p.ent_coef),
                      vf_loss_coeff=float(p.vf_coef), grad_clip=float(p.max_grad_norm), grad_clip_by="global_norm",
                      use_kl_loss=False, vf_clip_param=float(s["vf_clip_param"] or 1e9))
            .callbacks(lazy["SelfPlayMetrics"])
            .reporting(metrics_num_episodes_for_smoothing=100)
            .debugging(seed=int(seed), log_level="ERROR"))
    return conf


# ----------------------------------------------------------------------------- the trainer
def _trainer_base():
    from experiments.train import Trainer
    return Trainer


def _num(x: Any) -> Optional[float]:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if np.isfinite(v) else None


def make_trainer(cfg: Any, run, resume=None, quiet: bool = False):
    """An :class:`RLlibTrainer` (a subclass of ``experiments.train.Trainer``: same run folder,
    TensorBoard tags, metrics.jsonl records, evaluation, best/final checkpoints)."""
    Base = _trainer_base()

    class RLlibTrainer(Base):
        """``experiments.train.Trainer`` with RLlib PPO underneath (see the module docstring)."""

        backend = "rllib"

        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.algo = None
            self.owns_ray = False
            self.settings = validate_config(self.cfg)
            self.timesteps = 0
            self.state.setdefault("iterations", 0)
            self.state.setdefault("next_slot", 0)
            self.state.setdefault("env_steps", 0)

        # -------------------------------------------------------- weights
        def learner_state(self) -> Dict[str, Any]:
            st = self.algo.learner_group.get_state(components=f"learner/rl_module/{LEARNER}")
            return st["learner"]["rl_module"][LEARNER]

        def weights(self) -> Dict[str, Any]:
            from agents.rllib_policy import actor_weights
            return actor_weights(self.learner_state())

        def push_modules(self, states: Dict[str, Dict[str, Any]]) -> None:
            """Set module weights in the learner and on every env runner (snapshots are not synced by PPO)."""
            if not states:
                return
            self.algo.learner_group.set_state({"learner": {"rl_module": dict(states)}})

            def _set(er, _states=states):
                if getattr(er, "module", None) is None:
                    return False
                for mid, st in _states.items():
                    if mid in er.module:
                        er.module[mid].set_state(st)
                return True
            self.algo.env_runner_group.foreach_env_runner(_set, local_env_runner=True)

        def snapshot(self, fill_all: bool = False) -> None:
            """Copy the learner into the next snapshot slot (round robin), or into every slot."""
            slots = snapshot_ids(env_config(self.cfg, 0)["pool_size"])
            if not slots:
                return
            st = self.learner_state()
            if fill_all:
                self.push_modules({m: st for m in slots})
                return
            k = int(self.state["next_slot"]) % len(slots)
            self.push_modules({slots[k]: st})
            self.state["next_slot"] = k + 1
            self.state["snapshot_updates"] = (list(self.state.get("snapshot_updates", []))
                                              + [self.state["iterations"]])[-len(slots):]

        # -------------------------------------------------------- setup
        def setup(self) -> None:
            import torch
            cfg = self.cfg
            s = self.settings
            torch.set_num_threads(cfg.torch_threads)
            start = 0
            if self.resume is not None:
                st = json.loads((self.resume / "trainer.json").read_text())
                start = int(st["num_timesteps"])
                self.state.update(st["state"])
            self.timesteps = start
            self.env_seed = cfg.seed if start == 0 else int(
                np.random.SeedSequence([cfg.seed, start]).generate_state(1)[0] % (2 ** 31))
            self.owns_ray = init_ray(s["address"], num_cpus=s["num_cpus"], quiet=self.quiet,
                                     ship_code=bool(s["ship_code"]))
            conf = build_algo_config(cfg, self.env_seed)
            self.algo = conf.build_algo()
            if self.resume is not None:
                self.algo.restore_from_path(str((self.resume / "algorithm").resolve()))
                # snapshot slots are not synced by PPO's weight sync: push them from the restored learner group
                slots = snapshot_ids(env_config(cfg, 0)["pool_size"])
                if slots:
                    lg = self.algo.learner_group.get_state(components=[f"learner/rl_module/{m}" for m in slots])
                    self.push_modules(dict(lg["learner"]["rl_module"]))
            else:
                self.snapshot(fill_all=True)         # the pool starts as copies of the initial learner
            from torch.utils.tensorboard import SummaryWriter
            self.writer = SummaryWriter(str(self.run / "tb"))
            if self.resume is None:
                self.writer.add_text("config", "```\n" + yaml.safe_dump(_config_dict(cfg), sort_keys=False)
                                     + "\n```", 0)
            ev = cfg.evaluation
            if self.state["next_eval"] is None:
                self.state["next_eval"] = ev.every_timesteps if ev.every_timesteps > 0 else None
            if self.state["next_checkpoint"] is None:
                self.state["next_checkpoint"] = cfg.checkpoint_every if cfg.checkpoint_every > 0 else None

        def sync(self, snapshots: bool = False) -> None:   # RLlib syncs the learner itself
            pass

        # -------------------------------------------------------- one iteration
        def on_result(self, r: Dict[str, Any], wall: float) -> None:
            er = r.get("env_runners", {}) or {}
            lr = (r.get("learners", {}) or {}).get(LEARNER, {}) or {}
            steps_by_module = er.get("num_module_steps_sampled", {}) or {}
            learner_steps = int(steps_by_module.get(LEARNER, 0) or 0)
            env_steps = int(er.get("num_env_steps_sampled", 0) or 0)
            self.timesteps += learner_steps
            self.state["iterations"] += 1
            self.state["updates"] = self.state["iterations"]
            self.state["env_steps"] = int(self.state.get("env_steps", 0)) + env_steps
            steps = self.timesteps
            rec: Dict[str, Any] = {"kind": "rollout", "timesteps": steps, "update": self.state["iterations"],
                                   "env_steps": env_steps, "learner_steps": learner_steps,
                                   "iteration_s": round(wall, 3)}
            sp = er.get("selfplay", {}) or {}
            games = int(_num(sp.get("games")) or 0)
            if games:
                rec["games"] = games
                rec["ep_rew_mean"] = (_num(sp.get("learner_return_sum")) or 0.0) / games
                rec["ep_len_mean"] = (_num(sp.get("learner_decisions_sum")) or 0.0) / games
                rec["actions_per_game"] = (_num(sp.get("actions_sum")) or 0.0) / games
                self.scalar("selfplay/games", games, steps)
                self.scalar("selfplay/score_diff", (_num(sp.get("score_diff_sum")) or 0.0) / games, steps)
                self.scalar("selfplay/truncated", (_num(sp.get("truncated")) or 0.0) / games, steps)
                self.scalar("rollout/ep_rew_mean", rec["ep_rew_mean"], steps)
                self.scalar("rollout/ep_len_mean", rec["ep_len_mean"], steps)
            for key, v in sorted(sp.items()):
                if key.startswith("games_vs_") and _num(v):
                    kind = key[len("games_vs_"):]
                    res = (_num(sp.get(f"result_sum_vs_{kind}")) or 0.0) / float(v)
                    rec[f"result_vs_{kind}"] = res
                    self.scalar(f"selfplay/result_vs_{kind}", res, steps)
            # the SB3 backend's names for the update statistics (metrics.jsonl "update" records, train/*)
            upd: Dict[str, Any] = {"kind": "update", "timesteps": steps, "update": self.state["iterations"]}
            for name, key, sign in (("learning_rate", "default_optimizer_learning_rate", 1.0),
                                    ("entropy_loss", "entropy", -1.0), ("policy_gradient_loss", "policy_loss", 1.0),
                                    ("value_loss", "vf_loss", 1.0), ("loss", "total_loss", 1.0),
                                    ("explained_variance", "vf_explained_var", 1.0)):
                v = _num(lr.get(key))
                if v is not None:
                    upd[name] = sign * v
                    self.scalar(f"train/{name}", sign * v, steps)
            if wall > 0:
                rec["env_steps_per_s"] = env_steps / wall
                self.scalar("time/fps", env_steps / wall, steps)
                self.scalar("time/learner_steps_per_s", learner_steps / wall, steps)
            self.scalar("time/iteration_s", wall, steps)
            self.metric(rec)
            self.metric(upd)

        def between_iterations(self) -> None:
            """Snapshots, evaluation and checkpoints (the SB3 trainer's on_rollout_start)."""
            cfg = self.cfg
            steps = self.timesteps
            it = self.state["iterations"]
            if it > 0 and it % cfg.snapshots.every_updates == 0 and it not in self.state.get("snapshot_updates", []):
                self.snapshot()
                self.scalar("selfplay/snapshots", min(len(self.state["snapshot_updates"]), cfg.snapshots.keep), steps)
            self.run_schedules(steps)

        # -------------------------------------------------------- checkpoints
        def checkpoint(self, path, periodic: bool) -> None:
            import shutil

            from agents.policy import ACTOR_FILE, save_actor
            from experiments.train import write_json
            tmp = path.with_name(path.name + ".tmp")
            if tmp.exists():
                shutil.rmtree(tmp)
            tmp.mkdir(parents=True)
            self.algo.save_to_path(str((tmp / "algorithm").resolve()))
            save_actor(self.weights(), tmp / ACTOR_FILE)
            write_json(tmp / "trainer.json", {"num_timesteps": int(self.timesteps), "state": self.state,
                                              "run": str(self.run), "backend": "rllib",
                                              "config": _config_dict(self.cfg)})
            self.commit_checkpoint(tmp, path, periodic)

        # -------------------------------------------------------- run
        def learn(self) -> None:
            import time
            total = self.cfg.total_timesteps
            if self.timesteps >= total:
                self.log(f"already at {self.timesteps:,} timesteps (total_timesteps {total:,})")
                return
            if self.cfg.progress and not self.quiet:
                import sys

                from tqdm import tqdm
                self.bar = tqdm(total=total, initial=self.timesteps, unit="step", desc="train (rllib)",
                                file=sys.stderr, dynamic_ncols=True, smoothing=0.05)
            try:
                while self.timesteps < total:
                    self.between_iterations()
                    t0 = time.perf_counter()
                    r = self.algo.train()
                    wall = time.perf_counter() - t0
                    before = self.timesteps
                    self.on_result(r, wall)
                    if self.bar is not None:
                        env_steps = (r.get("env_runners", {}) or {}).get("num_env_steps_sampled", 0) or 0
                        self.bar.update(self.timesteps - before)
                        if wall > 0:
                            self.bar.set_postfix_str(f"{env_steps / wall:.0f} env steps/s")
            finally:
                if self.bar is not None:
                    self.bar.close()
                    self.bar = None

        def finish(self) -> Dict[str, Any]:
            steps = self.timesteps
            self.evaluate_if_due(steps)
            out = self.finish_run(steps)
            out.update(iterations=self.state["iterations"], env_steps=self.state["env_steps"])
            return out

        def close(self) -> None:
            try:
                if self.algo is not None:
                    self.algo.stop()
            except Exception:  # noqa: BLE001 - stopping dead actors must not hide the real error
                pass
            if self.writer is not None:
                self.writer.flush()
                self.writer.close()
            if self.owns_ray:
                shutdown_ray()

    return RLlibTrainer(cfg, run, resume=resume, quiet=quiet)


def _config_dict(cfg: Any) -> Dict[str, Any]:
    from experiments.train import config_to_dict
    return config_to_dict(cfg)


def train(cfg: Any, resume: Any = None, quiet: bool = False, argv: Optional[List[str]] = None) -> Dict[str, Any]:
    """``experiments.train.train`` for ``backend: rllib``: same run folder, same result dict."""
    import platform
    import random
    import sys
    import time
    from pathlib import Path

    from experiments.train import (git_commit, make_run_folder, package_versions, resolve_resume, write_json)
    require_ray()
    cfg.validate()
    validate_config(cfg)
    resume = resume or cfg.resume
    ck = resolve_resume(resume) if resume else None
    if ck is not None:
        run = Path(json.loads((ck / "trainer.json").read_text())["run"])
        if not run.exists():
            run = ck.parent.parent if ck.parent.name == "checkpoints" else ck.parent
    else:
        run = make_run_folder(cfg)
    (run / "config.yaml").write_text(yaml.safe_dump(_config_dict(cfg), sort_keys=False))
    versions = package_versions()
    for pkg in ("ray",):
        try:
            from importlib.metadata import version
            versions[pkg] = version(pkg)
        except Exception:  # noqa: BLE001
            versions[pkg] = "not installed"
    s = rllib_settings(cfg)
    info: Dict[str, Any] = {
        "backend": "rllib", "seed": cfg.seed,
        "seeds": {"python/numpy/torch/rllib": cfg.seed, "envs": None, "evaluation": cfg.evaluation.seed},
        "versions": versions, "git_commit": git_commit(), "argv": argv if argv is not None else sys.argv,
        "started": time.strftime("%Y-%m-%d %H:%M:%S"), "platform": platform.platform(),
        "cpu_count": os.cpu_count(), "resumed_from": str(ck) if ck else None,
        "ray": {"address": resolve_address(s["address"]) or "local", "num_env_runners": s["num_env_runners"],
                "num_envs_per_env_runner": s["num_envs_per_env_runner"]}}
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    trainer = make_trainer(cfg, run, resume=ck, quiet=quiet)
    t0 = time.perf_counter()
    history: List[Dict[str, Any]] = []
    try:
        trainer.setup()
        import ray
        info["seeds"]["envs"] = (f"base {trainer.env_seed}, per env: SeedSequence([base, env runner index, "
                                 f"vector index])")
        info["ray"]["cluster_resources"] = {k: v for k, v in ray.cluster_resources().items()
                                            if k in ("CPU", "GPU", "memory")}
        info["ray"]["nodes"] = len([n for n in ray.nodes() if n.get("Alive")])
        runs_json = run / "run.json"
        history = json.loads(runs_json.read_text()).get("sessions", []) if runs_json.exists() else []
        history.append(info)
        write_json(runs_json, {**info, "sessions": history})
        trainer.log(f"run folder: {run} (RLlib PPO, {s['num_env_runners']} env runner(s) x "
                    f"{s['num_envs_per_env_runner']} envs, Ray {info['ray']['address']})"
                    + (f" (resumed from {ck} at {trainer.timesteps:,} steps)" if ck else ""))
        trainer.learn()
        result = trainer.finish()
    finally:
        trainer.close()
    result["wall_s"] = time.perf_counter() - t0
    if history:
        history[-1]["wall_s"] = result["wall_s"]
        write_json(run / "run.json", {**history[-1], "sessions": history})
    return result
