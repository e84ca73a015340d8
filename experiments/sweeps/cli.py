"""``handfoot sweep CONFIG [--out DIR] [--parallel N] [--ray [ADDRESS]] [--resume]``; ``handfoot sweep --report DIR``.

Runs the trials of a sweep config (``configs/sweeps/*.yaml``; keys in :mod:`experiments.sweeps.config`)
on this machine, ``--parallel N`` at once (default: the cores over ``resources.cpus``), or as Ray Tune
trials with ``--ray`` (a local Ray, or the cluster at ADDRESS / ``RAY_ADDRESS``), then writes the
statistics across seeds (``sweep.json``, ``summary.csv``, ``report.md``, plots, TensorBoard HParams).

Every problem with the config is one line and exit status 2 before any trial starts; Ctrl-C stops
the trials (with a checkpoint) and ``--resume`` completes the sweep later.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional

from experiments.config import CommandParser, ConfigError, command


def _parser() -> CommandParser:
    p = CommandParser(prog="handfoot sweep",
                      description="Run many seeds of many variants of an experiment or evaluation, and the "
                                  "statistics across seeds (IQM, bootstrap intervals, probability of improvement).")
    p.add_argument("config", nargs="?", help="sweep config YAML (configs/sweeps/*.yaml)")
    p.add_argument("--out", help="sweep folder (default runs/sweeps/NAME)")
    p.add_argument("--parallel", type=int, metavar="N",
                   help="trials at once on this machine (default: the CPU cores over resources.cpus)")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="run the trials as Ray Tune trials: on the cluster at ADDRESS, else RAY_ADDRESS, else a "
                        "local Ray (docs/scaling_out.md)")
    p.add_argument("--resume", action="store_true",
                   help="continue the sweep in --out (or the config's default folder): finished trials are kept, "
                        "interrupted ones continue from their last checkpoint; a config that adds variants or seeds "
                        "extends the sweep")
    p.add_argument("--report", metavar="DIR", help="write sweep.json, summary.csv, report.md and plots again from "
                                                   "a sweep folder, and run nothing")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p


@command("sweep")
def sweep_main(argv: Optional[List[str]] = None) -> int:
    from experiments.sweeps.config import load_sweep
    from experiments.sweeps.report import write_summary
    from experiments.sweeps.runner import default_out, default_parallel, load_folder, prepare_folder, run_local

    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    if args.report:
        if args.config or args.resume or args.ray is not None or args.parallel is not None:
            raise ConfigError("--report DIR runs nothing: give it alone")
        sweep = load_folder(Path(args.report))
        data = write_summary(sweep, Path(args.report), final=True)
        _print(data, Path(args.report))
        return 0
    if args.parallel is not None and args.parallel < 1:
        raise ConfigError(f"--parallel: expected a positive number of trials at once, got {args.parallel}")
    if args.parallel is not None and args.ray is not None:
        raise ConfigError("--parallel is for this machine; with --ray, resources.cpus in the config sizes the trials")
    if args.config is None and not (args.resume and args.out):
        raise ConfigError("a sweep config is needed (or --out DIR --resume, or --report DIR)")
    sweep = load_sweep(args.config) if args.config else None     # every check before anything runs
    out = Path(args.out) if args.out else default_out(sweep)
    sweep = prepare_folder(sweep, out, args.resume)
    if sweep.scheduler and sweep.scheduler.get("name") != "fifo" and args.ray is None:
        raise ConfigError(f"scheduler: {sweep.scheduler['name']} runs with --ray (Ray Tune's scheduler)")
    if args.ray is not None:
        from experiments.sweeps.tune import run_tune
        data = run_tune(sweep, out, args.ray or None, quiet=args.quiet)
    else:
        parallel = args.parallel or default_parallel(sweep)
        if args.parallel is None and not args.quiet:
            print(f"[sweep] {parallel} trial(s) at once: this machine's {os.cpu_count()} CPU cores over the "
                  f"{sweep.cpus:g} CPU(s) a trial takes (resources.cpus); --parallel N chooses", file=sys.stderr)
        data = run_local(sweep, out, parallel, quiet=args.quiet)
    _print(data, out)
    failed = data["status"].get("failed", 0)
    return 1 if failed else 0


def _print(data, out: Path) -> None:
    from rich.console import Console
    from rich.table import Table
    pct = data["metric"].startswith("win_rate")

    def f(x):
        return "n/a" if x is None else (f"{100 * x:.1f}%" if pct else f"{x:,.1f}")

    def ci(c):
        return "n/a" if not c else f"[{f(c[0])}, {f(c[1])}]"
    console = Console(file=sys.stdout, width=None if sys.stdout.isatty() else 120)
    t = Table(title=f"sweep {data['name']}: {data['metric']} across seeds (95% bootstrap CIs)")
    for col in ("variant", "seeds", "mean", "95% CI", "IQM", "95% CI"):
        t.add_column(col)
    for v in data["variants"]:
        s = v["summary"]
        t.add_row(v["name"], str(s["n"]), f(s["mean"]), ci(s["mean_ci"]), f(s["iqm"]), ci(s["iqm_ci"]))
    console.print(t)
    status = ", ".join(f"{k} {n}" for k, n in sorted(data["status"].items()))
    console.print(f"trials: {status}; report: {out / 'report.md'}")


main = sweep_main

if __name__ == "__main__":
    sys.exit(sweep_main())
