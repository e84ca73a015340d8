#!/bin/bash
# Duplicate evaluation of the search agent in parts of 2 deals (each part a fresh match seed), so that a
# run cut short still leaves whole parts; pool them with scripts/pool_evaluations.py (docs/search.md).
#   bash scripts/eval_search.sh OPPONENT FIRST_SEED PARTS [SEARCH_SPEC] [--sprt KEY=VALUE...]
#   bash scripts/eval_search.sh champion 39100 100        # 200 deals against the champion
#   bash scripts/eval_search.sh champion 39800 100 'search(z=1)' --sprt h0=0.5 h1=0.56
#   .venv/bin/python scripts/pool_evaluations.py runs/search-eval/champion-s*
# Parts go to runs/search-eval/OPPONENT-sSEED (the default spec `search`) or
# runs/search-eval/OPPONENT-SPEC-sSEED (another spec, its characters outside [A-Za-z0-9=.,] as _).
# --sprt: after each part the sequential test (handfoot evaluate --sprt's tokens) is replayed over the
# deals of this run's parts so far; the run stops at the first part after which it has decided.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 3 ]; then
  echo "usage: bash scripts/eval_search.sh OPPONENT FIRST_SEED PARTS [SEARCH_SPEC] [--sprt KEY=VALUE...]" >&2
  exit 2
fi
opp=$1; first=$2; parts=$3; shift 3
spec=search
if [ $# -gt 0 ] && [ "$1" != "--sprt" ]; then spec=$1; shift; fi
sprt=()
if [ $# -gt 0 ]; then
  if [ "$1" != "--sprt" ]; then echo "eval_search.sh: error: unexpected argument '$1'" >&2; exit 2; fi
  shift; sprt=(--sprt "$@")
fi
case "$first$parts" in *[!0-9]*) echo "eval_search.sh: error: FIRST_SEED and PARTS are whole numbers" >&2; exit 2;; esac
prefix=$opp
if [ "$spec" != search ]; then prefix="$opp-$(printf '%s' "$spec" | tr -c 'A-Za-z0-9=.,' '_')"; fi
mkdir -p runs/search-eval
done_parts=()
for i in $(seq 0 $((parts - 1))); do
  s=$((first + i))
  out="runs/search-eval/$prefix-s$s"
  .venv/bin/handfoot evaluate --agents "$spec" "$opp" --deals 2 --seed "$s" --workers 1 --core compiled \
    --no-plots --no-progress --out "$out" --json > /dev/null
  done_parts+=("$out")
  if [ ${#sprt[@]} -gt 0 ]; then
    decision=$(.venv/bin/python scripts/pool_evaluations.py "${done_parts[@]}" "${sprt[@]}" |
      .venv/bin/python -c 'import json, sys; print(json.load(sys.stdin)["sprt"]["decision"])')
    if [ "$decision" != None ]; then
      echo "eval_search.sh: the sequential test accepts $decision after ${#done_parts[@]} parts (seeds $first to $s)"
      break
    fi
  fi
done
