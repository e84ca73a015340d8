"""Whether two training runs are the same run: every metrics.jsonl row they share equal and the final
actor weights equal bit for bit (a seed's run done again, or a run against its published copy).

    python scripts/same_run.py RUN_A RUN_B
    python scripts/same_run.py runs/quickstart-s0 docs/results/quickstart     # your main job at seed 0

Prints one line; exit status 0 when the runs are the same, 1 when they part (the line names where),
2 on a folder that is not a run.
"""
from __future__ import annotations

import argparse
import sys

from experiments.config import ConfigError
from experiments.runs import compare_runs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="same_run", description=__doc__.splitlines()[0])
    ap.add_argument("a", help="a training run folder (or a published copy with metrics.jsonl)")
    ap.add_argument("b", help="another")
    args = ap.parse_args(argv)
    try:
        same, line = compare_runs(args.a, args.b)
    except ConfigError as e:
        print(f"same_run: error: {e}", file=sys.stderr)
        return 2
    print(line)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
