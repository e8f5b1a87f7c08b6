#!/usr/bin/env bash
# The HTTP benchmark of Langcamp (issue 10; results in docs/BENCHMARKS.md).
#
#   scripts/bench.sh                      # SQLite
#   scripts/bench.sh --postgres URL       # PostgreSQL (a server URL; the bench creates and
#                                         # drops its own database langcamp_http_bench)
# Options: --duration S (each wrk run, default 5), --runs N (measured runs per endpoint,
# default 3, after one warm-up), --soak S (the long submission run, default 60, 0 skips it),
# --scale full|tenth (default full), --keep (keep the data set and logs),
# --only 'METHOD /path' (measure just that endpoint, e.g. --only 'POST /auth/otp/request';
# several, comma-separated: --only 'POST /contact,POST /auth/otp/verify';
# --only 'GET /admin/exports/results.csv' measures the CSV export of every result instead:
# one streamed answer, its rows per second and the server's RSS idle and at its peak;
# --only 'staff writes' measures a burst of each staff write of issue 40, which the
# default run leaves out: POST /courses, PATCH /courses/{id}, POST /proficiency-tests,
# PATCH /proficiency-tests/{id}, POST /education-materials (JSON, no files),
# POST /education-materials/{id}/assign, PATCH /admin/users/{id}/profile,
# POST /contact/admin/{id}/reply, PATCH /contact/admin/{id}/status; each is an --only
# of its own too),
# --langcamp PATH (measure that `langcamp` binary, e.g. a copy of an earlier build, for a
# before/after comparison; the data set and the baselines still come from this checkout;
# an older build starts on it because langcamp ignores applied migrations it does not know,
# as in a rolling upgrade: a build of 927174b, before 0120/0130, ran GET /me and the staff
# writes with no non-2xx; it ignores the seeded admin's TOTP factor and level 2 claim),
# --returning (the one-time codes belong to students who already exist, so
# POST /auth/otp/verify measures a returning student's sign-in instead of a first one;
# adds as many users as codes to the data set, so use it with --only 'POST /auth/otp/verify'),
# --versus PATH (a second `langcamp` binary, e.g. a build of an earlier commit, served on
# the same data set beside the first: every measured run of an endpoint runs it on one,
# then on the other, in turns, and the table gets a row `(versus)` of its own; two builds
# compared in one interleaved run differ less by the machine's drift than two runs of
# bench.sh do; the seed then makes twice as many one-time codes; PostgreSQL only),
# --after-seed FILE (SQL run on the database once the data set is seeded, before the
# server starts: scripts/bench/without-0150.{postgres,sqlite}.sql takes away what migration
# 0150 adds to writes, so a run with it and one without give the lists' cost to writes;
# psql on PostgreSQL, python3's sqlite3 on SQLite),
# --webhook (issue #55: a webhook endpoint hearing result.created, at a `hello` receiver,
# so every submission queues a delivery and the worker sends it; compare a run with it to
# one without),
# --connections N (wrk's connections, default 64; e.g. --connections 1 for the latency of
# one request at a time, when the machine is not saturated: what a change adds to a
# request's own path rather than to the machine's capacity),
# --no-build (use the release binaries as they are, e.g. between --langcamp runs; with
# BENCH_BIN=target/debug, the dev builds of `cargo build -p langcamp-cli -p langcamp-bench
# --bins`, for a smoke run whose rates mean nothing).
#
# One run: builds the release binaries; seeds the data set (100k users, 1M results,
# 60 courses, 50 tests, one-time codes, a student and an admin signed in, the admin with
# a TOTP factor at assurance level 2 as staff must be); times
# `langcamp serve` from spawn to the first 200 of `GET /`; starts `langcamp serve` and the
# bare hyper baseline (`hello`, same runtime settings); then for each endpoint runs wrk
# (64 connections unless --connections) against the baseline and the endpoint alternately and prints, per
# endpoint, the median requests per second, the ratio to the baseline of the same
# interleaved runs, the median p50 and p99, non-2xx answers, "database is locked" lines in
# the server log, and the server's peak RSS (VmHWM, reset before each endpoint). The list
# endpoints also get a same-bytes baseline: `hello` sending the endpoint's own answer
# (fetched once) from memory, run interleaved too; its ratio is the second ratio column.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

