#!/usr/bin/env bash
# The shipped `champion_v1`, end to end: about 2.6 hours of training on 2 CPU cores, then the
# evaluations of docs/results/champion_v1/ and the copy into the package.  Every stage is one
# command of the project; this script only runs them in order (docs/results/champion_v1/README.md).
#
#   bash scripts/train_champion.sh              # HANDFOOT=path/to/handfoot to use another install
#
# Stage 1  configs/experiments/champion.yaml: 40M decisions of batched PPO self-play (seed 7)
#          against snapshots, strategic, greedy and random; best checkpoint at 32.5M (by 40
#          duplicate deals against strategic, match seed 1000003).
# Stage 2  from that checkpoint, 15M more decisions on a training variant of the rules in which
#          going out is worth 1000 points (configs/train/rules/pagat_go_out_1000.yaml); run as two
#          sessions (to 40M, then to 47.5M), as recorded.
# Stage 3  7.5M more with going out worth 400 (configs/train/rules/pagat_go_out_400.yaml), to 55M.
# Then     validation (300 deals, seed 1000003) and test (300 deals, seed 2000003) under pagat,
#          and scripts/ship_champion.py.
set -euo pipefail
cd "$(dirname "$0")/.."
H=${HANDFOOT:-handfoot}
BASE=runs/champion-s7
RUN=runs/champion-go-s7

if [ -e "$BASE" ] || [ -e "$RUN" ]; then
    echo "train_champion: error: $BASE or $RUN exists already; move it away first" >&2
    exit 2
fi

"$H" experiment configs/experiments/champion.yaml

mkdir -p "$RUN"
cp -r "$BASE/run.json" "$BASE/config.yaml" "$BASE/metrics.jsonl" "$BASE/best" "$RUN/"
"$H" train --resume "$RUN/best" --set rules=configs/train/rules/pagat_go_out_1000.yaml \
    --set total_timesteps=40000000 --set keep_checkpoints=20
"$H" train --resume "$RUN/final" --set total_timesteps=47500000
"$H" train --resume "$RUN/final" --set rules=configs/train/rules/pagat_go_out_400.yaml \
    --set total_timesteps=55000000

for ck in "$RUN"/checkpoints/step_* "$RUN/final"; do
    "$H" evaluate --agents "policy:$ck" strategic --deals 300 --seed 1000003 --workers 2 \
        --no-progress --no-plots --out "runs/eval/champion-validation-$(basename "$ck")"
done
"$H" evaluate --agents "policy:$RUN/final" random greedy strategic --deals 300 --seed 2000003 \
    --workers 2 --no-progress --out runs/eval/champion-test
"${PYTHON:-python}" scripts/ship_champion.py "$RUN" --name champion_v1 --checkpoint final
