"""How long the compiled core takes at its first use after an install, and in every later process.

    python -m experiments.bench.compile_time                 # pagat, a fresh cache folder under /tmp
    python -m experiments.bench.compile_time --keep DIR      # compile into DIR and keep it

The same short script runs three times, each in a fresh interpreter: once with an empty
``NUMBA_CACHE_DIR`` (every kernel compiles: what the first use after an install costs), once
more with that folder filled (the kernels load from the cache: what every later process
costs), and once without touching the compiled core (Python, NumPy and ``handfoot_env`` alone,
the floor both include).  The script uses every kernel a caller reaches: a ``CoreBatch`` is
dealt and stepped until a game ends and is dealt again, a seat is observed, a legal list read,
and a ``CompiledGame`` plays actions with and without the round's books.  Reported: CPU seconds
(user + system of the child) and wall seconds of each run.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

_SCRIPT = r"""
import sys
import numpy as np
import handfoot_env
if sys.argv[1] == "core":
    from handfoot_env.compiled import load, warm_up
    warm_up(load(), sys.argv[2])
"""


def _run(mode: str, rules: str, cache: str) -> Dict[str, float]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, mode, rules], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"compile_time: the {mode} run failed: {tail}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cpu_s": cpu, "wall_s": wall}


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.bench.compile_time",
                                description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="pagat", help="rules preset (default pagat)")
    p.add_argument("--keep", default=None, metavar="DIR",
                   help="compile into DIR (must be empty or absent) and keep it; default: a temporary folder")
    args = p.parse_args(argv)
    from handfoot_env.compiled import available
    from handfoot_env.config import load_rules
    if not available():
        p.error("the compiled core needs Numba (pip install numba)")
    try:
        load_rules(args.rules)
    except (ValueError, OSError) as e:      # RuleConfigError is a ValueError
        p.error(f"--rules: {e}")
    if args.keep:
        if os.path.exists(args.keep) and not os.path.isdir(args.keep):
            p.error(f"--keep: {args.keep} is a file, not a folder")
        if os.path.isdir(args.keep) and os.listdir(args.keep):
            p.error(f"--keep: {args.keep} is not empty; the first run must compile into an empty folder")
        os.makedirs(args.keep, exist_ok=True)
        ctx = None
        cache = args.keep
    else:
        ctx = tempfile.TemporaryDirectory(prefix="handfoot-compile-")
        cache = ctx.name
    try:
        rows = [("first use (compiles every kernel)", _run("core", args.rules, cache)),
                ("a later process (loads the cache)", _run("core", args.rules, cache)),
                ("the same script without the core", _run("none", args.rules, cache))]
    finally:
        if ctx is not None:
            ctx.cleanup()
    print(f"compiled core, rules {args.rules}, fresh interpreters (CPU = user + system of the child)")
    for name, r in rows:
        print(f"{name:36s} {r['cpu_s']:7.1f} s CPU {r['wall_s']:7.1f} s wall")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
