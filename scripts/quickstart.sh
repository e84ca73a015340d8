#!/usr/bin/env bash
# README's main job: set up (if needed) and run the quickstart experiment
# (self-play training, evaluation against the heuristics, Markdown report).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh             # the main job needs no extras (no Ray, no test tools)
.venv/bin/handfoot experiment configs/experiments/quickstart.yaml "$@"
