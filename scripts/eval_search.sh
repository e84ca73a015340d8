#!/bin/bash
# Duplicate evaluation of the search agent in parts of 2 deals (each part a fresh match seed), so that a
# run cut short still leaves whole parts; pool them with scripts/pool_evaluations.py (docs/search.md).
#   bash scripts/eval_search.sh OPPONENT FIRST_SEED PARTS [SEARCH_SPEC]
#   bash scripts/eval_search.sh champion 39100 100        # 200 deals against the champion
#   .venv/bin/python scripts/pool_evaluations.py runs/search-eval/champion-s*
set -euo pipefail
cd "$(dirname "$0")/.."
opp=$1; first=$2; parts=$3; spec=${4:-search}
mkdir -p runs/search-eval
for i in $(seq 0 $((parts - 1))); do
  s=$((first + i))
  .venv/bin/handfoot evaluate --agents "$spec" "$opp" --deals 2 --seed "$s" --workers 1 --core compiled \
    --no-plots --no-progress --out "runs/search-eval/$opp-s$s" --json > /dev/null
done
