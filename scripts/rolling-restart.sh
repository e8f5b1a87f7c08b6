#!/usr/bin/env bash
# A rolling restart with zero failed requests (issue #35), with real proxies: two
# `langcamp serve` instances (distinct ports, the same JWT_SECRET and PostgreSQL
# database) behind nginx with deploy/nginx-langcamp.conf, then behind HAProxy with
# deploy/haproxy-langcamp.cfg, each file as docs/OPERATIONS.md shows it, with only the
# addresses, the listen line and the certificate lines replaced by loopback ones.
#
#   scripts/rolling-restart.sh [path/to/langcamp] [nginx|haproxy|both]
#                                      (defaults: target/debug/langcamp, both)
#
# For each proxy, on a fresh database (`langcamp seed --demo` for courses and placement
# tests): scripts/rolling-load.py signs users in through the proxy (codes read from the
# .eml mail of DATA_DIR/mail) and keeps reading (GET /me, GET /courses) and writing
# (placement submissions, OTP sign-ins of new addresses) while each instance in turn is
# restarted with the documented procedure: SIGTERM, wait for the exit, start it again,
# wait until its /ready answers 200 and the proxy routes requests to it (its own request
# counter on /metrics grows), then the next one. The step fails unless every request got
# its expected answer (no 502, no 503, no connection error) and every submission answered
# 201 is stored exactly once, and every verified sign-in created its one user (checked in
# the database against the client's record).
#
# Everything listens on 127.0.0.1 only; the load is bounded in time and count; what the
# script starts it stops, and the database it creates it drops. nginx and HAProxy are
# installed with apt-get when missing; PostgreSQL comes from scripts/postgres-test-server.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
bin="$(realpath "${1:-target/debug/langcamp}")"
which_proxies="${2:-both}"
case "$which_proxies" in
  nginx|haproxy) proxies=("$which_proxies") ;;
  both) proxies=(nginx haproxy) ;;
  *) echo "usage: $0 [path/to/langcamp] [nginx|haproxy|both]" >&2; exit 2 ;;
esac
[ -x "$bin" ] || { echo "rolling-restart: no langcamp binary at $bin (cargo build -p langcamp-cli)" >&2; exit 1; }

log() { echo "rolling-restart: $*" >&2; }
PATH="$PATH:/usr/sbin:/sbin"   # nginx and haproxy live there

