#!/usr/bin/env bash
# Install Debian's headless-capable Chromium for the browser test (tests/test_viewer.py), if missing.
# Idempotent; needs root (CI runs as root). Without it the browser test is skipped with its reason.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install_chromium: chromium is missing and cannot be installed here (needs root and apt-get);" \
       "the browser test will be skipped" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=300 update -q
apt-get -o DPkg::Lock::Timeout=300 install -y -q chromium
