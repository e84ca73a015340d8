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
#                                    handfoot evaluate --agents strategic greedy / champion_v1 strategic:
#                                    deals.csv and results.json (wall-clock and provenance fields aside)
#   search                           one duplicate deal of search (max_seconds high enough that no search
#                                    is cut; its base the default, champion_v1) against champion_v1: deals.csv
# The first champion is `champion_v1` in a tree that ships it and `champion` in one from before (the same
# weights; same_bits_compare.py reads the one name as the other).
# scripts/same_bits_compare.py says what "the same" means for each output (a key only the tree's
# results.json holds, such as a new rule field, is no difference). One line per output; exit 0 when every
# output is the same, 1 when one differs, 2 when an output could not be built.
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
  mkdir -p "$out"
  local champ=champion                  # the first champion, by the name its tree gives it
  [ -f "$tree/agents/weights/champion_v1.npz" ] && champ=champion_v1
  made() {    # made NAME COMMAND...: run the handfoot command into OUTDIR/NAME unless it is there (whole)
    local name=$1; shift
    [ -d "$out/$name" ] && return 0
    rm -rf "$out/.part"; mkdir -p "$out/.part"
    local args=("$@"); args=("${args[@]//@OUT@/$out/.part/$name}"); args=("${args[@]//@DIR@/$out/.part}")
    if ! (cd "$tree" && PYTHONPATH="$tree" "$PY" -m experiments.apps.cli "${args[@]}") > "$out/$name.log" 2>&1; then
      echo "same_bits: error: $name failed in $tree (see $out/$name.log)" >&2; exit 2
    fi
    mv "$out/.part/$name" "$out/$name"
  }
  if [[ " $ONLY " == *" train "* ]]; then
    for core in compiled reference; do
      local steps=200000; [ "$core" = reference ] && steps=40000
      made "train-$core" train configs/train/quickstart.yaml --run-dir @DIR@ --run-name "train-$core" --quiet \
        --set backend=batched --set batched.core=$core --set batched.games=32 --set total_timesteps=$steps \
        --set evaluation.every_timesteps=20000 --set evaluation.deals=4 --set evaluation.final_deals=4 \
        --set evaluation.workers=1 --set seed=3
    done
  fi
  if [[ " $ONLY " == *" eval "* ]]; then
    for core in compiled reference; do
      made "eval-heur-$core" evaluate --agents strategic greedy --deals 12 --seed 71 --workers 1 --core $core \
        --no-plots --no-progress --out @OUT@
      made "eval-champ-$core" evaluate --agents $champ strategic --deals 12 --seed 72 --workers 1 --core $core \
        --no-plots --no-progress --out @OUT@
    done
  fi
  if [[ " $ONLY " == *" search "* ]]; then
    made search evaluate --agents 'search(worlds=24,max_seconds=1000)' $champ --deals 1 --seed 41800 \
      --workers 1 --core compiled --no-plots --no-progress --out @OUT@
  fi
}

main() {
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
  "$PY" scripts/same_bits_compare.py "$base_out" "$tree_out" $ONLY || rc=$?
  if [ $rc = 0 ]; then rm -rf "$tree_out"; else echo "same_bits: the working tree's outputs are kept in $tree_out"; fi
  exit $rc
}

main "$@"