PG=""
DURATION=5
RUNS=3
SOAK=60
SCALE=full
KEEP=0
ONLY=""
LANGCAMP=""
VERSUS=""
BUILD=1
WEBHOOK=0
AFTER_SEED=""
RETURNING=()
CONNECTIONS=64
THREADS=2
while [ $# -gt 0 ]; do
  case "$1" in
    --postgres) PG=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --soak) SOAK=$2; shift 2 ;;
    --scale) SCALE=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --only) ONLY=$2; shift 2 ;;
    --langcamp) LANGCAMP=$(realpath "$2"); shift 2 ;;
    --versus) VERSUS=$(realpath "$2"); shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --returning) RETURNING=(--otp-returning); shift ;;
    --webhook) WEBHOOK=1; shift ;;
    --connections) CONNECTIONS=$2; shift 2 ;;
    --after-seed) AFTER_SEED=$(realpath "$2"); shift 2 ;;
    -h|--help) sed -n '2,57p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

case "$CONNECTIONS" in
  ''|*[!0-9]*|0) echo "bench.sh: --connections takes a positive number" >&2; exit 2 ;;
esac
[ "$CONNECTIONS" -lt "$THREADS" ] && THREADS=$CONNECTIONS   # wrk wants a connection per thread
if [ -n "$VERSUS" ] && [ -z "$PG" ]; then
  # Two processes on one SQLite file share its single write lock, each waiting on the
  # other's transactions: they would measure each other, not themselves.
  echo "bench.sh: --versus needs --postgres" >&2
  exit 2
fi

if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y wrk >/dev/null
  else
    echo "bench.sh: wrk is missing (apt-get install -y wrk)" >&2
    exit 1
  fi
fi

if [ "$BUILD" = 1 ]; then
  echo "== building release binaries" >&2
  cargo build --release --quiet -p langcamp-cli -p langcamp-bench --bins
fi
# BENCH_BIN: where the binaries are (default the release build; e.g. target/debug with
# --no-build for a quick look, whose rates mean nothing but whose memory curve does).
BIN=${BENCH_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release}
LANGCAMP=${LANGCAMP:-$BIN/langcamp}
for helper in api-bench hello; do
  [ -x "$BIN/$helper" ] || {
    echo "bench.sh: no $BIN/$helper: run without --no-build, or point BENCH_BIN at a build that has it (BENCH_BIN=target/debug after cargo build -p langcamp-bench --bins)" >&2
    exit 1
  }
done

# A folder of this run's own unless BENCH_DIR names one: two benchmarks on one machine (on
# other BENCH_PORTs) must not delete each other's data when one ends.
if [ -n "${BENCH_DIR:-}" ]; then
  WORK=$BENCH_DIR
  rm -rf "$WORK"
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/langcamp-http-bench.XXXXXX")
fi
[ "$KEEP" = 1 ] && echo "== data set and logs in $WORK (--keep)" >&2
SECRET=langcamp-bench-secret-0123456789abcdef
# BENCH_PORT: the first of the five ports used (the server, then the baselines, then the
# --versus server), so two benchmarks on one machine do not meet.
PORT=${BENCH_PORT:-18080}
BASE_PORT=$((PORT + 1))
VERSUS_PORT=$((PORT + 4))
if [ -n "$PG" ]; then
  base=${PG%%\?*}
  query=""
  case "$PG" in *\?*) query="?${PG#*\?}" ;; esac
  DB_URL="${base%/*}/langcamp_http_bench$query"
  BACKEND=postgres
else
  DB_URL="sqlite://$WORK/langcamp.db?mode=rwc"
  BACKEND=sqlite
fi

