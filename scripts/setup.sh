#!/usr/bin/env bash
# Create .venv and install handfoot (idempotent), showing pip's progress.
#   bash scripts/setup.sh                      the main job's install: handfoot with torch (CPU), SB3, TensorBoard
#   bash scripts/setup.sh dev,ray,web,examples the same plus optional extras (what scripts/test.sh installs)
# torch is installed first, pinned, so that pip takes the CPU wheel (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=${1:-}
PY=${PYTHON:-python3}
say() { printf '\n[setup] %s\n' "$*"; }
if [ ! -x .venv/bin/python ]; then
  say "creating .venv ($("$PY" --version))"
  "$PY" -m venv .venv
fi
PIP=(.venv/bin/python -m pip install --progress-bar on --disable-pip-version-check)
"${PIP[@]}" -q --upgrade pip
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  say "installing torch 2.13.0, the CPU wheel (about 750 MB on disk; the largest download)"
  "${PIP[@]}" "torch==2.13.0"
fi
TARGET="."
[ -n "$EXTRAS" ] && TARGET=".[${EXTRAS}]"
say "installing handfoot (editable) with its dependencies${EXTRAS:+ and the extras ${EXTRAS}}"
"${PIP[@]}" -e "$TARGET"
say "done: .venv holds $(du -sh .venv | cut -f1)"
