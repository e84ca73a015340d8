"""Compare one variant of a sweep with one variant of another (two recipes run as separate sweeps on the
same metric): each side's across-seed summary (mean, median, IQM with bootstrap intervals) and the
probability of improvement P(X > Y) with its interval, the same statistics as a sweep's own report.

    python scripts/compare_sweeps.py SWEEP_DIR_X:VARIANT SWEEP_DIR_Y:VARIANT [--out FILE.json]
    python scripts/compare_sweeps.py docs/results/sweeps/main_job:strategic_3m \\
        docs/results/sweeps/learners:ppo --out docs/results/sweeps/main_job/against_selfplay_2m.json
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from experiments.sweeps.stats import probability_of_improvement, summarize


def _side(arg: str) -> dict:
    folder, _, variant = arg.rpartition(":")
    f = Path(folder) / "sweep.json"
    if not folder or not f.is_file():
        raise SystemExit(f"compare_sweeps: error: {arg!r} is not SWEEP_DIR:VARIANT with a sweep.json in SWEEP_DIR")
    sweep = json.loads(f.read_text())
    for v in sweep.get("variants", []):
        if v.get("name") == variant:
            trials = [t for t in v["trials"] if t.get("status") == "done" and t.get("value") is not None]
            if not trials:
                raise SystemExit(f"compare_sweeps: error: variant {variant!r} of {f} has no finished trial")
            return {"sweep": sweep.get("name"), "variant": variant, "metric": sweep.get("metric"),
                    "seeds": [t["seed"] for t in trials], "values": [t["value"] for t in trials],
                    "trial_intervals": [t.get("ci") for t in trials],
                    "summary": summarize([t["value"] for t in trials])}
    names = [v.get("name") for v in sweep.get("variants", [])]
    raise SystemExit(f"compare_sweeps: error: {f} has no variant {variant!r} (it has {', '.join(names)})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="compare_sweeps", description=__doc__.splitlines()[0])
    ap.add_argument("x", help="SWEEP_DIR:VARIANT")
    ap.add_argument("y", help="SWEEP_DIR:VARIANT")
    ap.add_argument("--out", help="write the comparison here as JSON")
    a = ap.parse_args(argv)
    x, y = _side(a.x), _side(a.y)
    if x["metric"] != y["metric"]:
        print(f"compare_sweeps: warning: the metrics differ ({x['metric']} against {y['metric']})", file=sys.stderr)
    out = {"x": x, "y": y, "p_x_better": probability_of_improvement(x["values"], y["values"])}
    text = json.dumps(out, indent=1)
    if a.out:
        Path(a.out).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