SERVER_PID=""
VERSUS_PID=""
HELLO_PID=""
SAME_PIDS=""
cleanup() {
  # Not under errexit: `wait` returns the killed server's status.
  set +e
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  [ -n "$VERSUS_PID" ] && kill "$VERSUS_PID" 2>/dev/null && wait "$VERSUS_PID" 2>/dev/null
  [ -n "$HELLO_PID" ] && kill "$HELLO_PID" 2>/dev/null && wait "$HELLO_PID" 2>/dev/null
  for pid in $SAME_PIDS; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  if [ "$KEEP" = 0 ]; then
    [ -n "$PG" ] && "$BIN/api-bench" drop --database-url "$DB_URL" || true
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT

echo "== seeding ($BACKEND, $SCALE)" >&2
# With --versus each server takes its own codes: twice as many.
OTP_CODES_SEEDED=200000
[ -n "$VERSUS" ] && OTP_CODES_SEEDED=400000
"$BIN/api-bench" seed --database-url "$DB_URL" --secret "$SECRET" --scale "$SCALE" --out "$WORK" \
  --otp-codes $OTP_CODES_SEEDED ${RETURNING[@]+"${RETURNING[@]}"}
# shellcheck disable=SC1091
. "$WORK/bench.env"
echo '{"firstName":"Ana","lastName":"Silva","email":"ana.silva@example.com","message":"Do you have evening classes in German?","source":"bench"}' >"$WORK/contact.json"
if [ -n "$AFTER_SEED" ]; then
  echo "== after the seed: $AFTER_SEED" >&2
  if [ -n "$PG" ]; then
    psql -q -v ON_ERROR_STOP=1 "$DB_URL" -f "$AFTER_SEED"
  else
    python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.executescript(open(sys.argv[2]).read()); db.close()' \
      "$WORK/langcamp.db" "$AFTER_SEED"
  fi
fi

echo "== start-up to first answer" >&2
STARTUP=$("$BIN/api-bench" startup --bin "$LANGCAMP" --database-url "$DB_URL" \
  --secret "$SECRET" --data-dir "$WORK/data" --port $PORT --runs 5)

LOG=$WORK/server.log
# The admin's factor was checked once, at the seed; the CSV export wants a check within
# STEP_UP_MAX_AGE (default 10m, contract §20), which a long run may outlast, so the
# window is as long as the seeded tokens (JWT_EXPIRATION 6h in api-bench). The policy
# stays the default (STAFF_SECOND_FACTOR=required); an older build ignores the setting.
# --webhook: an endpoint hearing result.created at a receiver (`hello`, answering 200 at
# once) on the port after the --versus server's, which the server may call over http://.
# BENCH_WEBHOOK_URL instead points the endpoint elsewhere: at a port where nothing listens
# (http://127.0.0.1:9/hooks), every delivery is refused, the endpoint rests (backing off to
# 5 minutes) and the worker sends next to nothing, so the run measures what queuing the
# event costs the submission itself, apart from the sending.
WEBHOOK_PORT=$((PORT + 5))
if [ "$WEBHOOK" = 1 ]; then
  if [ -z "${BENCH_WEBHOOK_URL:-}" ]; then
    "$BIN/hello" $WEBHOOK_PORT &
    SAME_PIDS+=" $!"
  fi
  "$BIN/api-bench" webhook --database-url "$DB_URL" --secret "$SECRET" \
    --url "${BENCH_WEBHOOK_URL:-http://127.0.0.1:$WEBHOOK_PORT/hooks}" >&2
fi
serve() {
  DATABASE_URL=$DB_URL JWT_SECRET=$SECRET DATA_DIR=$WORK/data STEP_UP_MAX_AGE=6h \
    WEBHOOK_ALLOWED_NETWORKS=127.0.0.0/8 \
    "$1" serve --host 127.0.0.1 --port "$2" >>"$3" 2>&1 &
}
serve "$LANGCAMP" $PORT "$LOG"
SERVER_PID=$!
if [ -n "$VERSUS" ]; then
  serve "$VERSUS" $VERSUS_PORT "$WORK/versus.log"
  VERSUS_PID=$!
  until curl -fs "http://127.0.0.1:$VERSUS_PORT/" >/dev/null; do sleep 0.1; done
fi
"$BIN/hello" $BASE_PORT &
HELLO_PID=$!
for _ in $(seq 1 300); do
  if curl -fs "http://127.0.0.1:$PORT/" >/dev/null && curl -fs "http://127.0.0.1:$BASE_PORT/" >/dev/null; then
    break
  fi
  sleep 0.1
done

# Same-bytes baselines: each list endpoint's answer, as wrk gets it, served by `hello`.
COURSES_PORT=$((PORT + 2))
TESTS_PORT=$((PORT + 3))
curl -fs "http://127.0.0.1:$PORT/courses" -o "$WORK/courses.json"
curl -fs "http://127.0.0.1:$PORT/proficiency-tests" -o "$WORK/tests.json"
"$BIN/hello" $COURSES_PORT "$WORK/courses.json" &
SAME_PIDS+=" $!"
"$BIN/hello" $TESTS_PORT "$WORK/tests.json" &
SAME_PIDS+=" $!"
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$COURSES_PORT/" >/dev/null && curl -fs "http://127.0.0.1:$TESTS_PORT/" >/dev/null && break
  sleep 0.1
done
echo "same-bytes baselines: courses $(wc -c <"$WORK/courses.json") bytes, tests $(wc -c <"$WORK/tests.json") bytes" >&2

LUA=$ROOT/scripts/bench
# The next unused one-time code, in a file: endpoint runs happen in command substitutions
# (subshells), where a shell variable would not keep its new value.
echo 0 >"$WORK/otp_next"
OTP_BLOCK=$((OTP_CODES / (RUNS + 2)))
# With --versus, the two servers take a block each per run.
[ -n "$VERSUS" ] && OTP_BLOCK=$((OTP_BLOCK / 2))
# Likewise the next unused address for code requests (each run asks for new ones).
echo 0 >"$WORK/otp_request_next"
# An admin write for PUT /settings (each run replaces the same setting; issue 32
# measures what its audit entry adds).
echo '{"key":"bench.setting","value":{"seats":12,"note":"evening group"}}' >"$WORK/setting.json"
OTP_REQUEST_BLOCK=1000000
# Likewise the first pair of material and user that the next assign run takes (each run
# assigns new pairs, so each request writes and mails as the first ones did).
echo 0 >"$WORK/assign_next"
ASSIGN_BLOCK=10000000

# to_ms VALUE: wrk's "1.23ms" / "850.00us" / "1.02s" in milliseconds.
to_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0
    if (v ~ /us$/) n = n / 1000; else if (v ~ /ms$/) n = n; else if (v ~ /m$/) n = n * 60000; else if (v ~ /s$/) n = n * 1000
    printf "%.2f", n }'
}

