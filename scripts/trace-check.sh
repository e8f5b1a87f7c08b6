#!/usr/bin/env bash
# Traces across a proxy (CONTRACT §23): two `langcamp serve` instances on one PostgreSQL
# database behind nginx with deploy/nginx-langcamp.conf (addresses and the listen line
# replaced by loopback ones, as scripts/rolling-restart.sh does), exporting to an OTLP/HTTP
# receiver built on the OpenTelemetry project's own protocol definitions
# (scripts/otlp_receiver.py, `opentelemetry-proto` from PyPI). Requests sent through nginx
# with a `traceparent` must arrive as an instance's SERVER span under that parent, those
# that read the database with PostgreSQL spans under them, from both instances.
#
#   scripts/trace-check.sh [path/to/langcamp]   (default: target/debug/langcamp)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin="$(realpath "${1:-target/debug/langcamp}")"
PATH="$PATH:/usr/sbin:/sbin"
log() { echo "trace-check: $*" >&2; }

if ! command -v nginx >/dev/null 2>&1 || ! command -v psql >/dev/null 2>&1; then
  log "installing nginx and postgresql-client with apt-get"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx postgresql-client >/dev/null
fi
venv="${OTEL_VENV:-target/otel-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import opentelemetry.proto' 2>/dev/null; then
  log "installing opentelemetry-proto into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "opentelemetry-proto>=1.27,<2"
fi

pg_url="$(scripts/postgres-test-server.sh)"
work="$(mktemp -d /tmp/langcamp-trace.XXXXXX)"
chmod 755 "$work"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
database="lc_trace_$(date +%s)_$$"
pids=()
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  psql "$pg_url" -qAtc "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1 || true
  if [ "$status" -ne 0 ]; then
    for f in "$work"/*.log; do echo "--- $f" >&2; tail -n 20 "$f" >&2 || true; done
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

psql "$pg_url" -qAtc "CREATE DATABASE $database" >/dev/null
export DATABASE_URL="${pg_url%/*}/$database" JWT_SECRET="trace-check-secret-0123456789abcdef"
export HOST=127.0.0.1 RUST_LOG="warn" TRUSTED_PROXIES="127.0.0.0/8,::1/128"
unset MAIL_HOST SHUTDOWN_DRAIN LOG_FORMAT FILE_STORE OTEL_TRACES_SAMPLER OTEL_TRACES_SAMPLER_ARG
DATA_DIR="$work/seed" "$bin" migrate >"$work/migrate.log" 2>&1

receiver_port="$(free_port)"
"$venv/bin/python" scripts/otlp_receiver.py serve "$receiver_port" "$work/spans.jsonl" >"$work/receiver.log" 2>&1 &
pids+=($!)
export OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$receiver_port" OTEL_SERVICE_NAME=langcamp

port_a="$(free_port)"; port_b="$(free_port)"; port_proxy="$(free_port)"
for instance in a:"$port_a" b:"$port_b"; do
  name="${instance%%:*}" port="${instance#*:}"
  mkdir -p "$work/$name"
  PORT="$port" DATA_DIR="$work/$name" "$bin" serve >"$work/$name.log" 2>&1 &
  pids+=($!)
done
for port in "$port_a" "$port_b"; do
  for _ in $(seq 1 300); do curl -sf -o /dev/null "http://127.0.0.1:$port/ready" && break; sleep 0.1; done
done

mkdir -p "$work/nginx/tmp"; chmod 777 "$work/nginx/tmp"
python3 - deploy/nginx-langcamp.conf "$work/nginx/langcamp.conf" "$port_a" "$port_b" "$port_proxy" <<'PY'
import sys
source, target, a, b, port = sys.argv[1:]
text = open(source).read()
for old, new in [("10.0.1.11:3000", f"127.0.0.1:{a}"), ("10.0.1.12:3000", f"127.0.0.1:{b}"),
                 ("listen 443 ssl;", f"listen 127.0.0.1:{port};")]:
    if text.count(old) != 1:
        sys.exit(f"trace-check: {source} must hold {old!r} exactly once")
    text = text.replace(old, new)
text = "\n".join(l for l in text.split("\n") if not l.strip().startswith("ssl_certificate"))
open(target, "w").write(text)
PY
cat >"$work/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx-error.log notice;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $work/nginx/tmp/body;
    proxy_temp_path $work/nginx/tmp/proxy;
    fastcgi_temp_path $work/nginx/tmp/fastcgi;
    uwsgi_temp_path $work/nginx/tmp/uwsgi;
    scgi_temp_path $work/nginx/tmp/scgi;
    include $work/nginx/langcamp.conf;
}
CONF
nginx -e "$work/nginx-error.log" -p "$work/nginx" -c "$work/nginx/nginx.conf" -g 'daemon off;' >"$work/nginx.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:$port_proxy/health" && break; sleep 0.1; done

# Through nginx, each with a traceparent of its own: code requests (they write and read
# PostgreSQL) and course lists, enough of each to reach both instances.
python3 - "$port_proxy" "$work/sent.json" <<'PY'
import json, os, sys, urllib.request
port, out = sys.argv[1], sys.argv[2]
sent = []
for n in range(8):
    trace_id, parent = os.urandom(16).hex(), os.urandom(8).hex()
    if n % 2 == 0:
        path, name, body = "/auth/otp/request", "POST /auth/otp/request", json.dumps({"email": f"trace{n}@example.com"}).encode()
    else:
        path, name, body = "/courses", "GET /courses", None
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method="POST" if body else "GET",
        headers={"traceparent": f"00-{trace_id}-{parent}-01", "Content-Type": "application/json",
                 "X-Forwarded-For": f"10.77.0.{n + 1}"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200, (path, answer.status)
    sent.append({"request": f"{name} #{n}", "name": name, "trace_id": trace_id, "parent_span_id": parent,
                 "database": body is not None})
json.dump(sent, open(out, "w"))
PY

# The instances export within a second of a span's end; give them a few.
for _ in $(seq 1 100); do
  if "$venv/bin/python" scripts/otlp_receiver.py check "$work/spans.jsonl" "$work/sent.json" >"$work/check.log" 2>&1; then
    cat "$work/check.log"
    exit 0
  fi
  sleep 0.2
done
cat "$work/check.log" >&2
exit 1