install_missing() {
  local missing=()
  for proxy in "${proxies[@]}"; do
    command -v "$proxy" >/dev/null 2>&1 || missing+=("$proxy")
  done
  command -v psql >/dev/null 2>&1 || missing+=(postgresql-client)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  [ "${#missing[@]}" -eq 0 ] && return
  log "installing ${missing[*]} with apt-get"
  local sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
install_missing

pg_url="$(scripts/postgres-test-server.sh)"
work="$(mktemp -d /tmp/langcamp-rolling.XXXXXX)"
chmod 755 "$work"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# What is running, for the cleanup: pids by name, and the database of the current run.
declare -A pids=()
database=""
stop_pid() {  # stop_pid NAME: SIGTERM, then wait (SIGKILL after 45 s)
  local pid="${pids[$1]:-}"
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 450); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  unset "pids[$1]"
}
drop_database() {
  [ -n "$database" ] || return 0
  psql "$pg_url" -qAtc "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1 || true
  database=""
}
cleanup() {
  local status=$?
  for name in "${!pids[@]}"; do stop_pid "$name"; done
  drop_database
  if [ "$status" -ne 0 ] && [ -d "$work" ]; then
    for f in "$work"/*/*.log "$work"/*/*/*-error.log "$work"/*/haproxy/haproxy.log; do
      [ -s "$f" ] || continue
      echo "--- last lines of ${f#"$work"/}" >&2
      grep -v ' INFO langcamp_http::access' "$f" | tail -n 15 >&2 || true
    done
    # The proxy's own record of each failed answer: which instance, what it answered.
    for f in "$work"/*/nginx/access.log; do
      [ -s "$f" ] || continue
      echo "--- answers of 5xx in ${f#"$work"/}" >&2
      awk '$2 >= 500' "$f" | head -n 20 >&2 || true
    done
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The documented file with loopback addresses: each replacement must happen exactly as
# many times as expected, so a changed file fails here rather than testing something else.
rewrite() {  # rewrite SOURCE TARGET OLD=NEW... ; NEW "" deletes lines starting with OLD
  python3 - "$@" <<'PY'
import sys
source, target, *pairs = sys.argv[1:]
text = open(source).read()
for pair in pairs:
    old, new = pair.split("=", 1)
    if new == "":
        lines = text.split("\n")
        kept = [l for l in lines if not l.strip().startswith(old)]
        if len(kept) == len(lines):
            sys.exit(f"rolling-restart: {source} has no line starting with {old!r}")
        text = "\n".join(kept)
    else:
        if text.count(old) != 1:
            sys.exit(f"rolling-restart: {source} must hold {old!r} exactly once")
        text = text.replace(old, new)
open(target, "w").write(text)
PY
}

start_instance() {  # start_instance NAME PORT
  local name="$1" port="$2"
  mkdir -p "$run/$name"
  (
    export PORT="$port" DATA_DIR="$run/$name"
    exec "$bin" serve >>"$run/$name.log" 2>&1
  ) &
  pids[$name]=$!
}

instance_ready() {  # instance_ready NAME PORT: /ready answers 200, within 60 s
  for _ in $(seq 1 600); do
    curl -sf -o /dev/null "http://127.0.0.1:$2/ready" && return 0
    kill -0 "${pids[$1]}" 2>/dev/null || { log "instance $1 exited while starting"; return 1; }
    sleep 0.1
  done
  log "instance $1 never answered /ready with 200"
  return 1
}

served_by() {  # served_by PORT: the requests the instance has answered (not /health, /ready)
  curl -sf -H "authorization: Bearer $METRICS_TOKEN" "http://127.0.0.1:$1/metrics" \
    | awk '/^langcamp_http_requests_total/ { n += $NF } END { printf "%d\n", n }'
}

routed_to() {  # routed_to NAME PORT: the proxy sends it requests, within 30 s
  local before
  before="$(served_by "$2")"
  for _ in $(seq 1 300); do
    [ "$(served_by "$2")" -gt "$before" ] && return 0
    sleep 0.1
  done
  log "the proxy sent no request to instance $1 within 30 s of its /ready answering 200"
  return 1
}

start_proxy() {  # start_proxy nginx|haproxy PROXY_PORT PORT_A PORT_B
  local proxy="$1" port="$2" a="$3" b="$4"
  case "$proxy" in
    nginx)
      mkdir -p "$run/nginx/tmp"
      chmod 777 "$run/nginx/tmp"
      rewrite deploy/nginx-langcamp.conf "$run/nginx/langcamp.conf" \
        "10.0.1.11:3000=127.0.0.1:$a" "10.0.1.12:3000=127.0.0.1:$b" \
        "listen 443 ssl;=listen 127.0.0.1:$port;" "ssl_certificate="
      cat >"$run/nginx/nginx.conf" <<EOF
worker_processes 2;
pid $run/nginx/nginx.pid;
error_log $run/nginx/nginx-error.log notice;
events { worker_connections 1024; }
http {
    log_format rolling '\$msec \$status "\$request" upstream=\$upstream_addr \$upstream_status \$request_time';
    access_log $run/nginx/access.log rolling;
    client_body_temp_path $run/nginx/tmp/body;
    proxy_temp_path $run/nginx/tmp/proxy;
    fastcgi_temp_path $run/nginx/tmp/fastcgi;
    uwsgi_temp_path $run/nginx/tmp/uwsgi;
    scgi_temp_path $run/nginx/tmp/scgi;
    include $run/nginx/langcamp.conf;
}
EOF
      nginx -t -q -e "$run/nginx/nginx-error.log" -p "$run/nginx" -c "$run/nginx/nginx.conf"
      nginx -e "$run/nginx/nginx-error.log" -p "$run/nginx" -c "$run/nginx/nginx.conf" \
        -g 'daemon off;' >"$run/nginx/nginx.log" 2>&1 &
      pids[proxy]=$!
      ;;
    haproxy)
      mkdir -p "$run/haproxy"
      rewrite deploy/haproxy-langcamp.cfg "$run/haproxy/haproxy.cfg" \
        "10.0.1.11:3000=127.0.0.1:$a" "10.0.1.12:3000=127.0.0.1:$b" \
        "bind :443 ssl crt /etc/haproxy/school.example.pem=bind 127.0.0.1:$port" \
        "log /dev/log local0=log stdout format short local0 notice" \
        "stats socket /run/haproxy/admin.sock=stats socket $run/haproxy/admin.sock"
      haproxy -q -c -f "$run/haproxy/haproxy.cfg"
      haproxy -db -f "$run/haproxy/haproxy.cfg" >"$run/haproxy/haproxy.log" 2>&1 &
      pids[proxy]=$!
      ;;
  esac
  for _ in $(seq 1 100); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/health" && return 0
    sleep 0.1
  done
  log "$proxy did not answer on 127.0.0.1:$port"
  return 1
}

one_run() {  # one_run nginx|haproxy
  local proxy="$1"
  run="$work/$proxy"
  mkdir -p "$run"
  database="lc_rolling_$(date +%s)_$$"
  psql "$pg_url" -qAtc "CREATE DATABASE $database" >/dev/null
  export DATABASE_URL="${pg_url%/*}/$database"
  export JWT_SECRET="rolling-restart-secret-0123456789abcdef" METRICS_TOKEN="rolling-$$-$RANDOM"
  export HOST=127.0.0.1 RUST_LOG="info,sqlx=warn" TRUSTED_PROXIES="127.0.0.0/8,::1/128"
  unset MAIL_HOST SHUTDOWN_DRAIN LOG_FORMAT FILE_STORE
  DATA_DIR="$run/seed" "$bin" migrate >"$run/migrate.log" 2>&1
  DATA_DIR="$run/seed" "$bin" seed --demo >"$run/seed.log" 2>&1

  local port_a port_b port_proxy
  port_a="$(free_port)"; port_b="$(free_port)"; port_proxy="$(free_port)"
  declare -A port=([a]="$port_a" [b]="$port_b")
  start_instance a "$port_a"
  start_instance b "$port_b"
  instance_ready a "$port_a"
  instance_ready b "$port_b"
  start_proxy "$proxy" "$port_proxy" "$port_a" "$port_b"
  psql "$DATABASE_URL" -qAtc "SELECT id FROM test_results" | sort >"$run/results-before.txt"

  log "$proxy on 127.0.0.1:$port_proxy, instances a :$port_a and b :$port_b; starting the load"
  python3 scripts/rolling-load.py --port "$port_proxy" --run "$proxy$$" \
    --mail-dir "$run/a/mail" --mail-dir "$run/b/mail" \
    --ready-file "$run/load-ready" --stop-file "$run/load-stop" --out "$run/summary.json" \
    --max-seconds 100 --max-requests 300000 2>"$run/load.log" &
  pids[load]=$!
  for _ in $(seq 1 600); do
    [ -e "$run/load-ready" ] && break
    kill -0 "${pids[load]}" 2>/dev/null || { cat "$run/load.log" >&2; log "the load client stopped while signing in"; return 1; }
    sleep 0.1
  done
  [ -e "$run/load-ready" ] || { log "the load client did not start within 60 s"; return 1; }
  sleep 3

  # The documented procedure, one instance at a time.
  local restarts=""
  for name in a b; do
    local t0=$SECONDS started
    started="$(date +%s.%N)"
    stop_pid "$name"
    local stopped_after
    stopped_after="$(python3 -c "import time; print(f'{time.time() - $started:.1f}')")"
    start_instance "$name" "${port[$name]}"
    instance_ready "$name" "${port[$name]}"
    routed_to "$name" "${port[$name]}"
    restarts+="$name stopped after ${stopped_after} s and took traffic again $(python3 -c "import time; print(f'{time.time() - $started:.1f}')") s after its SIGTERM; "
    log "instance $name restarted ($((SECONDS - t0)) s)"
  done
  sleep 3
  touch "$run/load-stop"
  wait "${pids[load]}" || { cat "$run/load.log" >&2; log "the load client failed"; unset "pids[load]"; return 1; }
  unset "pids[load]"

  psql "$DATABASE_URL" -qAtc "SELECT id FROM test_results" | sort >"$run/results-after.txt"
  psql "$DATABASE_URL" -qAtc "SELECT email FROM users WHERE email LIKE 'rolling-%'" | sort >"$run/users.txt"
  python3 - "$proxy" "$run" "$restarts" <<'PY'
import json, sys
proxy, run, restarts = sys.argv[1:]
s = json.load(open(f"{run}/summary.json"))
before = set(open(f"{run}/results-before.txt").read().split())
after = open(f"{run}/results-after.txt").read().split()
users = open(f"{run}/users.txt").read().split()
new = set(after) - before
answered = s["resultIds"]
problems = []
if s["failed"]:
    problems.append(f"{s['failed']} failed requests, first ones: {json.dumps(s['failures'][:10])}")
if len(answered) != len(set(answered)):
    problems.append("a result id was answered twice")
if set(answered) != new:
    problems.append(f"submissions answered 201: {len(answered)}, new rows in test_results: {len(new)} "
                    f"(answered, not stored: {len(set(answered) - new)}; stored, not answered: {len(new - set(answered))})")
if len(after) != len(set(after)) or len(after) != len(before) + len(new):
    problems.append("test_results lost or repeated rows")
if sorted(set(s["verifiedEmails"])) != sorted(users) or len(users) != len(s["verifiedEmails"]):
    problems.append(f"sign-ins verified: {len(s['verifiedEmails'])}, users created: {len(users)}")
if s["boundReached"]:
    problems.append("the load stopped on its own bound, before the restarts were over")
ops = s["byOperation"]
print(f"rolling restart behind {proxy}: {s['requests']} requests in {s['seconds']} s "
      f"(GET /me {ops['GET /me']}, GET /courses {ops['GET /courses']}, "
      f"submissions {ops['POST /proficiency-tests/{id}/submit']}, "
      f"code requests {ops['POST /auth/otp/request']}, code verifies {ops['POST /auth/otp/verify']}), "
      f"{s['failed']} failed; latency p50 {s['latencyMs']['p50']} ms, p99 {s['latencyMs']['p99']} ms, "
      f"max {s['latencyMs']['max']} ms")
print(f"  submissions: {len(answered)} answered 201, {len(new)} new rows in test_results, each answered id stored once; "
      f"sign-ins: {len(s['verifiedEmails'])} verified, {len(users)} users created")
print(f"  {restarts.strip().rstrip(';')}")
if problems:
    for p in problems:
        print(f"FAILED: {p}", file=sys.stderr)
    sys.exit(1)
PY

  stop_pid proxy
  stop_pid a
  stop_pid b
  drop_database
}

python3 - <<'PY'
import re, sys
doc = open("docs/OPERATIONS.md").read()
for path, lang in (("deploy/nginx-langcamp.conf", "nginx"), ("deploy/haproxy-langcamp.cfg", "haproxy")):
    if open(path).read() not in re.findall(r"```" + lang + r"\n(.*?)```", doc, re.S):
        sys.exit(f"docs/OPERATIONS.md must show {path} verbatim in a ```{lang} block")
PY

for proxy in "${proxies[@]}"; do
  one_run "$proxy"
done
echo "rolling restart: ${proxies[*]}: zero failed requests, every submission stored once"