# wrk_run URL DURATION CONNECTIONS THREADS SCRIPT ARGS...: prints "rps p50_ms p99_ms non2xx".
wrk_run() {
  local url=$1 duration=$2 connections=$3 threads=$4 script=$5
  shift 5
  local out
  out=$(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency -s "$script" "$url" -- "$@")
  local rps p50 p99 bad
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  bad=$(awk '/Non-2xx or 3xx responses:/ {print $5}' <<<"$out")
  echo "${rps:-0} $(to_ms "${p50:-0}") $(to_ms "${p99:-0}") ${bad:-0}"
}

# staff_write WRITE [ASSIGN_FIRST]: one wrk run of a staff write (scripts/bench/staff-write.lua),
# spread over the seeded rows or making new ones, on endpoint_run's server (`url`).
staff_write() {
  wrk_run "$url" "$DURATION" $CONNECTIONS $THREADS "$LUA/staff-write.lua" "$1" "$ADMIN_TOKEN" \
    "$USERS" "$COURSES" "$FIRST_TEST" "$TESTS" "$MATERIALS" "$CONTACTS" "${2:-0}"
}

# endpoint_run NAME [PORT]: one wrk run of the named endpoint on the server at PORT
# (default the first; OTP runs take fresh codes).
endpoint_run() {
  local url="http://127.0.0.1:${2:-$PORT}"
  case "$1" in
    "GET /courses") wrk_run "$url/courses" "$DURATION" $CONNECTIONS $THREADS "$LUA/request.lua" GET ;;
    "GET /proficiency-tests") wrk_run "$url/proficiency-tests" "$DURATION" $CONNECTIONS $THREADS "$LUA/request.lua" GET ;;
    "GET /settings/landing_video_url") wrk_run "$url/settings/landing_video_url" "$DURATION" $CONNECTIONS $THREADS "$LUA/request.lua" GET ;;
    "GET /me") wrk_run "$url/me" "$DURATION" $CONNECTIONS $THREADS "$LUA/request.lua" GET "$USER_TOKEN" ;;
    "POST /auth/otp/verify")
      local first
      first=$(cat "$WORK/otp_next")
      echo $((first + OTP_BLOCK)) >"$WORK/otp_next"
      wrk_run "$url/auth/otp/verify" "$DURATION" $CONNECTIONS $THREADS "$LUA/otp.lua" "$first" $((OTP_BLOCK / THREADS)) ;;
    "POST /auth/otp/request")
      local first
      first=$(cat "$WORK/otp_request_next")
      echo $((first + OTP_REQUEST_BLOCK)) >"$WORK/otp_request_next"
      wrk_run "$url/auth/otp/request" "$DURATION" $CONNECTIONS $THREADS "$LUA/otp-request.lua" "$first" $((OTP_REQUEST_BLOCK / THREADS)) ;;
    "POST /proficiency-tests/{id}/submit") wrk_run "$url/proficiency-tests/$TEST_ID/submit" "$DURATION" $CONNECTIONS $THREADS "$LUA/request.lua" POST "$USER_TOKEN" "$WORK/submit.json" ;;
    "POST /contact") wrk_run "$url/contact" "$DURATION" $CONNECTIONS $THREADS "$LUA/request.lua" POST - "$WORK/contact.json" ;;
    "PUT /settings") wrk_run "$url/settings" "$DURATION" $CONNECTIONS $THREADS "$LUA/request.lua" PUT "$ADMIN_TOKEN" "$WORK/setting.json" ;;
    "GET /admin/dashboard") wrk_run "$url/admin/dashboard" "$DURATION" $CONNECTIONS $THREADS "$LUA/request.lua" GET "$ADMIN_TOKEN" ;;
    # The staff writes (issue 40), each spread over the seeded rows or making new ones.
    "POST /courses") staff_write course-create ;;
    "PATCH /courses/{id}") staff_write course-update ;;
    "POST /proficiency-tests") staff_write test-create ;;
    "PATCH /proficiency-tests/{id}") staff_write test-update ;;
    "POST /education-materials") staff_write material-create ;;
    "POST /education-materials/{id}/assign")
      local first
      first=$(cat "$WORK/assign_next")
      echo $((first + ASSIGN_BLOCK)) >"$WORK/assign_next"
      staff_write material-assign "$first" ;;
    "PATCH /admin/users/{id}/profile") staff_write user-profile ;;
    "POST /contact/admin/{id}/reply") staff_write contact-reply ;;
    "PATCH /contact/admin/{id}/status") staff_write contact-status ;;
  esac
}

