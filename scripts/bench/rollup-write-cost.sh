#!/usr/bin/env bash
# What the dashboard's rollup triggers (migration 0060) cost a write: one placement result
# inserted per transaction, N times, with the triggers and again without them, on SQLite
# (python3's sqlite3, WAL, synchronous=NORMAL, like the service) and on PostgreSQL
# (pgbench, one client). Prints rows per second for each.
#
#   scripts/bench/rollup-write-cost.sh [--postgres URL] [--rows N]
#
# It applies the migration files directly to scratch databases (a temporary SQLite file,
# and a database `langcamp_trigger_cost` on the server, dropped at the end).
set -euo pipefail
cd "$(dirname "$0")/../.."

postgres_url=${BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5433/postgres}
rows=20000
while [ $# -gt 0 ]; do
    case $1 in
        --postgres) postgres_url=$2; shift 2 ;;
        --rows) rows=$2; shift 2 ;;
        *) echo "usage: $0 [--postgres URL] [--rows N]" >&2; exit 2 ;;
    esac
done

echo "== SQLite ($rows single-row transactions)"
python3 - "$rows" <<'EOF'
import glob, os, sqlite3, sys, tempfile, time
rows = int(sys.argv[1])
path = os.path.join(tempfile.mkdtemp(), "cost.db")
db = sqlite3.connect(path, isolation_level=None)
db.execute("PRAGMA journal_mode = WAL")
db.execute("PRAGMA synchronous = NORMAL")
db.execute("PRAGMA foreign_keys = ON")
for migration in sorted(glob.glob("migrations/sqlite/*.sql")):
    db.executescript(open(migration).read())
db.execute("INSERT INTO users (id, email, created_at, updated_at) VALUES ('u', 'u@x', 0, 0)")
answers = "x" * 800
def run(label, offset):
    started = time.perf_counter()
    for i in range(rows):
        db.execute("BEGIN IMMEDIATE")
        db.execute(
            "INSERT INTO test_results (id, user_id, test_title, target_language, total_score,"
            " max_score, level, answers, completed_at) VALUES (?, 'u', 't', ?, ?, 40, ?, ?, ?)",
            (f"r{offset + i}", "de" if i % 2 else "fr", i % 41, "B1" if i % 3 else "A2", answers,
             1_763_812_800_000 - i * 60_000))
        db.execute("COMMIT")
    seconds = time.perf_counter() - started
    print(f"{label}: {rows / seconds:,.0f} rows/s ({seconds * 1e6 / rows:.1f} us per transaction)")
run("with triggers   ", 0)
for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
    db.execute(f"DROP TRIGGER {name}")
run("without triggers", rows)
EOF

echo "== PostgreSQL ($rows single-row transactions, one client)"
base=${postgres_url%/*}
db="$base/langcamp_trigger_cost"
psql -q "$postgres_url" -c "DROP DATABASE IF EXISTS langcamp_trigger_cost" -c "CREATE DATABASE langcamp_trigger_cost"
trap 'psql -q "$postgres_url" -c "DROP DATABASE IF EXISTS langcamp_trigger_cost WITH (FORCE)"' EXIT
for migration in migrations/postgres/*.sql; do
    psql -q -v ON_ERROR_STOP=1 "$db" -f "$migration" >/dev/null
done
psql -q "$db" -c "INSERT INTO users (id, email, created_at, updated_at) VALUES ('u', 'u@x', 0, 0)"
script=$(mktemp)
cat >"$script" <<'EOF'
\set score random(0, 40)
\set minute random(0, 500000)
INSERT INTO test_results (id, user_id, test_title, target_language, total_score, max_score, level, answers, completed_at)
VALUES (gen_random_uuid()::text, 'u', 't', CASE WHEN :score % 2 = 0 THEN 'de' ELSE 'fr' END, :score, 40,
        CASE WHEN :score % 3 = 0 THEN 'A2' ELSE 'B1' END, repeat('x', 800), 1763812800000 - :minute::bigint * 60000);
EOF
tps() { pgbench -n -c 1 -t "$rows" -f "$script" "$db" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p'; }
echo "with triggers   : $(tps) rows/s"
psql -q "$db" -c "DROP TRIGGER stats_results ON test_results" -c "DROP TRIGGER stats_results_update ON test_results"
echo "without triggers: $(tps) rows/s"
rm -f "$script"
