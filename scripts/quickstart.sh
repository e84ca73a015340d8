#!/usr/bin/env bash
# README's main job: set up (if needed) and run the quickstart experiment
# (self-play training, evaluation against the heuristics, Markdown report).
#   bash scripts/quickstart.sh --quick                          the same pipeline at a smoke budget (under a minute)
#   bash scripts/quickstart.sh --resume runs/quickstart-s0      an interrupted run taken on to its report
# Arguments go on to handfoot experiment (handfoot experiment --help).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh             # the main job needs no extras (no Ray, no test tools)
.venv/bin/handfoot experiment configs/experiments/quickstart.yaml "$@"