baseline_run() {
  wrk_run "http://127.0.0.1:$BASE_PORT/" "$DURATION" $CONNECTIONS $THREADS "$LUA/request.lua" GET
}

# same_port NAME: the port of the endpoint's same-bytes baseline, empty when it has none.
same_port() {
  case "$1" in
    "GET /courses") echo $COURSES_PORT ;;
    "GET /proficiency-tests") echo $TESTS_PORT ;;
  esac
}

same_run() {
  wrk_run "http://127.0.0.1:$1/" "$DURATION" $CONNECTIONS $THREADS "$LUA/request.lua" GET
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v c="$1" '{ print $c }'; }
hwm_mb() { awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/${1:-$SERVER_PID}/status"; }
locked() { grep -c "database is locked" "$LOG" || true; }

# The CSV export of every result (issue 33): one long streamed answer, so not a request
# rate but rows per second, the time to the first byte, and the server's resident memory
# before it (idle, after an export of no rows) and at its peak during it (VmHWM, reset
# first): the rows are read in chunks, so the peak should stay within a few MB of idle.
if [ "$ONLY" = "GET /admin/exports/results.csv" ]; then
  url="http://127.0.0.1:$PORT/admin/exports/results.csv"
  rss_mb() { awk -v f="$1" '$1 == f":" { printf "%.1f", $2 / 1024 }' "/proc/$SERVER_PID/status"; }
  curl -fsS -H "authorization: Bearer $ADMIN_TOKEN" "$url?level=none-such" -o /dev/null
  sleep 1
  IDLE=$(rss_mb VmRSS)
  echo 5 >"/proc/$SERVER_PID/clear_refs" 2>/dev/null || true
  echo "== GET /admin/exports/results.csv (every result)" >&2
  read -r BYTES SECS FIRST < <(curl -fsS -H "authorization: Bearer $ADMIN_TOKEN" "$url" \
    -o "$WORK/results.csv" -w '%{size_download} %{time_total} %{time_starttransfer}\n')
  PEAK=$(rss_mb VmHWM)
  ROWS=$(($(wc -l <"$WORK/results.csv") - 1))
  echo
  echo "Backend: $BACKEND ($SCALE data set); $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo); binaries: $BIN"
  awk -v r="$ROWS" -v b="$BYTES" -v s="$SECS" -v f="$FIRST" -v i="$IDLE" -v p="$PEAK" 'BEGIN {
    printf "results.csv: %d rows, %.1f MB in %.2f s: %.0f rows/s, %.1f MB/s; first byte after %.3f s\n", r, b / 1048576, s, r / s, b / 1048576 / s, f
    printf "server RSS: idle %.1f MB, peak during the export %.1f MB (+%.1f MB)\n", i, p, p - i }'
  exit 0
