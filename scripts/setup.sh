#!/usr/bin/env bash
# Create .venv and install handfoot (idempotent), showing pip's progress.
#   bash scripts/setup.sh                      the main job's install: handfoot with torch (CPU), SB3, TensorBoard
#   bash scripts/setup.sh dev,ray,web,examples,data the same plus optional extras (what scripts/test.sh installs)
# torch is installed first, pinned, from PyTorch's CPU index, so that pip takes the CPU wheel (about
# 750 MB) and not PyPI's default build with CUDA (several GB). TORCH_INDEX names another index (a CUDA
# one for a GPU learner, e.g. https://download.pytorch.org/whl/cu128); TORCH_INDEX=pypi uses PyPI's.
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
  TORCH_INDEX=${TORCH_INDEX:-https://download.pytorch.org/whl/cpu}
  if [ "$TORCH_INDEX" != pypi ] && ! .venv/bin/python -c "import sys, urllib.request
urllib.request.urlopen(sys.argv[1].rstrip('/') + '/torch/', timeout=10)" "$TORCH_INDEX" 2>/dev/null; then
    say "$TORCH_INDEX cannot be reached from here: torch from pip's configured indexes instead"
    TORCH_INDEX=pypi
  fi
  if [ "$TORCH_INDEX" = pypi ]; then
    say "installing torch 2.13.0 from pip's configured indexes (PyPI unless pip is told otherwise)"
    "${PIP[@]}" "torch==2.13.0"
  else
    say "installing torch 2.13.0 from $TORCH_INDEX (the CPU wheel by default: about 750 MB on disk, the largest download)"
    "${PIP[@]}" --index-url "$TORCH_INDEX" --extra-index-url https://pypi.org/simple "torch==2.13.0"
  fi
fi
TARGET="."
[ -n "$EXTRAS" ] && TARGET=".[${EXTRAS}]"
say "installing handfoot (editable) with its dependencies${EXTRAS:+ and the extras ${EXTRAS}}"
"${PIP[@]}" -e "$TARGET"
if .venv/bin/python -c "import numba" 2>/dev/null; then
  .venv/bin/python -c "from handfoot_env.compiled import load; load()"   # compiles the rules core once per install
fi
say "done: .venv holds $(du -sh .venv | cut -f1); the commands run as .venv/bin/handfoot ..., or as handfoot ... after: source .venv/bin/activate"
