#!/usr/bin/env bash
# The resident memory of the Langcamp container under load: the figures behind the memory
# request and limit in deploy/kubernetes/ (docs/OPERATIONS.md, "Containers", has a run's
# table). Not a CI step (scripts/container-check.sh runs a short load and holds the peak
# under the request); run it by hand after a change that may move memory, on a machine
# where nothing else runs.
#
#   scripts/container-rss.sh [--seconds N] [--image NAME]      (defaults: 60, localhost/langcamp:dev)
#
# For each backend, PostgreSQL (the test server of scripts/postgres-test-server.sh, a
# database of its own) and SQLite (on a volume), one container as the Deployment runs it
# (read-only root, no capabilities, host network, the image's own settings), after
# `langcamp seed --demo`, through these phases:
#
#   idle      just ready, one user signed in;
#   mixed     scripts/rolling-load.py for N s: 16 signed-in users, 8 readers (GET /me,
#             GET /courses), 4 submitters (placement test submissions), 2 sign-ins at a time;
#   courses   wrk, 2 threads, 256 connections, N/2 s on GET /courses;
#   me        wrk, 2 threads, 256 connections, N/2 s on GET /me, signed in;
#   dashboard wrk, 1 thread, 16 connections, N/4 s on GET /admin/dashboard, as an admin;
#   uploads   32 uploads of 20 MB (UPLOAD_MAX_BYTES), 16 at a time, each from an address
#             of its own (POST /storage/upload).
#
# The PostgreSQL run keeps files in the S3 test server (scripts/s3-test-server.sh), as the
# Deployment does in an object store; the SQLite run on the volume (FILE_STORE=local).
#
# Before each phase the process's peak (VmHWM) is reset through /proc/PID/clear_refs; after
# it, the script prints VmRSS, VmHWM, the container cgroup's peak
# (memory.max_usage_in_bytes, cgroup v1: it counts the page cache the container brought in,
# which the kernel reclaims before it kills for the limit, but not pages another cgroup
# brought in first, such as the binary's) and the CPU the server used in the phase, in
# cores (its user + system time over the phase's wall time; the load generator runs on
# the same machine, so this is what the server got, not what it could use).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/container.sh

seconds=60
image=localhost/langcamp:dev
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --image) image="$2"; shift 2 ;;
    *) echo "usage: $0 [--seconds N] [--image NAME]" >&2; exit 2 ;;
  esac
done
for tool in podman runc wrk curl jq psql; do
  command -v "$tool" >/dev/null || { echo "container-rss: $tool is missing (Debian packages)" >&2; exit 1; }
done
pm image exists "$image" || { echo "container-rss: no image $image (deploy/container/build.sh)" >&2; exit 1; }

LC_PREFIX="lc-rss-$$"
work="$(mktemp -d /tmp/langcamp-container-rss.XXXXXX)"
pg_url="$(scripts/postgres-test-server.sh)"
s3_url="$(scripts/s3-test-server.sh)"
database="lc_rss_$$"
cleanup() {
  for c in $(podman ps -a --format '{{.Names}}' | grep "^$LC_PREFIX-" || true); do pm rm -f -v -t 0 "$c" >/dev/null 2>&1 || true; done
  for v in $(podman volume ls --format '{{.Name}}' | grep "^$LC_PREFIX-" || true); do pm volume rm -f "$v" >/dev/null 2>&1 || true; done
  psql "$pg_url" -qAtc "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
secret="container-rss-secret-$$-0123456789abcdef"

cgroup_file() {  # cgroup_file PID CONTROLLER NAME: a file of the process's cgroup
  local path
  path="$(awk -F: -v c="$2" '$2 == c {print $3}' "/proc/$1/cgroup")"
  echo "/sys/fs/cgroup/$2$path/$3"
}
# The process's CPU time (user + system) in nanoseconds, from /proc/PID/stat.
cpu_ns() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.0f", ($12 + $13) * 1e9 / hz }' "/proc/$1/stat"; }
reset_peaks() {  # reset_peaks PID: VmHWM, the cgroup's memory peak, the phase's CPU clock
  echo 5 >"/proc/$1/clear_refs"
  echo 0 >"$(cgroup_file "$1" memory memory.max_usage_in_bytes)" 2>/dev/null || true
  phase_cpu="$(cpu_ns "$1")"
  phase_start="$(date +%s.%N)"
}
report() {  # report BACKEND PHASE PID
  local cg cpu
  cg="$(cat "$(cgroup_file "$3" memory memory.max_usage_in_bytes)" 2>/dev/null || echo 0)"
  cpu="$(awk -v used="$(( $(cpu_ns "$3") - phase_cpu ))" -v t0="$phase_start" -v t1="$(date +%s.%N)" \
    'BEGIN { printf "%.2f", used / 1e9 / (t1 - t0) }')"
  awk -v b="$1" -v p="$2" -v rss="$(rss_kib "$3")" -v hwm="$(peak_rss_kib "$3")" -v cg="$cg" -v cpu="$cpu" 'BEGIN {
    printf "| %s | %s | %.1f | %.1f | %s | %s |\n", b, p, rss / 1024, hwm / 1024,
      (cg > 0 ? sprintf("%.1f", cg / 1048576) : "n/a"), cpu }'
}