fi

ENDPOINTS=(
  "GET /courses"
  "GET /proficiency-tests"
  "GET /settings/landing_video_url"
  "GET /me"
  "POST /auth/otp/request"
  "POST /auth/otp/verify"
  "POST /proficiency-tests/{id}/submit"
  "POST /contact"
  "GET /admin/dashboard"
  "PUT /settings"
)
# Measured only when asked for (--only 'staff writes', or one of them by name).
STAFF_WRITES=(
  "POST /courses"
  "PATCH /courses/{id}"
  "POST /proficiency-tests"
  "PATCH /proficiency-tests/{id}"
  "POST /education-materials"
  "POST /education-materials/{id}/assign"
  "PATCH /admin/users/{id}/profile"
  "POST /contact/admin/{id}/reply"
  "PATCH /contact/admin/{id}/status"
)
case "$ONLY" in
  "") SELECTED=("${ENDPOINTS[@]}") ;;
  "staff writes") SELECTED=("${STAFF_WRITES[@]}") ;;
  *)
    SELECTED=()
    IFS=, read -ra WANTED <<<"$ONLY"
    for wanted in "${WANTED[@]}"; do
      found=""
      for name in "${ENDPOINTS[@]}" "${STAFF_WRITES[@]}"; do
        [ "$name" = "$wanted" ] && found=$name
      done
      [ -n "$found" ] || { echo "bench.sh: --only '$wanted' names no measured endpoint" >&2; exit 2; }
      SELECTED+=("$found")
    done
    ;;
esac

TABLE=$WORK/table.md
{
  echo "| endpoint | req/s | ratio to baseline | ratio to same bytes | p50 ms | p99 ms | non-2xx | db locked | peak RSS MB |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
} >"$TABLE"
ALL_BASE=""
for name in "${SELECTED[@]}"; do
  echo "== $name" >&2
  echo 5 >"/proc/$SERVER_PID/clear_refs" 2>/dev/null || true
  [ -n "$VERSUS" ] && { echo 5 >"/proc/$VERSUS_PID/clear_refs" 2>/dev/null || true; }
  : >"$LOG"
  baseline_run >/dev/null
  endpoint_run "$name" >/dev/null
  sport=$(same_port "$name")
  [ -n "$sport" ] && same_run "$sport" >/dev/null
  [ -n "$VERSUS" ] && endpoint_run "$name" $VERSUS_PORT >/dev/null
  base="" ends="" same="" versus=""
  for run in $(seq 1 "$RUNS"); do
    base+="$(baseline_run)"$'\n'
    [ -n "$sport" ] && same+="$(same_run "$sport")"$'\n'
    # With --versus, the two servers take turns going first.
    if [ -n "$VERSUS" ] && [ $((run % 2)) = 0 ]; then
      versus+="$(endpoint_run "$name" $VERSUS_PORT)"$'\n'
    fi
    ends+="$(endpoint_run "$name")"$'\n'
    if [ -n "$VERSUS" ] && [ $((run % 2)) = 1 ]; then
      versus+="$(endpoint_run "$name" $VERSUS_PORT)"$'\n'
    fi
  done
  ALL_BASE+=$base
  b_rps=$(col 1 <<<"${base%$'\n'}" | median)
  e_rps=$(col 1 <<<"${ends%$'\n'}" | median)
  e_p50=$(col 2 <<<"${ends%$'\n'}" | median)
  e_p99=$(col 3 <<<"${ends%$'\n'}" | median)
  e_bad=$(col 4 <<<"${ends%$'\n'}" | awk '{ s += $1 } END { print s + 0 }')
  ratio=$(awk -v e="$e_rps" -v b="$b_rps" 'BEGIN { printf "%.2f", (b > 0 ? e / b : 0) }')
  same_ratio="-"
  if [ -n "$sport" ]; then
    s_rps=$(col 1 <<<"${same%$'\n'}" | median)
    same_ratio="$(awk -v e="$e_rps" -v b="$s_rps" 'BEGIN { printf "%.2f", (b > 0 ? e / b : 0) }') (of $(printf '%.0f' "$s_rps"))"
  fi
  row="| \`$name\` | $(printf '%.0f' "$e_rps") | $ratio | $same_ratio | $e_p50 | $e_p99 | $e_bad | $(locked) | $(hwm_mb) |"
  echo "$row" >&2
  echo "$row" >>"$TABLE"
  if [ -n "$VERSUS" ]; then
    v_rps=$(col 1 <<<"${versus%$'\n'}" | median)
    row="| \`$name\` (versus) | $(printf '%.0f' "$v_rps") | $(awk -v e="$v_rps" -v b="$b_rps" 'BEGIN { printf "%.2f", (b > 0 ? e / b : 0) }') | - | $(col 2 <<<"${versus%$'\n'}" | median) | $(col 3 <<<"${versus%$'\n'}" | median) | $(col 4 <<<"${versus%$'\n'}" | awk '{ s += $1 } END { print s + 0 }') | $(grep -c "database is locked" "$WORK/versus.log" || true) | $(hwm_mb "$VERSUS_PID") |"
    echo "$row" >&2
    echo "$row" >>"$TABLE"
    echo "$name runs, req/s: $(col 1 <<<"${ends%$'\n'}" | xargs) versus $(col 1 <<<"${versus%$'\n'}" | xargs)" >&2
  fi
