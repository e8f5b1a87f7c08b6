#!/usr/bin/env bash
# The README's sign-in walkthrough, run word for word against a served instance, so the
# first page a newcomer reads cannot rot. Every ```sh block of the README section
# "Signing in (curl)" runs, in order, in one shell (variables carry over), in a fresh
# folder where `langcamp serve` runs with the defaults (SQLite and mail under ./data).
# The one change made to the text: `localhost:3000` becomes the free port the server got.
#
#   scripts/readme-walkthrough.sh [path/to/langcamp]     (default: target/debug/langcamp)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
bin="$(realpath "${1:-target/debug/langcamp}")"
command -v jq >/dev/null || { echo "installing jq" >&2; (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq) >/dev/null; }

work="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
cd "$work"
# The README's defaults: no DATABASE_URL, DATA_DIR or MAIL_HOST from the caller's setting.
unset DATABASE_URL DATA_DIR MAIL_HOST METRICS_TOKEN LOG_FORMAT
export HOST=127.0.0.1 PORT="$port" RUST_LOG=warn
"$bin" serve >"$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$port/ready" >/dev/null || { echo "the server did not become ready" >&2; cat "$work/server.log" >&2; exit 1; }

# The README's blocks, each followed by a marker that closes its output file.
python3 - "$root/README.md" "$port" >"$work/walkthrough.sh" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
section = text.split("## Signing in (curl)", 1)[1].split("\n## ", 1)[0]
blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
if len(blocks) < 4:
    sys.exit(f"expected 4 sh blocks in the README walkthrough, found {len(blocks)}")
print("set -euo pipefail")
for i, block in enumerate(blocks, 1):
    block = block.replace("localhost:3000", f"localhost:{sys.argv[2]}")
    if "data/mail" in block:
        # A person reads the mail seconds later; the worker needs a moment to write it.
        print('for _ in $(seq 1 100); do ls data/mail/*.eml >/dev/null 2>&1 && break; sleep 0.1; done')
    print(f"echo '--- block {i}' >&2")
    print("{\n" + block + "} > out." + str(i))
PY
bash "$work/walkthrough.sh"

fail() { echo "README walkthrough: $*" >&2; for f in out.*; do echo "== $f" >&2; cat "$f" >&2; done; exit 1; }
grep -q '"isSuccess":true' out.1 || fail "the code request did not succeed"
grep -qxE '[0-9]{6}' out.2 || fail "the one-line grep did not print a 6-digit code"
[ "$(jq -r .isSuccess signin.json)" = true ] || fail "verify did not succeed"
[ "$(grep -o '"isSuccess":true' out.3 | wc -l)" -eq 2 ] || fail "complete-registration or /me failed"
grep -q '"email":"ana@example.com"' out.3 || fail "/me did not answer Ana"
[ "$(jq -r .isSuccess refresh.json)" = true ] || fail "refresh did not succeed"
grep -q '"isSuccess":true' out.4 || fail "logout did not succeed"
# And logout did what the README says: the access token and the refresh chain are over.
me=$(curl -s -o /dev/null -w '%{http_code}' "localhost:$port/me" -H "authorization: Bearer $(jq -r .data.accessToken refresh.json)")
[ "$me" = 401 ] || fail "the access token still works after logout ($me)"
echo "README walkthrough: 4 blocks ran word for word; request, grep, verify, register, /me, refresh, logout all passed"
