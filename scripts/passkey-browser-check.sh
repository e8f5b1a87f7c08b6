#!/usr/bin/env bash
# Passkeys in a real browser (issue #42, CONTRACT §21): headless Chromium with a virtual
# authenticator (DevTools protocol, WebAuthn.addVirtualAuthenticator: ctap2, internal
# transport, resident keys, user verification) opens a small page at PUBLIC_ORIGIN
# (scripts/passkey-browser/index.html, served by check.mjs on http://localhost:PORT, a
# secure context), signs in there with an e-mail code, registers a passkey through the API,
# reloads, and signs in with the passkey alone. It fails, naming the ceremony, if either
# fails; on success it prints the credential count, the sign counts and the aal.
#
#   scripts/passkey-browser-check.sh [path/to/langcamp]     (default: target/debug/langcamp)
#
# Needs Node.js 20 and Debian's chromium (on CI, installed when missing); playwright-core
# comes from the npm registry at the version of scripts/passkey-browser/package-lock.json
# and drives /usr/bin/chromium (no browser is downloaded).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CHECK=passkey-browser-check
source scripts/lib/common.sh

binary="$(langcamp_binary "${1:-}")"

if [ ! -x /usr/bin/chromium ]; then
    install_on_ci passkey-browser-check "Chromium (Debian package)" chromium ||
        fail "Debian's chromium is not installed (apt-get install chromium)"
fi
if ! command -v npm >/dev/null 2>&1; then
    install_on_ci passkey-browser-check "Node.js and npm (Debian packages)" nodejs npm ||
        fail "npm is not installed (Node.js 20 or later)"
fi

# Exactly the versions of package-lock.json; node_modules is not committed.
(cd scripts/passkey-browser && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
    fail "npm ci in scripts/passkey-browser failed"

SECONDS=0
work="$(mktemp -d)"
server=""
cleanup() {
    if [ -n "$server" ]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# Two free loopback ports: the page's (PUBLIC_ORIGIN) and the API's.
read -r page_port api_port < <(node -e '
const net = require("net");
const a = net.createServer().listen(0, "127.0.0.1", () => {
  const b = net.createServer().listen(0, "127.0.0.1", () => {
    console.log(a.address().port, b.address().port);
    a.close(); b.close();
  });
});')

unset DATABASE_URL MAIL_HOST METRICS_TOKEN LOG_FORMAT
export DATA_DIR="$work/data"
export DATABASE_URL="sqlite://$DATA_DIR/langcamp.db?mode=rwc"
export PUBLIC_ORIGIN="http://localhost:$page_port"
export HOST=127.0.0.1 PORT="$api_port" RUST_LOG=warn
export JWT_SECRET="passkey-browser-check-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
mkdir -p "$DATA_DIR"
"$binary" serve >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$api_port/ready" >/dev/null 2>&1 && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
done
curl -sf "http://127.0.0.1:$api_port/ready" >/dev/null 2>&1 || {
    cat "$work/server.log" >&2
    fail "langcamp serve did not become ready on port $api_port"
}
echo "passkey-browser-check: langcamp serve on port $api_port with PUBLIC_ORIGIN=$PUBLIC_ORIGIN"

API_URL="http://localhost:$api_port" PAGE_PORT="$page_port" MAIL_DIR="$DATA_DIR/mail" \
    node scripts/passkey-browser/check.mjs || {
    echo "--- langcamp serve's log" >&2
    tail -n 40 "$work/server.log" >&2
    fail "a passkey ceremony in Chromium failed (the line above names it)"
}
echo "passkey-browser-check: passed in ${SECONDS}s (server start to browser exit)"
