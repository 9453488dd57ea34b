#!/usr/bin/env sh
# One-time (and idempotent) set-up: a pip virtual environment in .venv with torch (CPU) first,
# then every lib and service installed as an editable package, plus the `task` runner, with every
# third-party version pinned by constraints.txt.
# Re-running is cheap: it reinstalls only when a pyproject.toml or constraints.txt changed.
set -eu
cd "$(dirname "$0")/.."
PY="${PYTHON:-$(command -v python3.11 || command -v python3)}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# The console's browser tests (tests/console) drive Debian's Chromium: install it when missing and
# this machine allows it (root + apt); otherwise those tests skip and say how to run them.
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 \
    || (apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends chromium >/dev/null 2>&1)) \
    || echo "setup: could not install chromium; the browser tests (tests/console) will skip" >&2
fi
# promtool (Debian's `prometheus` package) lets tests/ops check the Prometheus config and every
# dashboard PromQL expression; without it those two tests skip.
if ! command -v promtool >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get install -y --no-install-recommends prometheus >/dev/null 2>&1 \
    || (apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends prometheus >/dev/null 2>&1)) \
    || echo "setup: could not install prometheus (promtool); tests/ops/test_prometheus.py will skip" >&2
fi
stamp=.venv/.research-engine-installed
want=$(cat constraints.txt pyproject.toml libs/*/pyproject.toml services/*/pyproject.toml | "$PY" -c 'import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# torch before anything that needs it: pip picks the local CPU build instead of multi-GB CUDA wheels.
.venv/bin/python -m pip install --quiet -c constraints.txt "torch==2.13.0"
set --
for d in libs/* services/*; do set -- "$@" -e "$d"; done
.venv/bin/python -m pip install --quiet -c constraints.txt "$@" -e ".[test]"
echo "$want" > "$stamp"
