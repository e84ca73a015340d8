"""``handfoot evaluate CONFIG`` / ``handfoot evaluate --agents A B ...``: the command line of evaluation.

The matches are played by :mod:`experiments.evaluation.harness`; tables and plots come from
:mod:`experiments.evaluation.report`.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import List, Optional

from experiments.evaluation.harness import EvalConfig, EvalConfigError, default_out, load_config, run_evaluation
from experiments.evaluation.report import print_results
from experiments.config import CommandParser, ConfigError
from experiments.runs import results_folder
from experiments.config import command
from experiments.config import seed_arg


def _parser() -> argparse.ArgumentParser:
    p = CommandParser(
        prog="handfoot evaluate",
        description="Benchmark agents in duplicate deals (each deal played twice, sides swapped). "
                    "Two agents: a duel; three or more: a round-robin with a win-rate matrix and ratings.")
    p.add_argument("config", nargs="?", help="evaluation YAML (configs/eval/*.yaml); flags override its fields")
    p.add_argument("--agents", nargs="+", metavar="SPEC",
                   help="agent specs: random, greedy, strategic, champion, policy:PATH, py:package.module:ClassName; "
                        "a side of different agents: \"team(A,B)\" (A in each of its teams' first seat, B in the "
                        "second; three specs for teams of three)")
    p.add_argument("--deals", "--games", dest="games", type=int, metavar="N",
                   help="duplicate deals per pairing, each played twice with the seats swapped (2N games); "
                        "default 100 (--games is the old name of this flag)")
    p.add_argument("--seed", type=seed_arg, help="match seed (default 0)")
    p.add_argument("--workers", help="worker processes, or 'auto' for one per core (default 1)")
    p.add_argument("--rules", help="rules preset or YAML file (default pagat)")
    p.add_argument("--out", help="a new or empty run folder (default: the config's 'out', else "
                                 "runs/eval/<agents>-seed<seed>; with a time suffix if it exists)")
    p.add_argument("--records", action="store_true", default=None, help="save a JSON record of every game")
    p.add_argument("--no-plots", action="store_true", help="do not write PNG plots")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--core", choices=("auto", "compiled", "reference"),
                   help="the rules core the games run on (default auto: compiled when Numba is installed and "
                        "every agent is a network reading only its observation; the results are the same on both)")
    p.add_argument("--sprt", nargs="*", metavar="KEY=VALUE",
                   help="stop as soon as a sequential test (generalised SPRT on per-deal outcomes) decides; "
                        "alone: H0 win rate 0.5 against H1 0.55, alpha = beta = 0.05; or h0=0.5 h1=0.6 "
                        "alpha=0.05 beta=0.05, or elo0=0 elo1=35 (logistic Elo); --deals is the cap (a duel "
                        "only; put it after the config file)")
    p.add_argument("--json", action="store_true", help="print results.json instead of tables")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="run the deals as Ray tasks: on the cluster at ADDRESS, else RAY_ADDRESS, else a local Ray "
                        "(same results as without it; put it after the config file; docs/scaling_out.md)")
    return p


@command("evaluate")
def evaluate_main(argv: Optional[List[str]] = None) -> int:
    parser = _parser()

    def fail(msg: str) -> int:
        print(f"handfoot evaluate: error: {msg}", file=sys.stderr)
        return 2

    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse already printed the message
        return int(e.code or 0)
    try:
        cfg = load_config(args.config) if args.config else EvalConfig()
        if args.agents is not None:
            cfg.agents = args.agents
        for name in ("games", "seed", "rules", "out", "core"):
            v = getattr(args, name)
            if v is not None:
                setattr(cfg, name, v)
        if args.workers is not None:
            w = args.workers
            if w == "auto":
                cfg.workers = 0
            else:
                try:
                    cfg.workers = int(w)
                except ValueError:
                    return fail(f"--workers must be a positive integer or 'auto', got {w!r}")
                if cfg.workers < 1:
                    return fail(f"--workers must be a positive integer or 'auto' (one per core), got {w!r}")
        if args.sprt is not None:
            cfg.sprt = args.sprt or True
        if args.records:
            cfg.records = True
        if args.no_plots:
            cfg.plots = False
        if args.no_progress:
            cfg.progress = False
        if not cfg.agents:
            return fail("no agents: give a config file or --agents A B [C ...]")
        cfg.validate()
        cfg.out = str(results_folder(cfg.out or default_out(cfg), explicit=args.out is not None,
                                     own=[args.config] if args.config else []))
    except (EvalConfigError, ConfigError) as e:
        return fail(str(e))
    runner = None
    own_ray = False
    if args.ray is not None:
        from experiments.ray_cluster import init_ray, ray_task_runner
        if cfg.sprt:         # one Ray for all the batches of a sequential test, shut down at the end
            own_ray = init_ray(args.ray or None, quiet=True)
        runner, cfg.workers = ray_task_runner(args.ray or None, cfg.workers if args.workers is not None else 0,
                                              progress=cfg.progress)
    try:
        res = run_evaluation(cfg, task_runner=runner)
    finally:
        if own_ray:
            from experiments.ray_cluster import shutdown_ray
            shutdown_ray()
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        print_results(res)
    return 0


main = evaluate_main