done
b_rps=$(col 1 <<<"${ALL_BASE%$'\n'}" | median)
b_p50=$(col 2 <<<"${ALL_BASE%$'\n'}" | median)
b_p99=$(col 3 <<<"${ALL_BASE%$'\n'}" | median)
HELLO_HWM=$(awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$HELLO_PID/status")
echo "| baseline (\`hello\`, all runs) | $(printf '%.0f' "$b_rps") | 1.00 | - | $b_p50 | $b_p99 | 0 | - | $HELLO_HWM |" >>"$TABLE"

echo "== dashboard, one connection" >&2
DASH1=$(wrk_run "http://127.0.0.1:$PORT/admin/dashboard" "$DURATION" 1 1 "$LUA/request.lua" GET "$ADMIN_TOKEN")

SOAK_LINE="skipped"
if [ "$SOAK" -gt 0 ]; then
  echo "== submission soak, ${SOAK} s" >&2
  : >"$LOG"
  s=$(DURATION=$SOAK endpoint_run "POST /proficiency-tests/{id}/submit")
  SOAK_LINE="$(col 1 <<<"$s" | xargs printf '%.0f') req/s, p50 $(col 2 <<<"$s") ms, p99 $(col 3 <<<"$s") ms, non-2xx $(col 4 <<<"$s"), \"database is locked\" in the log: $(locked)"
fi
PEAK=$(awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$SERVER_PID/status")

echo
echo "Backend: $BACKEND ($SCALE data set); wrk: $THREADS threads, $CONNECTIONS connections, ${DURATION} s runs, median of $RUNS after a warm-up"
[ -n "$VERSUS" ] && echo "Servers: $LANGCAMP; (versus) $VERSUS"
echo "Machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
echo
cat "$TABLE"
echo
echo "Dashboard with one connection (sequential): p50 $(col 2 <<<"$DASH1") ms, p99 $(col 3 <<<"$DASH1") ms, $(col 1 <<<"$DASH1" | xargs printf '%.0f') req/s"
echo "Submission soak (${SOAK} s, $CONNECTIONS connections): $SOAK_LINE"
echo "Start-up to first answer (5 runs): $STARTUP"
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Server peak RSS since the last reset (dashboard and soak): $PEAK MB"
if [ "$WEBHOOK" = 1 ]; then
  # A moment for the worker to send the last ones, then the deliveries by status.
  sleep 3
  query="SELECT status || ' ' || COUNT(*) FROM webhook_deliveries GROUP BY status"
  if [ -n "$PG" ]; then
    tally=$(psql -Atq "$DB_URL" -c "$query" | xargs)
  else
    tally=$(python3 -c 'import sqlite3, sys; print(" ".join(r[0] for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$WORK/langcamp.db" "$query")
  fi
  echo "Webhook deliveries by status at the end: $tally"
fi
