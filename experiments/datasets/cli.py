"""``handfoot dataset``: Minari datasets of the single-seat env's episodes (docs/datasets.md).

Usage::

    handfoot dataset collect --agents strategic --games 1000 --seed 0 --id handfoot/strategic-v0 --workers 2
    handfoot dataset collect --agents champion greedy --games 50 --seed 1 --seats 0 1 --id handfoot/champion-greedy-v0
    handfoot dataset from-records runs/eval-records --id handfoot/eval-records-v0      # evaluate --records
    handfoot dataset from-records ~/.local/share/handfoot/tables.sqlite --id handfoot/table-v0

``collect`` plays ``--games`` games (not duplicate deals): the first spec plays the seats of team 0, the
second (the first if there is one) every other seat; each seat in ``--seats`` (all by default) is one
episode per game.  Episodes go to disk as they finish, from ``--workers`` processes, in game order
(the same command and seed give the same dataset apart from timestamps, whatever the workers).
``MINARI_DATASETS_PATH`` says where datasets are written (``~/.minari/datasets`` by default).

A bad spec, a dataset id that exists or is not Minari's form, a record that fails ``handfoot replay
--check``, an unfinished game, or a file that is not the table's database: one line, exit 2, nothing written.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from experiments.config import command, seed_arg


def dataset_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="handfoot dataset", description="Minari datasets of the single-seat env's "
                                 "episodes, from agents' play or from game records (docs/datasets.md)",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", metavar="{collect,from-records}")
    sub.required = True
    c = sub.add_parser("collect", help="play games with agent specs and write their seats' episodes")
    c.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                   help="one spec for every seat, or two: team 0's seats, then every other seat's")
    c.add_argument("--games", type=int, required=True, help="games to play (each recorded seat is one episode)")
    c.add_argument("--seed", type=seed_arg, required=True, help="seed of the games (game i: SeedSequence([seed, i]))")
    c.add_argument("--rules", default="pagat", help="rule preset or YAML file (default pagat)")
    c.add_argument("--seats", type=int, nargs="+", default=None, help="the seats recorded (default: every seat)")
    c.add_argument("--id", dest="dataset_id", required=True, help="the dataset's Minari id, e.g. handfoot/strategic-v0")
    c.add_argument("--core", default="auto", help="compiled, reference or auto (the same episodes on both)")
    c.add_argument("--workers", type=int, default=1, help="processes that play (default 1)")
    c.add_argument("--no-progress", action="store_true", help="no progress bar")
    r = sub.add_parser("from-records", help="the seats of finished games (records, or the table's database)")
    r.add_argument("path", help="an evaluate --records folder, a folder of records, a record, or the table's "
                                "SQLite database")
    r.add_argument("--id", dest="dataset_id", required=True, help="the dataset's Minari id")
    r.add_argument("--core", default="auto", help="compiled, reference or auto")
    return ap


def _specs(agents: Sequence[str], rules: Any) -> List[str]:
    from agents.registry import make_agent
    if len(agents) > 2:
        raise ValueError(f"--agents: one or two specs, got {len(agents)}")
    for spec in agents:
        try:
            make_agent(spec, 0)
        except Exception as e:  # noqa: BLE001 - any failure to build is the spec's problem, in one line
            raise ValueError(f"--agents {spec}: {e}") from None
    a, b = agents[0], agents[-1]
    return [a if p % rules.teams == 0 else b for p in range(rules.players)]


def _peak_mb() -> Dict[str, float]:
    """Peak resident memory (MB) of this process and of its largest finished child."""
    return {"main_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "worker_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)}


def _stream(tasks: List[Any], workers: int, fn: Any, write: Any, bar: Any) -> None:
    """``write(fn(task))`` for every task in order; ``workers`` spawn processes keep at most two tasks each
    in flight, so the episodes in memory stay few however many games there are."""
    if workers <= 1:
        for t in tasks:
            write(fn(t))
            bar.update(t[4])
        return
    from experiments.processes import sigint_ignored, worker_init
    with sigint_ignored():
        pool = mp.get_context("spawn").Pool(processes=workers, initializer=worker_init, initargs=(os.getpid(),))
    try:
        pending: deque = deque()
        it = iter(tasks)
        for t in it:
            pending.append((t, pool.apply_async(fn, (t,))))
            if len(pending) >= 2 * workers:
                break
        while pending:
            t, res = pending.popleft()
            write(res.get())
            bar.update(t[4])
            nxt = next(it, None)
            if nxt is not None:
                pending.append((nxt, pool.apply_async(fn, (nxt,))))
    finally:
        pool.terminate()
        pool.join()


def collect(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from tqdm import tqdm

    from experiments.datasets.episodes import collect_games, seat_kwargs
    from experiments.datasets.minari_store import ENV_ID, DatasetWriter, check_new_id
    from experiments.runs import git_commit
    from handfoot_env import __version__
    from handfoot_env.compiled import resolve_core
    from handfoot_env.config import load_rules
    check_new_id(args.dataset_id)
    rules = load_rules(args.rules)
    core = resolve_core(args.core)
    specs = _specs(args.agents, rules)
    if not 1 <= args.games <= 10_000_000:
        raise ValueError(f"--games: from 1 to 10,000,000, got {args.games}")
    if not 1 <= args.workers <= 256:
        raise ValueError(f"--workers: from 1 to 256, got {args.workers}")
    seats = sorted(set(range(rules.players) if args.seats is None else args.seats))
    if any(not 0 <= s < rules.players for s in seats):
        raise ValueError(f"--seats: seats are 0 to {rules.players - 1} under these rules, got {args.seats}")
    rd = rules.to_dict()
    env_kwargs = {**seat_kwargs(seats[0], specs, rd), "rules": rd, "core": core}
    chunk = max(1, min(16, args.games // (4 * args.workers) or 1))
    tasks = [(rd, specs, args.seed, g, min(chunk, args.games - g), seats, core) for g in range(0, args.games, chunk)]
    t0 = time.perf_counter()
    desc = f"{'/'.join(args.agents)}: {args.games} games, seats {','.join(map(str, seats))}"
    with DatasetWriter(args.dataset_id, env_kwargs, f"Hand and Foot ({args.rules}): {desc}, seed {args.seed}; "
                       f"one seat's episodes of {ENV_ID}", algorithm="/".join(args.agents)) as w:
        bar = tqdm(total=args.games, unit="game", desc="collect", file=sys.stderr, dynamic_ncols=True,
                   disable=args.no_progress)
        try:
            _stream(tasks, args.workers, collect_games, w.add, bar)
        finally:
            bar.close()
        wall = time.perf_counter() - t0
        meta = {"source": "collect", "command": "handfoot dataset " + " ".join(argv), "rules": rd,
                "rules_name": args.rules, "agents": specs, "seats": seats, "seed": args.seed, "games": args.games,
                "game_seeds": "game i: numpy.random.SeedSequence([seed, i]).generate_state(1)[0]",
                "core": core, "version": __version__, "git_commit": git_commit(), "env_id": ENV_ID,
                "env_kwargs": env_kwargs, "episodes": w.episodes, "decisions": w.steps}
        ds = w.finish(meta)
    peak = _peak_mb()
    size = ds.storage.get_size()
    print(f"dataset {args.dataset_id}: {w.episodes:,} episodes, {w.steps:,} decisions of {args.games:,} games in "
          f"{wall:.1f} s ({w.steps / max(wall, 1e-9):,.0f} decisions/s, {args.workers} worker(s)); {size:,.1f} MB at "
          f"{ds.storage.data_path.parent}; peak memory {peak['main_mb']:,.0f} MB (main), "
          f"{peak['worker_mb']:,.0f} MB (largest worker)")
    return 0


def from_records(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from experiments.datasets.episodes import record_episodes
    from experiments.datasets.minari_store import ENV_ID, DatasetWriter, check_new_id
    from experiments.datasets.records import read_games
    from experiments.runs import git_commit
    from handfoot_env import __version__
    from handfoot_env.compiled import resolve_core
    check_new_id(args.dataset_id)
    core = resolve_core(args.core)
    path = Path(args.path)
    games, left_out = read_games(path)          # every game replayed and finished before anything is written
    if not games:
        raise ValueError(f"{path}: no finished game offered for datasets ({left_out.get('in_play', 0)} in play, "
                         f"{left_out.get('not_offered', 0)} not offered)")
    rules = games[0].record["rules"]
    for g in games[1:]:
        if g.record["rules"] != rules:
            raise ValueError(f"{g.source}: other rules than {games[0].source} (a dataset holds one rule set)")
    env_kwargs = {"rules": rules, "core": core}
    t0 = time.perf_counter()
    with DatasetWriter(args.dataset_id, env_kwargs, f"Hand and Foot: every seat of {len(games)} finished games "
                       f"from {path.name}; one seat's episodes of {ENV_ID}", algorithm="recorded play") as w:
        for i, g in enumerate(games):
            w.add(record_episodes(g.record, i, g.seats, core))
        meta = {"source": "records", "command": "handfoot dataset " + " ".join(argv), "rules": rules,
                "path": str(path), "games": len(games), "left_out": left_out,
                "seats_by_game": [{"source": g.source, "seats": g.seats,
                                   "stand_in_actions": {str(k): v for k, v in g.stand_in.items()}} for g in games],
                "core": core, "version": __version__, "git_commit": git_commit(), "env_id": ENV_ID,
                "env_kwargs": env_kwargs, "episodes": w.episodes, "decisions": w.steps}
        w.finish(meta)
    skipped = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in left_out.items() if v)
    print(f"dataset {args.dataset_id}: {w.episodes:,} episodes, {w.steps:,} decisions of {len(games):,} games in "
          f"{time.perf_counter() - t0:.1f} s{f' (left out: {skipped})' if skipped else ''}")
    return 0


@command("dataset")
def dataset_main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = dataset_parser().parse_args(argv)
    try:
        return collect(args, argv) if args.what == "collect" else from_records(args, argv)
    except ModuleNotFoundError as e:          # the data extra (minari) is not installed
        if e.name and e.name.split(".")[0] in ("minari", "h5py"):
            raise ValueError(str(e)) from None
        raise


__all__ = ["dataset_main", "dataset_parser"]
