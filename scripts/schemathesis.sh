#!/usr/bin/env bash
# Property-based API check: schemathesis against a served instance and its /swagger/json,
# every operation, as a superadmin with a second factor (contract §20, under the default
# STAFF_SECOND_FACTOR=required), with every check (scripts/schemathesis.toml): fails on
# any 5xx, any response that violates the documented schema, any undocumented status code
# or content type, a request valid by the document that is refused, a request invalid by
# the document that is accepted; the stateful phase follows the links schemathesis infers.
#
#   scripts/schemathesis.sh [path/to/langcamp [schemathesis run options...]]
#                                    (default: target/debug/langcamp)
# The options go to the main run, e.g. `--include-path-regex '^/me/factors'` to look at a
# few operations; with options the logout run is left out.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bin="${1:-target/debug/langcamp}"
shift || true
venv="${SCHEMATHESIS_VENV:-target/schemathesis-venv}"
if [ ! -x "$venv/bin/schemathesis" ]; then
  echo "installing schemathesis into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis>=4,<5"
fi

work="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
export DATA_DIR="$work" DATABASE_URL="sqlite://$work/langcamp.db?mode=rwc" JWT_SECRET="schemathesis-secret-0123456789"
export RUST_LOG=warn HOST=127.0.0.1 PORT="$port" PUBLIC_BASE_URL="http://127.0.0.1:$port"
# The policy stays the default (`required`: staff work only at assurance level 2). The
# step-up window is long: the superadmin checks its factor once, at the start, and the
# operations that want a recent check (role changes, deleting users, exports, factor
# resets, new recovery codes) come up all through a run of several minutes; with the
# default 10 minutes the later ones would all answer 403 STEP_UP_REQUIRED and never reach
# their handlers. That answer has its own tests (langcamp-http/tests/api/factors.rs).
export STEP_UP_MAX_AGE=24h
# Passkeys on, so their routes are checked past "PUBLIC_ORIGIN is unset" (400).
export PUBLIC_ORIGIN=http://localhost:5173
unset MAIL_HOST STAFF_SECOND_FACTOR
"$bin" migrate >/dev/null
"$bin" users create root@langcamp.test --role superadmin --name Root >/dev/null
"$bin" serve >"$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.1; done

# Sign in through the real flow (with no MAIL_HOST the code is in an .eml file) and add a
# TOTP factor, as a new staff member does: its tokens are at assurance level 2.
export LANGCAMP_FUZZ_BASE="http://127.0.0.1:$port" LANGCAMP_FUZZ_MAIL="$work/mail"
export LANGCAMP_FUZZ_SUPERADMIN="$work/superadmin.json"
python3 scripts/schemathesis_signin.py superadmin "$LANGCAMP_FUZZ_BASE" "$LANGCAMP_FUZZ_MAIL" \
  root@langcamp.test >"$LANGCAMP_FUZZ_SUPERADMIN"

# Who each case is signed in as (the superadmin, or for the routes that would end or change
# the caller's sign-in or factors a sign-in of its own) and the client address each request
# comes from: scripts/schemathesis_hooks.py.
# Logout would end the token the run depends on; it runs on its own, below.
# One worker: with two threads, Hypothesis's source inspection (ast.parse under CPython
# 3.11) crashed once with "AST constructor recursion depth mismatch" in a clean-clone CI run,
# a race in the tool, not a finding about the server.
export SCHEMATHESIS_HOOKS=schemathesis_hooks PYTHONPATH="scripts${PYTHONPATH:+:$PYTHONPATH}"
"$venv/bin/schemathesis" --config-file scripts/schemathesis.toml run "http://127.0.0.1:$port/swagger/json" \
  --exclude-path /auth/logout \
  --max-examples "${SCHEMATHESIS_EXAMPLES:-40}" \
  --workers 1 \
  --seed 1 \
  --no-color \
  "$@"

# POST /auth/logout ends the caller's sign-in, so it runs on its own, last, with every check
# (positive data acceptance included): the hooks sign each case in as a new student.
[ $# -eq 0 ] || exit 0
"$venv/bin/schemathesis" --config-file scripts/schemathesis.toml run "http://127.0.0.1:$port/swagger/json" \
  --include-path /auth/logout \
  --max-examples "${SCHEMATHESIS_EXAMPLES:-40}" \
  --workers 1 \
  --seed 1 \
  --no-color
