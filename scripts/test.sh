#!/usr/bin/env bash
# README's test command: set up (if needed) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev,ray,web,examples,data
.venv/bin/python -m ruff check --quiet .
.venv/bin/python -m pytest -n 2 --durations=15 "$@"
