#!/usr/bin/env bash
# Makes sure a throwaway S3-compatible server for the test suite is running and
# prints its endpoint on stdout (and nothing else there; progress goes to stderr):
#
#   TEST_S3_ENDPOINT="$(scripts/s3-test-server.sh)" cargo test --workspace
#
# The server is moto's (`moto[server]` from PyPI), installed into a virtualenv
# (S3_TEST_VENV, default /tmp/langcamp-s3-venv) and listening on 127.0.0.1:5434
# (S3_TEST_PORT). It keeps everything in memory and accepts any credentials;
# each test creates its own bucket. Safe to run repeatedly and concurrently:
# it only installs or starts what is not there yet.
set -euo pipefail

PORT="${S3_TEST_PORT:-5434}"
VENV="${S3_TEST_VENV:-/tmp/langcamp-s3-venv}"
URL="http://127.0.0.1:${PORT}"
LOG="/tmp/langcamp-s3-test-server.log"

log() { echo "s3-test-server: $*" >&2; }
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# moto answers `GET /moto-api/` on its own port: that tells it apart from any
# other program that may hold the port.
ready() { curl -sf -o /dev/null "$URL/moto-api/" 2>/dev/null; }

if ready; then
    echo "$URL"
    exit 0
fi

# One run at a time from here on: a second caller waits, then finds it ready.
# The server started below gets `9>&-` so it does not inherit (and hold) the lock.
exec 9>/tmp/langcamp-s3-test-server.lock
flock -w 600 9 || { log "timed out waiting for another run to finish"; exit 1; }

if ready; then
    echo "$URL"
    exit 0
fi

if [[ ! -x "$VENV/bin/moto_server" ]]; then
    log "installing moto[server] into $VENV"
    python3 -m venv "$VENV" >&2
    "$VENV/bin/pip" install --quiet --disable-pip-version-check 'moto[server]>=5,<6' >&2
fi

log "starting moto_server on 127.0.0.1:$PORT (log: $LOG)"
nohup "$VENV/bin/moto_server" -H 127.0.0.1 -p "$PORT" >"$LOG" 2>&1 9>&- &

serve_when_ready 120 || {
    log "moto_server did not answer on $URL within 60 s; see $LOG"
    exit 1
}
