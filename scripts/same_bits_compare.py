"""The comparison of scripts/same_bits.sh: BASE_OUT and TREE_OUT hold the outputs named (train, eval,
search); one line per output, exit 0 when every one is the same, 1 when one differs.

    python scripts/same_bits_compare.py BASE_OUT TREE_OUT train eval search

A training run: every ``metrics.jsonl`` byte (its rows hold no wall-clock figure) and every array of the
final actor.  An evaluation: ``deals.csv`` byte for byte, and ``results.json`` but for the fields of the
machine and the clock (:data:`VOLATILE`), the method's prose, and keys only the working tree's file holds
(a new rule field at its default, a new count).  The first champion's new name, ``champion_v1``, reads as
``champion`` (its name before, the same weights) when the base's output names ``champion``.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, List, Optional

import numpy as np

#: results.json keys that name the machine, the clock or the command line, not the games
VOLATILE = {"timing", "versions", "commit", "command", "argv", "out", "started", "finished", "date", "host",
            "elapsed_s", "wall_s", "seconds", "method"}


#: agent specs renamed since a base: the tree's name -> the base's (the same agent)
RENAMED = {"champion_v1": "champion"}


def _renamed(base_text: str, tree_text: str) -> str:
    """The tree's text with its renamed specs under the base's names, where the base's text uses them."""
    for new, old in RENAMED.items():
        if new in tree_text and new not in base_text and old in base_text:
            tree_text = tree_text.replace(new, old)
    return tree_text


def differences(x: Any, y: Any, at: str = "") -> List[str]:
    """Where ``y`` (the tree's) does not hold what ``x`` (the base's) holds."""
    if isinstance(x, dict) and isinstance(y, dict):
        out: List[str] = []
        for k in x:
            if k in VOLATILE:
                continue
            out += differences(x[k], y[k], f"{at}{k}.") if k in y else [f"{at}{k} (gone)"]
        return out
    return [] if x == y else [at.rstrip(".") or "(the whole file)"]


def compare(base: Path, tree: Path, name: str) -> Optional[str]:
    """None when output ``name`` is the same on both sides, else what differs."""
    a, b = base / name, tree / name
    if not a.is_dir() or not b.is_dir():
        return f"missing ({'base' if not a.is_dir() else 'tree'})"
    if name.startswith("train"):
        ma, mb = a / "metrics.jsonl", b / "metrics.jsonl"
        if ma.read_bytes() != mb.read_bytes():
            ra, rb = ma.read_text().splitlines(), mb.read_text().splitlines()
            i = next((i for i, (x, y) in enumerate(zip(ra, rb)) if x != y), min(len(ra), len(rb)))
            return f"metrics.jsonl parts at row {i + 1} ({len(ra)} and {len(rb)} rows)"
        za, zb = np.load(a / "final" / "actor.npz"), np.load(b / "final" / "actor.npz")
        if sorted(za.files) != sorted(zb.files):
            return "the final actors hold different arrays"
        for k in za.files:
            if za[k].dtype != zb[k].dtype or za[k].tobytes() != zb[k].tobytes():
                return f"final actor array {k} differs"
        return None
    da, db = ((p / "deals.csv").read_text() for p in (a, b))
    if da != _renamed(da, db):
        return "deals.csv differs"
    ra, rb = ((p / "results.json").read_text() for p in (a, b))
    diff = differences(json.loads(ra), json.loads(_renamed(ra, rb)))
    return f"results.json differs in {', '.join(diff[:6])}" if diff else None


def main(argv: List[str]) -> int:
    base, tree, only = Path(argv[0]), Path(argv[1]), argv[2:]
    names: List[str] = []
    if "train" in only:
        names += ["train-compiled", "train-reference"]
    if "eval" in only:
        names += [f"eval-{w}-{c}" for w in ("heur", "champ") for c in ("compiled", "reference")]
    if "search" in only:
        names += ["search"]
    bad = 0
    for n in names:
        why = compare(base, tree, n)
        print(f"  {n:22s} {'same' if why is None else 'DIFFERS: ' + why}")
        bad += why is not None
    print(f"same_bits: {'every output the same' if not bad else f'{bad} of {len(names)} outputs differ'}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
