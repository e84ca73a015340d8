#!/usr/bin/env bash
# Behaviour bit for bit: a base commit's outputs, built in a temporary clone, against the working tree's,
# on this machine (float sums differ across CPUs, so both sides are built here).
#   bash scripts/same_bits.sh                 # base: the commit in scripts/same_bits.base
#   bash scripts/same_bits.sh BASE            # any commit
#   bash scripts/same_bits.sh BASE --fresh    # build the base's outputs again (they are kept per commit)
#   SAME_BITS_ONLY="train eval" bash scripts/same_bits.sh   # a subset: train, eval, search
# The outputs, under runs/same-bits/base-COMMIT/ (kept for later runs) and runs/same-bits/tree-PID/ (removed
# when every output is the same, kept to look into when one differs):
#   train-compiled, train-reference  a fixed-seed run of the quickstart recipe on the batched backend
#                                    (batched.core compiled / reference): every metrics.jsonl row and the
#                                    final actor's arrays
#   eval-{heur,champ}-{compiled,reference}
#                                    handfoot evaluate --agents strategic greedy / champion strategic:
#                                    deals.csv and results.json (wall-clock and provenance fields aside)
#   search                           one duplicate deal of search (max_seconds high enough that no search
#                                    is cut) against the champion: deals.csv
# Prints one line per output and exits 0 when every output is the same, 1 when one differs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
BASE=${1:-$(cat scripts/same_bits.base)}
FRESH=${2:-}
ONLY=${SAME_BITS_ONLY:-train eval search}
BASE=$(git rev-parse --verify -q "$BASE^{commit}") || { echo "same_bits: error: no commit '${1:-}'" >&2; exit 2; }
WORK="$ROOT/runs/same-bits"
mkdir -p "$WORK"

build() {   # build TREE OUTDIR: every output of the tree at TREE into OUTDIR
  local tree=$1 out=$2
  run() { (cd "$tree" && PYTHONPATH="$tree" "$PY" -m experiments.apps.cli "$@"); }
  mkdir -p "$out"
  if [[ " $ONLY " == *" train "* ]]; then
    for core in compiled reference; do
      local steps=200000; [ "$core" = reference ] && steps=40000
      [ -d "$out/train-$core" ] || run train configs/train/quickstart.yaml --out "$out/train-$core" \
        --set backend=batched --set batched.core=$core --set batched.games=32 --set total_timesteps=$steps \
        --set evaluation.every_timesteps=20000 --set evaluation.deals=4 --set evaluation.final_deals=4 \
        --set evaluation.workers=1 --set seed=3 > "$out/train-$core.log" 2>&1
    done
  fi
  if [[ " $ONLY " == *" eval "* ]]; then
    for core in compiled reference; do
      [ -d "$out/eval-heur-$core" ] || run evaluate --agents strategic greedy --deals 12 --seed 71 --workers 1 \
        --core $core --no-plots --no-progress --out "$out/eval-heur-$core" > /dev/null
      [ -d "$out/eval-champ-$core" ] || run evaluate --agents champion strategic --deals 12 --seed 72 --workers 1 \
        --core $core --no-plots --no-progress --out "$out/eval-champ-$core" > /dev/null
    done
  fi
  if [[ " $ONLY " == *" search "* ]]; then
    [ -d "$out/search" ] || run evaluate --agents 'search(worlds=24,max_seconds=1000)' champion --deals 1 \
      --seed 41800 --workers 1 --core compiled --no-plots --no-progress --out "$out/search" > /dev/null
  fi
}

base_out="$WORK/base-${BASE:0:12}"
if [ "$FRESH" = --fresh ]; then rm -rf "$base_out"; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q --no-checkout "$ROOT" "$tmp/base"
git -C "$tmp/base" checkout -q "$BASE"
echo "same_bits: base ${BASE:0:12} in $tmp/base -> $base_out"
exec 9>"$base_out.lock"; flock 9      # one build of a base at a time; later runs reuse it
build "$tmp/base" "$base_out"
flock -u 9
tree_out="$WORK/tree-$$"               # a folder per run: two runs at once do not meet
rm -rf "$tree_out"
echo "same_bits: working tree -> $tree_out"
build "$ROOT" "$tree_out"
rc=0
"$PY" - "$base_out" "$tree_out" $ONLY <<'EOF' || rc=$?
import json, sys, zipfile
from pathlib import Path
import numpy as np

base, tree, only = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
VOLATILE = ("time", "seconds", "elapsed", "commit", "version", "date", "started", "finished", "host",
            "python", "platform", "out", "path", "command", "argv", "cpu", "per_s", "rate")

def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if not any(w in k.lower() for w in VOLATILE)}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x

def same_file(a, b):
    return a.read_bytes() == b.read_bytes()

def compare(name):
    a, b = base / name, tree / name
    if not a.is_dir() or not b.is_dir():
        return f"missing ({'base' if not a.is_dir() else 'tree'})"
    if name.startswith("train"):
        ma, mb = (p / "metrics.jsonl" for p in (a, b))
        if not same_file(ma, mb):
            ra, rb = ma.read_text().splitlines(), mb.read_text().splitlines()
            i = next((i for i, (x, y) in enumerate(zip(ra, rb)) if x != y), min(len(ra), len(rb)))
            return f"metrics.jsonl parts at row {i + 1} ({len(ra)} and {len(rb)} rows)"
        za, zb = (np.load(p / "final" / "actor.npz") for p in (a, b))
        if sorted(za.files) != sorted(zb.files):
            return "the final actors hold different arrays"
        for k in za.files:
            if za[k].dtype != zb[k].dtype or za[k].tobytes() != zb[k].tobytes():
                return f"final actor array {k} differs"
        return None
    if not same_file(a / "deals.csv", b / "deals.csv"):
        return "deals.csv differs"
    ja, jb = (strip(json.loads((p / "results.json").read_text())) for p in (a, b))
    if ja != jb:
        keys = sorted(k for k in set(ja) | set(jb) if ja.get(k) != jb.get(k))
        return f"results.json differs in {', '.join(keys)}"
    return None

names = []
if "train" in only: names += ["train-compiled", "train-reference"]
if "eval" in only: names += [f"eval-{w}-{c}" for w in ("heur", "champ") for c in ("compiled", "reference")]
if "search" in only: names += ["search"]
bad = 0
for n in names:
    why = compare(n)
    print(f"  {n:22s} {'same' if why is None else 'DIFFERS: ' + why}")
    bad += why is not None
print(f"same_bits: {'every output the same' if not bad else f'{bad} of {len(names)} outputs differ'}")
sys.exit(1 if bad else 0)
EOF
if [ $rc = 0 ]; then rm -rf "$tree_out"; else echo "same_bits: the working tree's outputs are kept in $tree_out"; fi
exit $rc
