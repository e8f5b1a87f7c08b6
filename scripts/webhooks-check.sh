#!/usr/bin/env bash
# Webhooks against the reference library: a served instance delivers to a receiver that
# checks every delivery with `standardwebhooks` from PyPI (the Standard Webhooks
# specification's own Python library), as a school's system would (docs/API.md,
# "Webhooks"); then the same after a change of the endpoint's secret (two signatures).
#
#   scripts/webhooks-check.sh [path/to/langcamp]   (default: target/debug/langcamp)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bin="${1:-target/debug/langcamp}"
venv="${SCHEMATHESIS_VENV:-target/schemathesis-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -c 'import standardwebhooks' 2>/dev/null \
  || "$venv/bin/pip" install --quiet --disable-pip-version-check "standardwebhooks==1.*"

work="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
export DATA_DIR="$work" DATABASE_URL="sqlite://$work/langcamp.db?mode=rwc" JWT_SECRET="webhooks-check-secret-0123456789"
export RUST_LOG=warn HOST=127.0.0.1 PORT="$port" PUBLIC_BASE_URL="http://127.0.0.1:$port"
# The receiver listens on loopback, over http://: only an allowed network may be called so.
export WEBHOOK_ALLOWED_NETWORKS=127.0.0.0/8
unset MAIL_HOST STAFF_SECOND_FACTOR
"$bin" migrate >/dev/null
"$bin" users create root@langcamp.test --role superadmin --name Root >/dev/null
"$bin" serve >"$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.1; done

PYTHONPATH="scripts${PYTHONPATH:+:$PYTHONPATH}" "$venv/bin/python" scripts/webhooks_check.py \
  "http://127.0.0.1:$port" "$work/mail" root@langcamp.test || { cat "$work/server.log" >&2; exit 1; }
