#!/bin/bash
# Duplicate evaluation of the search agent in parts of 2 deals (each part a fresh match seed), so that a
# run cut short still leaves whole parts; pool them with scripts/pool_evaluations.py (docs/search.md).
#   bash scripts/eval_search.sh OPPONENT FIRST_SEED PARTS [SPEC] [--sprt KEY=VALUE...]
#   bash scripts/eval_search.sh champion 39100 100        # 200 deals against the champion
#   bash scripts/eval_search.sh champion 39800 100 'search(z=1)' --sprt h0=0.5 h1=0.55
#   .venv/bin/python scripts/pool_evaluations.py runs/search-eval/champion-s*
# Parts go to runs/search-eval/OPPONENT-sSEED for the default spec `search`, and to
# runs/search-eval/TAG/OPPONENT-sSEED for another SPEC (any agent spec: a search variant, or the base
# policy itself to compare on the same deals), TAG being SPEC with its characters outside
# [A-Za-z0-9=.,] as _ (the opponent's name likewise).
# --sprt: after each part the sequential test (handfoot evaluate --sprt's tokens) is replayed over the
# deals of this run's parts so far; the run stops at the first part after which it has decided.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: bash scripts/eval_search.sh OPPONENT FIRST_SEED PARTS [SPEC] [--sprt KEY=VALUE...]"
if [ $# -lt 3 ]; then echo "$usage" >&2; exit 2; fi
opp=$1; first=$2; parts=$3; shift 3
spec=search
if [ $# -gt 0 ] && [ "$1" != "--sprt" ]; then spec=$1; shift; fi
sprt=()
if [ $# -gt 0 ]; then
  if [ "$1" != "--sprt" ]; then echo "eval_search.sh: error: unexpected argument '$1'; $usage" >&2; exit 2; fi
  shift; sprt=(--sprt "$@")
fi
for n in "$first" "$parts"; do
  case "$n" in ''|*[!0-9]*) echo "eval_search.sh: error: FIRST_SEED and PARTS are whole numbers, got '$n'" >&2; exit 2;; esac
done
first=$((10#$first)); parts=$((10#$parts))
tag() { printf '%s' "$1" | tr -c 'A-Za-z0-9=.,' '_'; }
dir=runs/search-eval
if [ "$spec" != search ]; then dir="runs/search-eval/$(tag "$spec")"; fi
if [ ${#sprt[@]} -gt 0 ]; then        # bad tokens are named now, not after the first part
  .venv/bin/python -c 'import sys
from experiments.evaluation.sprt import parse_sprt
try:
    parse_sprt(sys.argv[1:])
except ValueError as e:
    sys.exit(f"eval_search.sh: error: {e}")' "${sprt[@]:1}"
fi
mkdir -p "$dir"
done_parts=()
for i in $(seq 0 $((parts - 1))); do
  s=$((first + i))
  out="$dir/$(tag "$opp")-s$s"
  .venv/bin/handfoot evaluate --agents "$spec" "$opp" --deals 2 --seed "$s" --workers 1 --core compiled \
    --no-plots --no-progress --out "$out" --json > /dev/null
  done_parts+=("$out")
  if [ ${#sprt[@]} -gt 0 ]; then
    pooled=$(.venv/bin/python scripts/pool_evaluations.py "${done_parts[@]}" "${sprt[@]}") || exit 2
    decision=$(printf '%s' "$pooled" | .venv/bin/python -c 'import json, sys; print(json.load(sys.stdin)["sprt"]["decision"])')
    if [ "$decision" != None ]; then
      echo "eval_search.sh: the sequential test accepts $decision after ${#done_parts[@]} parts (seeds $first to $s)"
      break
    fi
  fi
done
