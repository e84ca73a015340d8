"""``handfoot bench``: throughput of the engine and envs, next to OpenSpiel and RLCard.

Every row plays whole games with uniform random legal play (a seeded
``random.Random``), single process, and reports agent actions per second,
games per second and the ratio to OpenSpiel's ``gin_rummy`` measured in the
same run the same way:

``engine``     the rules engine alone: ``Game.legal_actions()`` then
               ``Game.apply_legal(a)`` (no observation).
``engine_obs`` the reference engine with the observation and mask of the player to
               act every action (``encode_observation`` and ``mask_of``): the
               baseline of the ``core`` row.
``core``       the compiled core (:mod:`handfoot_env.compiled`): ``CoreBatch.step``
               plays one action in each of ``core.n_games`` games per call and
               writes every game's observation, mask and legal ids; the random
               legal choice is made with numpy from the legal ids.
``aec``        the wrapped PettingZoo env ``handfoot_v0.env(core="reference")``:
               ``env.last()`` (observation and action mask of the agent to act),
               then ``env.step(a)``.
``aec_compiled`` the same loop on ``handfoot_v0.env(core="compiled")``.
``eval`` / ``eval_compiled``  games of the duplicate evaluation harness
               (:func:`experiments.evaluation.harness.play_game`) between each pair of agents of
               ``eval.pairs`` (default the first champion, ``champion_v1``, against strategic, and against
               itself), on the reference engine and on the compiled core; actions/s counts every
               seat's actions, obs/s those of seats that read an observation.
``search``     games with the search agent ``search.spec`` in both seats of team 0 against
               ``search.opponent`` (:mod:`experiments.bench.search`): seconds per game and per
               searched decision, the share of decisions searched (``configs/bench/search.yaml``).
``vecenv``     the batched runner :class:`experiments.bench.sb3_vecenv.BatchedVecEnv`
               (SB3 ``VecEnv``): many games in one process, one learner seat per
               game with observation and mask every decision, the other seats
               random legal play; actions/s counts every seat's actions, obs/s
               the learner observations.
``selfplay``   the self-play training env as ``handfoot train`` builds it
               (:func:`experiments.training.sb3_env.make_vec_env`, single process:
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

Training throughput per backend (``train`` rows, :mod:`experiments.bench.training`) runs with
``handfoot bench configs/bench/train.yaml``; it is not in the default rows.

Configs live in ``configs/bench/`` (``default.yaml``, ``quick.yaml``, ``train.yaml``); flags
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

from experiments.bench.config import (
    ROW_KINDS,
    BenchConfigError,
    _merge,
    _train_config_path,
    load_config,
    validate,
)
from experiments.bench.reference import _version, bench_openspiel, bench_openspiel_rl, bench_rlcard
from experiments.bench.report import _growth, _targets, print_results, save
from experiments.bench.timing import _Clock, _GameRunner, _rates
from experiments.config import CommandParser, ConfigError
from experiments.runs import results_folder
from experiments.config import command
from experiments.config import seed_arg
from experiments.bench.training import bench_train, train_targets

# ------------------------------------------------------------------------------ config


# ------------------------------------------------------------------------------ timing


# ------------------------------------------------------------------------------ rows
def bench_engine(preset: str, cfg: Dict[str, Any], observe: bool = False) -> "_GameRunner":
    """The ``engine`` row (``observe``: the ``engine_obs`` row, which also encodes the observation
    and the mask of the player to act before every action).  Two loops, so that the row without
    observations pays no test for them per action."""
    from handfoot_env.engine import Game
    from handfoot_env.observation import encode_observation, mask_of
    g = Game(preset)
    rng = random.Random(cfg["seed"])

    def play(seed: int):
        g.reset(seed=seed)
        legal_actions, apply, rr = g.legal_actions, g.apply_legal, rng.randrange
        n = 0
        while not g.game_over:
            la = legal_actions()
            apply(la[rr(len(la))])
            n += 1
        return n, 0

    def play_observed(seed: int):
        g.reset(seed=seed)
        legal_actions, apply, rr = g.legal_actions, g.apply_legal, rng.randrange
        n = 0
        while not g.game_over:
            la = legal_actions()
            encode_observation(g, g.current, la)
            mask_of(la)
            apply(la[rr(len(la))])
            n += 1
        return n, n

    return _GameRunner(play_observed if observe else play, cfg, cfg["seed"])


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


def bench_aec(preset: str, cfg: Dict[str, Any], core: str = "reference") -> "_GameRunner":
    from handfoot_env import handfoot_v0
    env = handfoot_v0.env(rules=preset, core=core)
    rng = random.Random(cfg["seed"])

    def play(seed: int):
        n = play_aec_game(env, seed, rng)
        return n, n

    return _GameRunner(play, cfg, cfg["seed"])


def bench_eval(preset: str, cfg: Dict[str, Any], agents: List[str], core: str) -> "_GameRunner":
    from agents.registry import make_agent
    from experiments.evaluation.harness import lineup, play_game
    from handfoot_env.config import load_rules
    rules = load_rules(preset)
    net = [bool(getattr(make_agent(a, 0), "needs_observation", False)) for a in agents]    # seats with an observation

    def play(seed: int):
        sides = lineup(rules.teams, bool(seed % 2))
        side = [sides[p % rules.teams] for p in range(rules.players)]
        res = play_game(rules, [agents[x] for x in side], seed, core=core)
        acts = res["actions"]
        return sum(acts), sum(a for a, x in zip(acts, side) if net[x])

    return _GameRunner(play, cfg, cfg["seed"])


class _Runner:
    """What the timed rows share: ``warmup`` steps for ``warmup_seconds`` before the clock starts."""

    cfg: Dict[str, Any]

    def step(self) -> Any:
        raise NotImplementedError

    def warmup(self) -> None:
        warm = float(self.cfg.get("warmup_seconds") or 0)
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < warm:
            self.step()


class _CoreRunner(_Runner):
    """The compiled core's row: ``CoreBatch.step`` over ``n_games`` games until the slice's budget is
    spent; a finished game is dealt again from the next seed."""

    def __init__(self, preset: str, cfg: Dict[str, Any]):
        import numpy as np
        from handfoot_env.compiled import load
        self.np = np
        self.cfg = cfg
        self.n = n = int(cfg["core"]["n_games"])
        self.batch = load().CoreBatch(preset, n)
        self.rng = np.random.default_rng(cfg["seed"])
        self.next_seed = cfg["seed"] * 1_000_003
        self.batch.reset(list(range(self.next_seed, self.next_seed + n)))
        self.next_seed += n
        self.clock = _Clock(cfg["clock"])
        self.actions = self.games = 0

    def step(self) -> int:
        b, np = self.batch, self.np
        acts, done = b.random_actions(self.rng)
        b.step(acts)
        played = self.n - done
        if done:
            idx = np.flatnonzero(acts == -2)
            b.reset(list(range(self.next_seed, self.next_seed + len(idx))), games=idx)
            self.next_seed += len(idx)
            self.games += len(idx)
        return played

    def run_slice(self, k: int, slices: int) -> None:
        budget = float(self.cfg["seconds"]) / slices
        gc.collect()
        self.clock.start()
        while True:
            self.actions += self.step()
            if self.clock.running() >= budget:
                break
        self.clock.stop()

    def result(self) -> Dict[str, Any]:
        res = _rates(self.actions, self.actions, self.games, self.clock)
        res["n_games"] = self.n
        res["actions_per_game"] = None  # games in flight at both ends of the window
        return res


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
    from experiments.bench.sb3_vecenv import BatchedVecEnv
    n_envs = int(cfg["vecenv"]["n_envs"])
    venv = BatchedVecEnv(n_envs=n_envs, rules=preset, seed=cfg["seed"])
    step = _random_vec_step(venv, n_envs, cfg["seed"])
    venv.reset()
    return _VecRunner(venv, step, cfg)


class _VecRunner(_Runner):
    """The batched runner's row, slice by slice: whole ``VecEnv`` steps until the slice's budget
    is spent (or the slice's share of finished games)."""

    def __init__(self, venv, step: Callable[[], None], cfg: Dict[str, Any],
                 counters: Optional[Callable[[], Any]] = None):
        self.venv, self.step, self.cfg = venv, step, cfg
        # (game actions so far, episodes started so far) of all the envs
        self.counters = counters or (lambda: (venv.total_actions, venv.total_episodes))
        self.clock = _Clock(cfg["clock"])
        self.actions = self.decisions = self.episodes = 0

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


def bench_selfplay(preset: str, cfg: Dict[str, Any]) -> "_VecRunner":
    from agents.sb3_model import extract_weights
    from experiments.training.config import env_kwargs, load_train_config
    from experiments.training.sb3 import build_model
    from experiments.training.sb3_env import make_vec_env
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
            g.apply_legal(la[rng.randrange(len(la))])
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
            g.apply_legal(la[rng.randrange(len(la))])
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
            rows.append(_row("engine", preset, "engine (legal_actions + apply_legal)",
                             lambda p=preset: bench_engine(p, cfg), g))
        if "engine_obs" in kinds:
            rows.append(_row("engine_obs", preset, "engine + observation + mask (reference)",
                             lambda p=preset: bench_engine(p, cfg, observe=True), g))
        if "core" in kinds and not g:
            rows.append(_row("core", preset, f"compiled core x{cfg['core']['n_games']} (obs + mask, one call "
                             "per step of all games)", lambda p=preset: _CoreRunner(p, cfg), g))
        if "aec" in kinds:
            rows.append(_row("aec", preset, "AEC env handfoot_v0.env(core='reference') (last + step)",
                             lambda p=preset: bench_aec(p, cfg), g))
        if "aec_compiled" in kinds:
            rows.append(_row("aec_compiled", preset, "AEC env handfoot_v0.env(core='compiled') (last + step)",
                             lambda p=preset: bench_aec(p, cfg, "compiled"), g))
        for kind, core in (("eval", "reference"), ("eval_compiled", "compiled")):
            if kind in kinds and not g:
                for pair in cfg["eval"]["pairs"]:
                    rows.append(_row(kind, f"{preset}:{'+'.join(pair)}",
                                     f"evaluation games {pair[0]} vs {pair[1]} (harness, core='{core}')",
                                     lambda p=preset, a=pair, c=core: bench_eval(p, cfg, a, c)))
        if "search" in kinds and not g:
            from experiments.bench.search import bench_search
            rows.append(_row("search", f"{preset}:{cfg['search']['spec']}", "search games",
                             lambda p=preset: bench_search(p, cfg)))
        if "vecenv" in kinds and not g:
            rows.append(_row("vecenv", preset, f"BatchedVecEnv x{cfg['vecenv']['n_envs']} (learner obs + mask)",
                             lambda p=preset: bench_vecenv(p, cfg), g))
        if "selfplay" in kinds and not g:
            rows.append(_row("selfplay", preset, f"self-play training env x{cfg['selfplay']['n_envs']} "
                             "(DummyVecEnv of SeatEnv; partner = learner net)",
                             lambda p=preset: bench_selfplay(p, cfg), g))
    _measure(rows, cfg, say)
    train_rows = bench_train(cfg, say) if "train" in kinds else []
    ref = next((r for r in rows if r["kind"] == "openspiel" and r["status"] == "ok"), None)
    for r in rows:
        r["vs_openspiel"] = (r["actions_per_s"] / ref["actions_per_s"]) if ref and r["status"] == "ok" else None
    say("memory")
    memory = [measure_memory(p, int(cfg["memory"]["instances"]), cfg["seed"]) for p in presets + growth]
    say("clone")
    clone = [measure_clone(p, int(cfg["clone"]["states"]), int(cfg["clone"]["repeats"]), cfg["seed"], cfg["clock"])
             for p in presets + growth]
    return {"meta": _meta(cfg), "config": cfg, "rows": rows, "memory": memory, "clone": clone,
            "targets": _targets(rows, memory, clone) + train_targets(train_rows, cfg["train"].get("baseline")),
            "growth": _growth(rows),
            "train": train_rows}


def _meta(cfg: Dict[str, Any]) -> Dict[str, Any]:
    import numpy
    return {"date": _dt.datetime.now().isoformat(timespec="seconds"), "python": platform.python_version(),
            "implementation": platform.python_implementation(), "platform": platform.platform(),
            "machine": platform.machine(), "cpus": os.cpu_count(), "numpy": numpy.__version__,
            "handfoot": _version("handfoot"), "clock": cfg["clock"],
            "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
            "command": "handfoot bench " + " ".join(cfg.get("argv") or [])}


# ------------------------------------------------------------------------------ output


# ------------------------------------------------------------------------------ CLI
def _parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="handfoot bench",
                                description="Throughput of the engine, the AEC env and the batched runner "
                                            "(random legal play), next to OpenSpiel gin_rummy and RLCard gin-rummy.")
    p.add_argument("config", nargs="?", help="bench YAML (configs/bench/*.yaml); default configs/bench/default.yaml")
    p.add_argument("--quick", action="store_true", help="tiny budgets (seconds, not minutes; for tests and CI)")
    p.add_argument("--out", help="a new or empty folder for bench.json and bench.md (default: the config's 'out', "
                                 "runs/bench; with a time suffix if it exists)")
    p.add_argument("--seconds", type=float, help="time budget per row")
    p.add_argument("--games", type=int, help="games per row (instead of a time budget)")
    p.add_argument("--interleave", type=int, help="timed round-robin slices per row (default 5)")
    p.add_argument("--rows", help=f"comma-separated row kinds ({','.join(ROW_KINDS)})")
    p.add_argument("--presets", help="comma-separated rules presets (default pagat,bicycle)")
    p.add_argument("--clock", choices=("cpu", "wall"), help="cpu (process time, default) or wall")
    p.add_argument("--seed", type=seed_arg, help="seed (default 0)")
    p.add_argument("--json", action="store_true", help="print bench.json instead of the table")
    return p


@command("bench")
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
        cfg["out"] = str(results_folder(cfg["out"], explicit=args.out is not None))
    except (BenchConfigError, ConfigError) as e:
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
