"""``handfoot bench``: throughput of the engine and envs, next to OpenSpiel and RLCard.

Every row plays whole games with uniform random legal play (a seeded
``random.Random``), single process, and reports agent actions per second,
games per second and the ratio to OpenSpiel's ``gin_rummy`` measured in the
same run the same way:

``engine``     the rules engine alone: ``Game.legal_actions()`` then
               ``Game._apply(a)`` (no observation).
``aec``        the wrapped PettingZoo env ``handfoot_v0.env()``: ``env.last()``
               (observation and action mask of the agent to act), then
               ``env.step(a)``.
``vecenv``     the batched runner :class:`experiments.batched.BatchedVecEnv`
               (SB3 ``VecEnv``): many games in one process, one learner seat per
               game with observation and mask every decision, the other seats
               random legal play; actions/s counts every seat's actions, obs/s
               the learner observations.
``selfplay``   the self-play training env as ``handfoot train`` builds it
               (:func:`experiments.selfplay.make_vec_env`, single process:
               ``DummyVecEnv`` of ``SeatEnv`` behind ``MaskedVecEnv``), with the
               network of the ``selfplay.train_config`` recipe freshly initialised
               playing the learner's partner (as in training) and random opponents;
               the learner takes random legal actions from ``action_masks()``.
               actions/s counts every seat's actions, obs/s the learner's.
``openspiel``  ``pyspiel.load_game("gin_rummy")``: ``state.observation_tensor()``
               and ``state.legal_actions()`` every decision, chance nodes sampled
               from ``chance_outcomes()`` (not counted as actions).
``openspiel_rl`` OpenSpiel's RL API ``rl_environment.Environment("gin_rummy")``:
               ``env.step([a])`` returns a TimeStep with every player's
               observation and the legal actions (for context; the ratio column
               is always against the ``openspiel`` row).
``rlcard``     ``rlcard.make("gin-rummy")``: ``env.step(a)`` (which builds the
               state and legal actions) every decision.

OpenSpiel and RLCard come with the ``bench`` extra (``pip install -e .[bench]``);
without them their rows say "not installed".  The run also reports the memory of
one env instance (tracemalloc: creating and resetting N envs, divided by N) and
the time of ``Game.clone()`` on mid-game states.

Timing uses the process CPU clock by default (``clock: cpu``), which a busy
shared machine disturbs less than the wall clock; both are saved.  Rows are
timed in ``interleave`` round-robin slices (default 5: every row runs a fifth of
its budget, then the next row, and so on around again), so that a machine whose
speed drifts during the run slows every row alike and the ratios stay fair.

Configs live in ``configs/bench/`` (``default.yaml``, ``quick.yaml``); flags
override their fields.  Results: a table on stdout, ``bench.json`` and
``bench.md`` in ``--out`` (default ``runs/bench``).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import os
import platform
import random
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

ROW_KINDS = ("engine", "aec", "vecenv", "selfplay", "openspiel", "openspiel_rl", "rlcard")
DEFAULTS: Dict[str, Any] = {
    "presets": ["pagat", "bicycle"],        # rules measured by engine, aec and vecenv rows
    "growth_presets": ["six_player"],       # extra engine and aec rows for the cost-growth note
    "rows": list(ROW_KINDS),
    "seconds": 10.0,                        # time budget per row (whole games; at least one)
    "games": None,                          # or a fixed number of games per row (overrides seconds)
    "warmup_seconds": 0.5,                  # untimed play before each row (caches, tables)
    "interleave": 5,                        # rows are timed in this many round-robin slices
    "seed": 0,
    "clock": "cpu",                         # cpu (process time) or wall
    "vecenv": {"n_envs": 16},
    "selfplay": {"n_envs": 8, "train_config": "configs/train/quickstart.yaml"},
    "memory": {"instances": 100},
    "clone": {"states": 200, "repeats": 50},
    "out": "runs/bench",
}
QUICK: Dict[str, Any] = {
    "seconds": 0.2,
    "games": None,
    "warmup_seconds": 0.0,
    "interleave": 2,
    "vecenv": {"n_envs": 4},
    "selfplay": {"n_envs": 2},
    "memory": {"instances": 5},
    "clone": {"states": 10, "repeats": 5},
}
TARGETS = {"aec_vs_openspiel": 1.0, "engine_vs_openspiel": 2.0, "env_bytes": 1_000_000, "clone_us": 50.0}
CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs" / "bench"


class BenchConfigError(ValueError):
    pass


# ------------------------------------------------------------------------------ config
def _merge(base: Dict[str, Any], extra: Dict[str, Any], where: str) -> Dict[str, Any]:
    out = dict(base)
    for k, v in (extra or {}).items():
        if k not in DEFAULTS:
            raise BenchConfigError(f"{where}: unknown field {k!r} (known: {', '.join(DEFAULTS)})")
        if isinstance(DEFAULTS[k], dict):
            if not isinstance(v, dict):
                raise BenchConfigError(f"{where}: {k} must be a mapping, got {v!r}")
            unknown = set(v) - set(DEFAULTS[k])
            if unknown:
                raise BenchConfigError(f"{where}: unknown field(s) {sorted(unknown)} in {k} "
                                       f"(known: {', '.join(DEFAULTS[k])})")
            out[k] = {**out[k], **v}
        else:
            out[k] = v
    return out


def _find_config(name: str) -> Optional[Path]:
    for p in (Path(name), Path("configs/bench") / name, CONFIG_DIR / name, CONFIG_DIR / f"{name}.yaml"):
        if p.is_file():
            return p
    return None


def load_config(path: Optional[str] = None, quick: bool = False) -> Dict[str, Any]:
    """The bench settings: DEFAULTS, then the YAML file, then the quick overrides."""
    import yaml
    cfg = dict(DEFAULTS)
    if path is None:
        path_found = _find_config("quick.yaml" if quick else "default.yaml")
    else:
        path_found = _find_config(path)
        if path_found is None:
            raise BenchConfigError(f"config file {path!r} not found")
    if path_found is not None:
        data = yaml.safe_load(path_found.read_text()) or {}
        if not isinstance(data, dict):
            raise BenchConfigError(f"{path_found}: expected a mapping of fields")
        cfg = _merge(cfg, data, str(path_found))
        cfg["config_file"] = str(path_found)
    if quick:
        cfg = _merge(cfg, QUICK, "--quick")
    cfg.setdefault("config_file", None)
    return validate(cfg)


def validate(cfg: Dict[str, Any]) -> Dict[str, Any]:
    for k in cfg["rows"]:
        if k not in ROW_KINDS:
            raise BenchConfigError(f"rows: unknown row {k!r} (known: {', '.join(ROW_KINDS)})")
    if cfg["clock"] not in ("cpu", "wall"):
        raise BenchConfigError(f"clock must be 'cpu' or 'wall', got {cfg['clock']!r}")
    if cfg["games"] is not None and int(cfg["games"]) < 1:
        raise BenchConfigError(f"games must be a positive integer or null, got {cfg['games']!r}")
    if float(cfg["seconds"]) <= 0:
        raise BenchConfigError(f"seconds must be positive, got {cfg['seconds']!r}")
    for section in ("vecenv", "selfplay"):
        n = cfg[section]["n_envs"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise BenchConfigError(f"{section}.n_envs must be a positive integer, got {n!r}")
    if "selfplay" in cfg["rows"] and _train_config_path(str(cfg["selfplay"]["train_config"])) is None:
        raise BenchConfigError(f"selfplay.train_config: file {cfg['selfplay']['train_config']!r} not found")
    il = cfg["interleave"]
    if isinstance(il, bool) or not isinstance(il, int) or il < 1:
        raise BenchConfigError(f"interleave must be a positive integer, got {il!r}")
    from handfoot_env.config import load_rules
    for p in list(cfg["presets"]) + list(cfg["growth_presets"] or []):
        try:
            load_rules(p)
        except Exception as e:  # noqa: BLE001 - reported as a config error
            raise BenchConfigError(f"presets: {e}") from None
    return cfg


# ------------------------------------------------------------------------------ timing
class _Clock:
    """Process CPU time and wall time, summed over the timed slices."""

    def __init__(self, kind: str):
        self.kind = kind
        self.wall_total = self.cpu_total = 0.0

    def start(self) -> None:
        self.w0, self.c0 = time.perf_counter(), time.process_time()

    def stop(self) -> None:
        self.wall_total += time.perf_counter() - self.w0
        self.cpu_total += time.process_time() - self.c0

    def wall(self) -> float:
        return self.wall_total

    def cpu(self) -> float:
        return self.cpu_total

    def running(self) -> float:
        """Seconds in the current slice on the configured clock."""
        return (time.process_time() - self.c0) if self.kind == "cpu" else (time.perf_counter() - self.w0)


class _GameRunner:
    """A row measured slice by slice: ``play_one(seed)`` plays one whole game and returns
    (actions, observations); each slice plays whole games until its budget is spent."""

    def __init__(self, play_one: Callable[[int], Any], cfg: Dict[str, Any], seed0: int,
                 version: Optional[str] = None):
        self.play_one, self.cfg, self.seed0 = play_one, cfg, seed0
        self.clock = _Clock(cfg["clock"])
        self.actions = self.obs = self.games = 0
        self.extra: Dict[str, Any] = {} if version is None else {"version": version}

    def warmup(self) -> None:
        warm = float(self.cfg.get("warmup_seconds") or 0)
        t0 = time.perf_counter()
        s = 10 ** 6
        while time.perf_counter() - t0 < warm:
            self.play_one(self.seed0 + s)
            s += 1

    def run_slice(self, k: int, slices: int) -> None:
        games_target = self.cfg["games"]
        goal = -(-int(games_target) * (k + 1) // slices) if games_target is not None else None
        budget = float(self.cfg["seconds"]) / slices
        clock = self.clock
        gc.collect()
        clock.start()
        while True:
            if goal is not None and self.games >= goal:
                break
            a, o = self.play_one(self.seed0 + self.games)
            self.actions += a
            self.obs += o
            self.games += 1
            if goal is None and clock.running() >= budget:
                break
        clock.stop()

    def result(self) -> Dict[str, Any]:
        return {**_rates(self.actions, self.obs, self.games, self.clock), **self.extra}


def _rates(actions: int, obs: int, games: float, clock: _Clock) -> Dict[str, Any]:
    wall, cpu = clock.wall(), clock.cpu()
    el = cpu if clock.kind == "cpu" else wall
    el = max(el, 1e-9)
    return {"status": "ok", "actions": actions, "observations": obs, "games": games,
            "seconds_wall": round(wall, 4), "seconds_cpu": round(cpu, 4),
            "actions_per_s": actions / el, "games_per_s": games / el, "obs_per_s": obs / el,
            "actions_per_game": actions / games if games else None}


# ------------------------------------------------------------------------------ rows
def bench_engine(preset: str, cfg: Dict[str, Any]) -> "_GameRunner":
    from handfoot_env.engine import Game
    g = Game(preset)
    rng = random.Random(cfg["seed"])

    def play(seed: int):
        g.reset(seed=seed)
        legal_actions, apply, rr = g.legal_actions, g._apply, rng.randrange
        n = 0
        while not g.game_over:
            la = legal_actions()
            apply(la[rr(len(la))])
            n += 1
        return n, 0

    return _GameRunner(play, cfg, cfg["seed"])


def play_aec_game(env, seed: int, rng: random.Random) -> int:
    """One whole game of uniform random legal play through a PettingZoo AEC env: ``env.last()``
    (observation and mask), a random legal id from the mask, ``env.step``; returns the actions."""
    env.reset(seed=seed)
    n = 0
    rr = rng.randrange
    for _agent in env.agent_iter():
        obs, _rew, term, trunc, _info = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = obs["action_mask"].nonzero()[0]
        env.step(int(legal[rr(len(legal))]))
        n += 1
    return n


def bench_aec(preset: str, cfg: Dict[str, Any]) -> "_GameRunner":
    from handfoot_env import handfoot_v0
    env = handfoot_v0.env(rules=preset)
    rng = random.Random(cfg["seed"])

    def play(seed: int):
        n = play_aec_game(env, seed, rng)
        return n, n

    return _GameRunner(play, cfg, cfg["seed"])


def _random_vec_step(venv, n_envs: int, seed: int) -> Callable[[], None]:
    """One vector step of uniform random legal play from ``venv.action_masks()``."""
    import numpy as np
    rng = random.Random(seed)
    actions = np.zeros(n_envs, dtype=np.int64)

    def step() -> None:
        masks = venv.action_masks()
        rr = rng.randrange
        for i in range(n_envs):
            legal = masks[i].nonzero()[0]
            actions[i] = legal[rr(len(legal))]
        venv.step(actions)

    return step


def bench_vecenv(preset: str, cfg: Dict[str, Any]) -> "_VecRunner":
    from experiments.batched import BatchedVecEnv
    n_envs = int(cfg["vecenv"]["n_envs"])
    venv = BatchedVecEnv(n_envs=n_envs, rules=preset, seed=cfg["seed"])
    step = _random_vec_step(venv, n_envs, cfg["seed"])
    venv.reset()
    return _VecRunner(venv, step, cfg)


class _VecRunner:
    """The batched runner's row, slice by slice: whole ``VecEnv`` steps until the slice's budget
    is spent (or the slice's share of finished games)."""

    def __init__(self, venv, step: Callable[[], None], cfg: Dict[str, Any],
                 counters: Optional[Callable[[], Any]] = None):
        self.venv, self.step, self.cfg = venv, step, cfg
        # (game actions so far, episodes started so far) of all the envs
        self.counters = counters or (lambda: (venv.total_actions, venv.total_episodes))
        self.clock = _Clock(cfg["clock"])
        self.actions = self.decisions = self.episodes = 0

    def warmup(self) -> None:
        warm = float(self.cfg.get("warmup_seconds") or 0)
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < warm:
            self.step()

    def run_slice(self, k: int, slices: int) -> None:
        step, n_envs, counters = self.step, self.venv.num_envs, self.counters
        games_target = self.cfg["games"]
        goal = -(-int(games_target) * (k + 1) // slices) if games_target is not None else None
        budget = float(self.cfg["seconds"]) / slices
        a0, e0 = counters()
        clock = self.clock
        gc.collect()
        clock.start()
        while True:
            if goal is not None and self.episodes + counters()[1] - e0 >= goal:
                break
            step()
            self.decisions += n_envs
            if goal is None and clock.running() >= budget:
                break
        clock.stop()
        a1, e1 = counters()
        self.actions += a1 - a0
        self.episodes += e1 - e0

    def result(self) -> Dict[str, Any]:
        res = _rates(self.actions, self.decisions, self.episodes, self.clock)
        res["n_envs"] = self.venv.num_envs
        res["actions_per_game"] = None  # games in flight at both ends of the window: not meaningful here
        return res


def _train_config_path(name: str) -> Optional[Path]:
    """A training config by path, from the working directory or the project's root."""
    for p in (Path(name), CONFIG_DIR.parents[1] / name):
        if p.is_file():
            return p
    return None


def bench_selfplay(preset: str, cfg: Dict[str, Any]) -> "_VecRunner":
    from experiments.selfplay import extract_weights, make_vec_env
    from experiments.train import build_model, env_kwargs, load_train_config
    sp = cfg["selfplay"]
    n_envs = int(sp["n_envs"])
    tcfg = load_train_config(_train_config_path(sp["train_config"]), [f"rules={preset}"])
    kwargs = {**env_kwargs(tcfg), "opponents": {"random": 1.0}}
    venv = make_vec_env(kwargs, n_envs, cfg["seed"], subprocess=False)
    model = build_model(tcfg, venv, cfg["seed"])
    venv.env_method("set_learner", extract_weights(model.policy))      # the partner's network
    seat_envs = [e.unwrapped for e in venv.venv.envs]
    step = _random_vec_step(venv, n_envs, cfg["seed"])
    venv.reset()
    return _VecRunner(venv, step, cfg, counters=lambda: (sum(e.actions_applied for e in seat_envs),
                                                         sum(e.episode_count for e in seat_envs)))


def bench_openspiel(cfg: Dict[str, Any]) -> Any:
    try:
        import pyspiel
    except ImportError:
        return {"status": "not installed", "hint": "pip install open_spiel  (or: pip install -e .[bench])"}
    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(cfg["seed"])

    def play(seed: int):
        state = game.new_initial_state()
        n = 0
        rr = rng.randrange
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                acts, probs = zip(*outcomes)
                state.apply_action(rng.choices(acts, probs)[0])
                continue
            state.observation_tensor()
            legal = state.legal_actions()
            state.apply_action(legal[rr(len(legal))])
            n += 1
        return n, n

    return _GameRunner(play, cfg, cfg["seed"], version=_version("open_spiel"))


def bench_openspiel_rl(cfg: Dict[str, Any]) -> Any:
    """OpenSpiel's RL-facing API: ``rl_environment.Environment("gin_rummy")`` (a TimeStep with the
    observation of every player and the legal actions after each step; chance nodes inside)."""
    try:
        from open_spiel.python import rl_environment
    except ImportError:
        return {"status": "not installed", "hint": "pip install open_spiel  (or: pip install -e .[bench])"}
    env = rl_environment.Environment("gin_rummy")
    env.seed(cfg["seed"])
    rng = random.Random(cfg["seed"])

    def play(seed: int):
        ts = env.reset()
        n = 0
        rr = rng.randrange
        while not ts.last():
            obs = ts.observations
            legal = obs["legal_actions"][obs["current_player"]]
            ts = env.step([legal[rr(len(legal))]])
            n += 1
        return n, n

    return _GameRunner(play, cfg, cfg["seed"], version=_version("open_spiel"))


def bench_rlcard(cfg: Dict[str, Any]) -> Any:
    try:
        import rlcard
    except ImportError:
        return {"status": "not installed", "hint": "pip install rlcard  (or: pip install -e .[bench])"}
    env = rlcard.make("gin-rummy", config={"seed": cfg["seed"]})
    rng = random.Random(cfg["seed"])

    def play(seed: int):
        state, _pid = env.reset()
        n = 0
        rr = rng.randrange
        while not env.is_over():
            legal = list(state["legal_actions"])
            state, _pid = env.step(legal[rr(len(legal))])
            n += 1
        return n, n

    return _GameRunner(play, cfg, cfg["seed"], version=_version("rlcard"))


def _version(dist: str) -> Optional[str]:
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:  # noqa: BLE001
        return None


# ------------------------------------------------------------------------------ memory & clone
def measure_memory(preset: str, instances: int, seed: int = 0) -> Dict[str, Any]:
    """tracemalloc bytes per wrapped env after ``reset``, and per Game after a whole random game."""
    from handfoot_env import handfoot_v0
    from handfoot_env.engine import Game
    warm = handfoot_v0.env(rules=preset)          # fills the shared lookup tables first
    warm.reset(seed=seed)
    warm.last()
    del warm
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        envs = []
        for i in range(instances):
            e = handfoot_v0.env(rules=preset)
            e.reset(seed=seed + i)
            envs.append(e)
        gc.collect()
        env_bytes = (tracemalloc.get_traced_memory()[0] - base) / instances
        del envs
        gc.collect()
    finally:
        tracemalloc.stop()
    # a game played to the end carries its whole action history (played under tracemalloc,
    # after one untraced game has filled the shared lookup tables)
    rng = random.Random(seed)

    def play(g: Game) -> Game:
        while not g.game_over:
            la = g.legal_actions()
            g._apply(la[rng.randrange(len(la))])
        return g

    warm_game = Game(preset)
    warm_game.reset(seed=seed + 999)
    play(warm_game)
    n_games = max(1, min(instances, 3))
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        finished = []
        for i in range(n_games):
            g = Game(preset)
            g.reset(seed=seed + i)
            finished.append(play(g))
        gc.collect()
        game_end_bytes = (tracemalloc.get_traced_memory()[0] - base) / n_games
        del finished
    finally:
        tracemalloc.stop()
    return {"preset": preset, "instances": instances, "env_after_reset_bytes": round(env_bytes),
            "game_after_full_game_bytes": round(game_end_bytes)}


def measure_clone(preset: str, states: int, repeats: int, seed: int = 0, clock: str = "cpu") -> Dict[str, Any]:
    """Mean microseconds of ``Game.clone()`` over mid-game states of random games (spread over whole games)."""
    from handfoot_env.engine import Game
    rng = random.Random(seed)
    g = Game(preset)
    pool: List[Game] = []
    s = seed
    while len(pool) < states:
        g.reset(seed=s)
        s += 1
        step = 0
        while not g.game_over and len(pool) < states:
            la = g.legal_actions()
            g._apply(la[rng.randrange(len(la))])
            step += 1
            if step % 37 == 0:
                pool.append(g.clone())
    hist = sum(len(x.history) for x in pool) / len(pool)
    c = _Clock(clock)
    gc.collect()
    c.start()
    for st in pool:
        for _ in range(repeats):
            st.clone()
    c.stop()
    el = c.cpu() if c.kind == "cpu" else c.wall()
    return {"preset": preset, "states": len(pool), "repeats": repeats, "clone_us": el / (len(pool) * repeats) * 1e6,
            "mean_history_len": round(hist, 1)}


# ------------------------------------------------------------------------------ run
def _row(kind: str, game: str, label: str, fn: Callable[[], Any], growth: bool = False) -> Dict[str, Any]:
    """Set a row up: ``fn()`` returns a runner, or a result dict when the row cannot run."""
    try:
        runner = fn()
    except Exception as e:  # noqa: BLE001 - a failing row is reported, the others still run
        runner = {"status": f"error: {type(e).__name__}: {e}"}
    row = {"id": f"{kind}/{game}", "kind": kind, "game": game, "label": label, "growth": growth}
    if isinstance(runner, dict):
        row.update(runner)
    else:
        row["_runner"] = runner
    return row


def _measure(rows: List[Dict[str, Any]], cfg: Dict[str, Any], say: Callable[[str], None]) -> None:
    """Time every row in ``interleave`` round-robin slices, so that a machine whose speed drifts
    during the run (a shared VM) slows every row alike and the ratios stay fair."""
    live = [r for r in rows if "_runner" in r]
    slices = int(cfg["interleave"])

    def guarded(row: Dict[str, Any], call: Callable[[], None]) -> None:
        try:
            call()
        except Exception as e:  # noqa: BLE001 - a failing row is reported, the others still run
            row.pop("_runner", None)
            row["status"] = f"error: {type(e).__name__}: {e}"

    for r in live:
        say(f"warm-up {r['id']}")
        guarded(r, r["_runner"].warmup)
    for k in range(slices):
        for r in live:
            if "_runner" in r:
                say(f"{r['id']} (slice {k + 1}/{slices})")
                guarded(r, lambda r=r: r["_runner"].run_slice(k, slices))
    for r in live:
        runner = r.pop("_runner", None)
        if runner is not None:
            r.update(runner.result())


def run_bench(cfg: Dict[str, Any], progress: Optional[Callable[[str], None]] = None) -> Dict[str, Any]:
    say = progress or (lambda s: None)
    rows: List[Dict[str, Any]] = []
    kinds = cfg["rows"]
    presets = list(cfg["presets"])
    growth = [p for p in (cfg["growth_presets"] or []) if p not in presets]
    say("setting up")
    # the reference first, so that every row can be compared with it
    if "openspiel" in kinds:
        rows.append(_row("openspiel", "gin_rummy", "OpenSpiel gin_rummy (observation_tensor + legal_actions)",
                         lambda: bench_openspiel(cfg)))
    if "openspiel_rl" in kinds:
        rows.append(_row("openspiel_rl", "gin_rummy", "OpenSpiel rl_environment gin_rummy (TimeStep per step)",
                         lambda: bench_openspiel_rl(cfg)))
    if "rlcard" in kinds:
        rows.append(_row("rlcard", "gin-rummy", "RLCard gin-rummy (env.step: state + legal actions)",
                         lambda: bench_rlcard(cfg)))
    for preset in presets + growth:
        g = preset in growth
        if "engine" in kinds:
            rows.append(_row("engine", preset, "engine (legal_actions + _apply)",
                             lambda p=preset: bench_engine(p, cfg), g))
        if "aec" in kinds:
            rows.append(_row("aec", preset, "AEC env handfoot_v0.env() (last + step)",
                             lambda p=preset: bench_aec(p, cfg), g))
        if "vecenv" in kinds and not g:
            rows.append(_row("vecenv", preset, f"BatchedVecEnv x{cfg['vecenv']['n_envs']} (learner obs + mask)",
                             lambda p=preset: bench_vecenv(p, cfg), g))
        if "selfplay" in kinds and not g:
            rows.append(_row("selfplay", preset, f"self-play training env x{cfg['selfplay']['n_envs']} "
                             "(DummyVecEnv of SeatEnv; partner = learner net)",
                             lambda p=preset: bench_selfplay(p, cfg), g))
    _measure(rows, cfg, say)
    ref = next((r for r in rows if r["kind"] == "openspiel" and r["status"] == "ok"), None)
    for r in rows:
        r["vs_openspiel"] = (r["actions_per_s"] / ref["actions_per_s"]) if ref and r["status"] == "ok" else None
    say("memory")
    memory = [measure_memory(p, int(cfg["memory"]["instances"]), cfg["seed"]) for p in presets + growth]
    say("clone")
    clone = [measure_clone(p, int(cfg["clone"]["states"]), int(cfg["clone"]["repeats"]), cfg["seed"], cfg["clock"])
             for p in presets + growth]
    return {"meta": _meta(cfg), "config": cfg, "rows": rows, "memory": memory, "clone": clone,
            "targets": _targets(rows, memory, clone), "growth": _growth(rows)}


def _meta(cfg: Dict[str, Any]) -> Dict[str, Any]:
    import numpy
    return {"date": _dt.datetime.now().isoformat(timespec="seconds"), "python": platform.python_version(),
            "implementation": platform.python_implementation(), "platform": platform.platform(),
            "machine": platform.machine(), "cpus": os.cpu_count(), "numpy": numpy.__version__,
            "handfoot": _version("handfoot"), "clock": cfg["clock"],
            "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
            "command": "handfoot bench " + " ".join(cfg.get("argv") or [])}


def _targets(rows, memory, clone) -> List[Dict[str, Any]]:
    out = []
    for r in rows:
        if r["status"] != "ok" or r["vs_openspiel"] is None or r["growth"]:
            continue
        if r["kind"] == "aec":
            out.append({"target": f"AEC {r['game']} >= {TARGETS['aec_vs_openspiel']}x OpenSpiel",
                        "value": f"{r['vs_openspiel']:.2f}x", "met": r["vs_openspiel"] >= TARGETS["aec_vs_openspiel"]})
        if r["kind"] == "engine":
            out.append({"target": f"engine {r['game']} >= {TARGETS['engine_vs_openspiel']}x OpenSpiel",
                        "value": f"{r['vs_openspiel']:.2f}x",
                        "met": r["vs_openspiel"] >= TARGETS["engine_vs_openspiel"]})
    for m in memory:
        out.append({"target": f"env instance {m['preset']} < 1 MB",
                    "value": f"{m['env_after_reset_bytes'] / 1e3:.0f} kB",
                    "met": m["env_after_reset_bytes"] < TARGETS["env_bytes"]})
    for c in clone:
        out.append({"target": f"clone {c['preset']} < {TARGETS['clone_us']:.0f} us", "value": f"{c['clone_us']:.1f} us",
                    "met": c["clone_us"] < TARGETS["clone_us"]})
    return out


def _growth(rows) -> List[Dict[str, Any]]:
    """Per-action cost and actions per game of each preset relative to pagat."""
    out = []
    for kind in ("engine", "aec"):
        base = next((r for r in rows if r["kind"] == kind and r["game"] == "pagat" and r["status"] == "ok"), None)
        if base is None:
            continue
        for r in rows:
            if r["kind"] != kind or r["status"] != "ok":
                continue
            out.append({"kind": kind, "game": r["game"],
                        "us_per_action": 1e6 / r["actions_per_s"],
                        "cost_per_action_vs_pagat": base["actions_per_s"] / r["actions_per_s"],
                        "actions_per_game": r["actions_per_game"],
                        "cost_per_game_vs_pagat": base["games_per_s"] / r["games_per_s"] if r["games_per_s"] else None})
    return out


# ------------------------------------------------------------------------------ output
def _fmt(x: Optional[float], digits: int = 0) -> str:
    if x is None:
        return "-"
    return f"{x:,.{digits}f}"


def table_rows(res: Dict[str, Any]) -> List[List[str]]:
    out = []
    for r in res["rows"]:
        if r["status"] != "ok":
            out.append([r["id"], r["label"], r["status"], "", "", "", ""])
            continue
        out.append([r["id"], r["label"], _fmt(r["actions_per_s"]), _fmt(r["games_per_s"], 2),
                    _fmt(r["obs_per_s"]) if r["observations"] else "-", _fmt(r["actions_per_game"]),
                    f"{r['vs_openspiel']:.2f}x" if r["vs_openspiel"] is not None else "n/a"])
    return out


HEADERS = ["row", "what is timed", "actions/s", "games/s", "obs/s", "actions/game", "vs OpenSpiel"]


def markdown(res: Dict[str, Any]) -> str:
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "|".join(["---"] * len(HEADERS)) + "|"]
    for row in table_rows(res):
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    for m in res["memory"]:
        lines.append(f"* memory {m['preset']}: {m['env_after_reset_bytes'] / 1e3:.0f} kB per wrapped env after reset, "
                     f"{m['game_after_full_game_bytes'] / 1e3:.0f} kB per Game after a whole game (history included)")
    for c in res["clone"]:
        lines.append(f"* clone {c['preset']}: {c['clone_us']:.1f} us per Game.clone() "
                     f"(mean over {c['states']} mid-game states x {c['repeats']})")
    return "\n".join(lines) + "\n"


def print_results(res: Dict[str, Any], file=None) -> None:
    from rich.console import Console
    from rich.table import Table
    out = file or sys.stdout
    console = Console(file=out, width=None if getattr(out, "isatty", lambda: False)() else 160)
    m = res["meta"]
    cfg = res["config"]
    budget = f"{cfg['games']} games" if cfg["games"] is not None else f"{cfg['seconds']} s"
    t = Table(title=f"handfoot bench: random legal play, single process ({budget} per row, {m['clock']} clock)")
    for h in HEADERS:
        t.add_column(h, justify="left" if h in ("row", "what is timed") else "right", no_wrap=h == "row")
    for row in table_rows(res):
        t.add_row(*row)
    console.print(t)
    for mm in res["memory"]:
        console.print(f"memory {mm['preset']}: {mm['env_after_reset_bytes'] / 1e3:.0f} kB per wrapped env after reset "
                      f"(tracemalloc, {mm['instances']} envs); {mm['game_after_full_game_bytes'] / 1e3:.0f} kB per "
                      f"Game after a whole game")
    for c in res["clone"]:
        console.print(f"clone {c['preset']}: {c['clone_us']:.1f} us per Game.clone() ({c['states']} mid-game states "
                      f"x {c['repeats']}, mean history {c['mean_history_len']:.0f} actions)")
    for g in res["growth"]:
        if g["game"] == "pagat":
            continue
        console.print(f"cost growth {g['kind']} {g['game']}: {g['us_per_action']:.1f} us/action "
                      f"({g['cost_per_action_vs_pagat']:.2f}x pagat), {_fmt(g['actions_per_game'])} actions/game, "
                      f"{_fmt(g['cost_per_game_vs_pagat'], 2)}x pagat per game")
    for tg in res["targets"]:
        console.print(f"target {tg['target']}: {tg['value']} ({'met' if tg['met'] else 'NOT met'})", markup=False)
    load = ", ".join(f"{x:.1f}" for x in m["load_average"]) if m["load_average"] else "n/a"
    console.print(f"{m['cpus']} CPUs, Python {m['python']}, load average {load}; results in {res.get('out', '-')}",
                  markup=False)


def save(res: Dict[str, Any], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "bench.json").write_text(json.dumps(res, indent=2, default=str) + "\n")
    (out_dir / "bench.md").write_text(markdown(res))


# ------------------------------------------------------------------------------ CLI
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="handfoot bench",
                                description="Throughput of the engine, the AEC env and the batched runner "
                                            "(random legal play), next to OpenSpiel gin_rummy and RLCard gin-rummy.")
    p.add_argument("config", nargs="?", help="bench YAML (configs/bench/*.yaml); default configs/bench/default.yaml")
    p.add_argument("--quick", action="store_true", help="tiny budgets (seconds, not minutes; for tests and CI)")
    p.add_argument("--out", help="folder for bench.json and bench.md (default runs/bench)")
    p.add_argument("--seconds", type=float, help="time budget per row")
    p.add_argument("--games", type=int, help="games per row (instead of a time budget)")
    p.add_argument("--interleave", type=int, help="timed round-robin slices per row (default 5)")
    p.add_argument("--rows", help=f"comma-separated row kinds ({','.join(ROW_KINDS)})")
    p.add_argument("--presets", help="comma-separated rules presets (default pagat,bicycle)")
    p.add_argument("--clock", choices=("cpu", "wall"), help="cpu (process time, default) or wall")
    p.add_argument("--seed", type=int, help="seed (default 0)")
    p.add_argument("--json", action="store_true", help="print bench.json instead of the table")
    return p


def bench_main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    try:
        cfg = load_config(args.config, quick=args.quick)
        over: Dict[str, Any] = {}
        for name in ("seconds", "games", "interleave", "clock", "seed", "out"):
            v = getattr(args, name)
            if v is not None:
                over[name] = v
        if args.rows:
            over["rows"] = [x.strip() for x in args.rows.split(",") if x.strip()]
        if args.presets:
            over["presets"] = [x.strip() for x in args.presets.split(",") if x.strip()]
        cfg = validate(_merge(cfg, over, "flags"))
    except BenchConfigError as e:
        print(f"handfoot bench: error: {e}", file=sys.stderr)
        return 2
    cfg["argv"] = argv
    progress = None if args.json else (lambda s: print(f"  measuring {s} ...", file=sys.stderr, flush=True))
    res = run_bench(cfg, progress)
    out_dir = Path(cfg["out"])
    res["out"] = str(out_dir)
    save(res, out_dir)
    if args.json:
        print(json.dumps(res, indent=2, default=str))
    else:
        print_results(res)
    return 0


main = bench_main

if __name__ == "__main__":
    sys.exit(bench_main())