measure() {  # measure sqlite|postgres
  local backend="$1" port name vol env=()
  port="$(free_port)"
  name="$LC_PREFIX-$backend"
  vol="$LC_PREFIX-$backend"
  pm volume create "$vol" >/dev/null
  if [ "$backend" = postgres ]; then
    psql "$pg_url" -qAtc "CREATE DATABASE $database" >/dev/null
    curl -sf -X PUT "$s3_url/lc-rss-$$" >/dev/null
    env=(-e DATABASE_URL="${pg_url%/*}/$database" -e FILE_STORE="s3://lc-rss-$$/files"
      -e S3_ENDPOINT="$s3_url" -e S3_ACCESS_KEY_ID=test -e S3_SECRET_ACCESS_KEY=test)
  fi
  local common=("${PODMAN_RUN[@]}" --network host --read-only --read-only-tmpfs=false
    --tmpfs /tmp:rw,size=64m,mode=1777 --cap-drop all --security-opt no-new-privileges
    -v "$vol:/var/lib/langcamp" "${env[@]}" -e JWT_SECRET="$secret")
  pm run --rm "${common[@]}" "$image" migrate >/dev/null 2>&1
  pm run --rm "${common[@]}" "$image" seed --demo >/dev/null 2>&1
  pm run --rm "${common[@]}" "$image" users create rss-admin@example.org --role admin --name "RSS Admin" >/dev/null 2>&1
  pm run -d --name "$name" "${common[@]}" -e HOST=127.0.0.1 -e PORT="$port" \
    -e TRUSTED_PROXIES=127.0.0.0/8 -e RUST_LOG=warn "$image" >/dev/null
  wait_ready "$name" "$port"
  local pid mail token admin
  pid="$(host_pid "$name")"
  mail="$(volume_dir "$vol")/mail"
  token="$(sign_in "$port" "rss-user@example.org" "$mail")"
  # The admin works at assurance level 2 only (staff must have a second factor, §20).
  admin="$(sign_in "$port" "rss-admin@example.org" "$mail")"
  admin="$(with_totp "$port" "$admin")"
  phase_cpu="$(cpu_ns "$pid")"; phase_start="$(date +%s.%N)"; sleep 5
  report "$backend" "idle (5 s)" "$pid"

  reset_peaks "$pid"
  python3 scripts/rolling-load.py --port "$port" --run "rss$$$backend" --mail-dir "$mail" \
    --users 16 --readers 8 --submitters 4 --signers 2 --max-seconds "$seconds" \
    --out "$work/$backend-mixed.json" 2>"$work/$backend-mixed.log"
  report "$backend" "mixed ($(jq .requests "$work/$backend-mixed.json") requests, $(jq .failed "$work/$backend-mixed.json") failed)" "$pid"

  reset_peaks "$pid"
  wrk -t2 -c256 -d"$((seconds / 2))s" -s scripts/bench/request.lua "http://127.0.0.1:$port/courses" -- GET >"$work/$backend-courses.txt"
  report "$backend" "GET /courses, 256 connections ($(awk '/Requests\/sec/ {print int($2)}' "$work/$backend-courses.txt") req/s)" "$pid"

  reset_peaks "$pid"
  wrk -t2 -c256 -d"$((seconds / 2))s" -s scripts/bench/request.lua "http://127.0.0.1:$port/me" -- GET "$token" >"$work/$backend-me.txt"
  report "$backend" "GET /me, 256 connections ($(awk '/Requests\/sec/ {print int($2)}' "$work/$backend-me.txt") req/s)" "$pid"

  reset_peaks "$pid"
  wrk -t1 -c16 -d"$((seconds / 4))s" -s scripts/bench/request.lua "http://127.0.0.1:$port/admin/dashboard" -- GET "$admin" >"$work/$backend-dash.txt"
  report "$backend" "GET /admin/dashboard, 16 connections ($(awk '/Requests\/sec/ {print int($2)}' "$work/$backend-dash.txt") req/s)" "$pid"

  reset_peaks "$pid"
  # A PDF by its first bytes, then zeros up to UPLOAD_MAX_BYTES.
  { printf '%%PDF-1.4\n'; head -c $((20971520 - 9)) /dev/zero; } >"$work/upload.pdf"
  seq 1 32 | xargs -P 16 -I{} curl -s -o /dev/null -w '%{http_code}\n' -H 'X-Forwarded-For: 10.200.0.{}' \
    -F "file=@$work/upload.pdf;type=application/pdf" "http://127.0.0.1:$port/storage/upload" >"$work/$backend-uploads.txt"
  report "$backend" "uploads, 16 at a time ($(grep -c '^201$' "$work/$backend-uploads.txt") of 32 stored)" "$pid"

  # Over the whole run: the peak since the last reset is the dashboard's; VmHWM over all
  # phases is the largest of the rows.
  pm stop -t 45 "$name" >/dev/null
}

echo "Image $image ($(pm image inspect --format '{{.Size}}' "$image" | awk '{printf "%.1f MB", $1 / 1e6}')); phases of $seconds s; $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| backend | phase | VmRSS after (MiB) | VmHWM in the phase (MiB) | cgroup peak (MiB) | CPU (cores) |"
echo "|---|---|---:|---:|---:|---:|"
measure postgres
measure sqlite
