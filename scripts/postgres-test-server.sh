#!/usr/bin/env bash
# Makes sure a throwaway PostgreSQL server for the test suite is running and
# prints its URL on stdout (and nothing else there; progress goes to stderr):
#
#   TEST_DATABASE_URL="$(scripts/postgres-test-server.sh)" cargo test --workspace
#
# The server is a Debian `postgresql-common` cluster named `ci` on port 5433
# with trust authentication and durability switched off (fsync, synchronous
# commit, full page writes), which is fine for tests and much faster. It
# installs the `postgresql` package when it is missing (needs root and apt).
# Safe to run repeatedly and concurrently: it only creates or starts what is
# not there yet.
set -euo pipefail

PORT=5433
CLUSTER=ci
URL="postgres://postgres@127.0.0.1:${PORT}/postgres"

log() { echo "postgres-test-server: $*" >&2; }
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

ready() { pg_isready -q -h 127.0.0.1 -p "$PORT" -U postgres >/dev/null 2>&1; }

if command -v pg_isready >/dev/null 2>&1 && ready; then
    echo "$URL"
    exit 0
fi

# One run at a time from here on: a second caller waits, then finds it ready.
# Commands that may leave a server running get `9>&-` so the server does not
# inherit (and hold forever) the lock.
exec 9>/tmp/langcamp-postgres-test-server.lock
flock -w 300 9 || { log "timed out waiting for another run to finish"; exit 1; }

if command -v pg_isready >/dev/null 2>&1 && ready; then
    echo "$URL"
    exit 0
fi

if ! command -v pg_createcluster >/dev/null 2>&1; then
    log "installing PostgreSQL with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2
    apt-get install -y --no-install-recommends postgresql >&2
fi

VERSION="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
if [[ -z "$VERSION" ]]; then
    log "no PostgreSQL server found under /usr/lib/postgresql"
    exit 1
fi

# The socket directory lives on a tmpfs that may be empty after a restart.
install -d -o postgres -g postgres -m 2775 /var/run/postgresql

if [[ -d "/etc/postgresql/$VERSION/$CLUSTER" ]]; then
    if pg_lsclusters -h "$VERSION" "$CLUSTER" 2>/dev/null | grep -q online; then
        log "cluster $VERSION/$CLUSTER is running; waiting for it"
    else
        log "starting cluster $VERSION/$CLUSTER"
        # A retry covers a server killed a moment ago whose lock files linger.
        pg_ctlcluster "$VERSION" "$CLUSTER" start >&2 9>&- \
            || { sleep 2; pg_ctlcluster "$VERSION" "$CLUSTER" start >&2 9>&-; }
    fi
else
    log "creating cluster $VERSION/$CLUSTER on port $PORT"
    pg_createcluster "$VERSION" "$CLUSTER" --port "$PORT" \
        -o fsync=off \
        -o synchronous_commit=off \
        -o full_page_writes=off \
        -o max_connections=300 \
        --start \
        -- --auth-host=trust --auth-local=trust >&2 9>&-
fi

serve_when_ready 60 || {
    log "PostgreSQL did not answer on 127.0.0.1:$PORT within 30 s"
    log "see /var/log/postgresql/postgresql-$VERSION-$CLUSTER.log"
    exit 1
}
