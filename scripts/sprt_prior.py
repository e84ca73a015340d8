"""The sequential test's prior against fishtest's rule, on every committed run that has a sequential test.

    .venv/bin/python scripts/sprt_prior.py

``handfoot evaluate --sprt`` (experiments.evaluation.stats.deal_llr) adds one virtual deal to the
observed per-deal outcomes, split between the outcomes 0 and 1 in the proportion of the hypotheses'
midpoint (``LLR_PRIOR``, ``llr_prior``).  Fishtest's generalised SPRT has no prior; it replaces a
count of zero by 1e-3 before each test (its ``regularize``).  For each committed run (the duel of
docs/results/sprt/ and the pooled search evaluations of docs/results/search/eval/, whose parts'
deals.csv are committed beside them) this replays both on the same deals in the same order and
prints where each stops and what it decides.  Without either device a run whose deals all went one
way has no maximum-likelihood distribution with the hypothesis' mean (the observed outcomes alone
cannot average 0.5), so the LLR is not finite.
"""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from experiments.evaluation.sprt import PAIR_OUTCOMES, Sprt, decide, first_decision, llr_path  # noqa: E402
from experiments.evaluation.stats import deal_llr_counts  # noqa: E402
from pool_evaluations import _pooled  # noqa: E402

#: fishtest's replacement of a zero count (LLRcalc.regularize)
FISHTEST_EPSILON = 1e-3


def fishtest_path(scores: List[float], test: Sprt) -> np.ndarray:
    """The LLR after each deal with no prior, every zero count replaced by :data:`FISHTEST_EPSILON`."""
    x = np.asarray(PAIR_OUTCOMES)
    idx = np.searchsorted(x, np.asarray(scores, dtype=np.float64))
    step = np.zeros((len(scores), len(x)))
    step[np.arange(len(scores)), idx] = 1.0
    cum = np.cumsum(step, axis=0)
    cum[cum == 0] = FISHTEST_EPSILON
    return deal_llr_counts(x, cum, test.h0, test.h1)


def stop(path: np.ndarray, test: Sprt) -> Tuple[Optional[int], Optional[str]]:
    """(deals played at the stop, decision), or (None, None) when the test never decides."""
    i = first_decision(path, test)
    return (None, None) if i is None else (i + 1, decide(float(path[i]), test))


def runs() -> List[Tuple[str, List[float], Sprt]]:
    """Every committed run with a sequential test: (name, per-deal scores in the test's order, its test)."""
    out = []
    duel = ROOT / "docs/results/sprt/strategic_vs_greedy"
    res = json.loads((duel / "results.json").read_text())
    with (duel / "deals.csv").open(newline="") as fh:
        rows = sorted(csv.DictReader(fh), key=lambda r: int(r["deal"]))
    out.append((duel.relative_to(ROOT).as_posix(), [float(r["score"]) for r in rows], _test(res["sprt"])))
    ev = ROOT / "docs/results/search/eval"
    for f in sorted(ev.glob("pooled_*.json")):
        res = json.loads(f.read_text())
        if "sprt" not in res:
            continue
        folders = []
        for seed in res["seeds"]:
            found = sorted(ev.glob(f"*/{res['agents'][1]}-s{seed}"))
            found = [d for d in found if json.loads((d / "results.json").read_text())["agents"] == res["agents"]]
            if len(found) != 1:
                raise SystemExit(f"sprt_prior: {f.name}: {len(found)} part folders for match seed {seed}")
            folders.append(found[0])
        _, deals = _pooled(folders, True)
        out.append((f.relative_to(ROOT).as_posix(), [s for _, s in deals], _test(res["sprt"])))
    return out


def _test(s) -> Sprt:
    return Sprt(h0=s["h0"], h1=s["h1"], alpha=s["alpha"], beta=s["beta"])


def main() -> int:
    print("| run | deals played | with the prior (published) | fishtest's rule (no prior, zeros as 1e-3) |")
    print("|---|---:|---|---|")
    for name, scores, test in runs():
        mine, _ = llr_path(scores, test)
        theirs = fishtest_path(scores, test)
        a, b = stop(mine, test), stop(theirs, test)
        say = lambda s: "undecided" if s[0] is None else f"{s[1]} at deal {s[0]}"   # noqa: E731
        print(f"| `{name}` | {len(scores)} | {say(a)} | {say(b)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
