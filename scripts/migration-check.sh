#!/usr/bin/env bash
# New migrations must let the previous release keep running beside the new one (a rolling
# upgrade: docs/OPERATIONS.md, "Rolling upgrades"; the rule is in CONTRIBUTING.md,
# "Migrations"): expand first, contract one release later.
#
#   scripts/migration-check.sh            new = not listed in migrations/released.txt
#   scripts/migration-check.sh REF        new = not in REF's tree (e.g. origin/main)
#   scripts/migration-check.sh --record   list every migration as released (a release step)
#
# Released migrations are those in migrations/released.txt (`sha256sum` lines, one per
# file of migrations/sqlite and migrations/postgres); the list is part of the tree, so
# the check works on a clean clone with no other branch or tag. A released migration is
# never edited (sqlx would refuse the database it was applied to), so the check also fails
# when a listed file changed or disappeared. Released migrations are grandfathered: 0070
# dropped a column before this rule existed.
#
# A new migration that drops or renames a table or a column, changes a column's type,
# makes a column NOT NULL, or adds a NOT NULL column without a default, breaks the
# release before it (which still reads and writes the old shape), and fails the check
# unless its file says which case it is, in a comment line:
#
#   -- langcamp: needs-full-stop <why>     the previous release cannot run against it:
#                                          upgrade with every instance stopped; the
#                                          migration must have a "### <number>" section
#                                          under "## Migration notes" in OPERATIONS.md
#                                          that says "full stop" (the release notes)
#   -- langcamp: side-by-side <why>        the previous release still works: the contract
#                                          step of an expand a release ago (it no longer
#                                          reads what this drops), or a SQLite table
#                                          rebuild that keeps every column
#
# Comments, string literals and dollar-quoted bodies are not read as SQL.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ "${1:-}" = "--record" ]; then
  sha256sum migrations/sqlite/*.sql migrations/postgres/*.sql >migrations/released.txt
  echo "migration-check: $(wc -l <migrations/released.txt) migrations recorded as released"
  exit 0
fi

python3 - "${1:-}" <<'PY'
import hashlib, os, re, subprocess, sys, tempfile

FOLDERS = ("migrations/sqlite", "migrations/postgres")
MARKER = re.compile(r"^\s*--\s*langcamp:\s*(needs-full-stop|side-by-side)\b[ \t]*(\S.*)?$", re.M | re.I)

def strip(sql):
    """The SQL without comments, string literals, quoted names' insides and $$ bodies."""
    sql = re.sub(r"\$(\w*)\$.*?\$\1\$", " ", sql, flags=re.S)
    sql = re.sub(r"/\*.*?\*/", " ", sql, flags=re.S)
    sql = re.sub(r"--[^\n]*", " ", sql)
    sql = re.sub(r"'(?:[^']|'')*'", "''", sql)
    return re.sub(r"\s+", " ", sql)

NAME = r'(?:"[^"]+"|[\w.]+)'
BREAKING = [
    (re.compile(r"\bDROP TABLE\b", re.I), "drops a table"),
    (re.compile(r"\bALTER TABLE (?:ONLY )?(?:IF EXISTS )?" + NAME + r" .*?\bDROP (?:COLUMN )?(?!CONSTRAINT\b|DEFAULT\b|NOT NULL\b|TRIGGER\b|INDEX\b|IDENTITY\b|EXPRESSION\b)", re.I),
     "drops a column"),
    (re.compile(r"\bRENAME\b(?! CONSTRAINT\b)", re.I), "renames a table or a column"),
    (re.compile(r"\bALTER (?:COLUMN )?" + NAME + r" (?:SET DATA )?TYPE\b", re.I), "changes a column's type"),
    (re.compile(r"\bALTER (?:COLUMN )?" + NAME + r" SET NOT NULL\b", re.I), "makes a column NOT NULL"),
]
ADD_COLUMN = re.compile(r"\bADD (?:COLUMN )?(?:IF NOT EXISTS )?(?!CONSTRAINT\b)" + NAME + r" ([^,]*)", re.I)

def problems_of(text):
    """What in one migration breaks the release before it."""
    found = []
    for statement in strip(text).split(";"):
        if not re.match(r"\s*ALTER TABLE\b|\s*DROP TABLE\b", statement, re.I):
            continue
        for pattern, what in BREAKING:
            if pattern.search(statement):
                found.append(f"{what}: {statement.strip()[:120]}")
        for add in ADD_COLUMN.finditer(statement):
            column = add.group(1)
            if re.search(r"(?<!IS )\bNOT NULL\b", column, re.I) and not re.search(r"\bDEFAULT\b", column, re.I):
                found.append(f"adds a NOT NULL column without a default: {statement.strip()[:120]}")
    return found

def check(files, released, operations):
    """Failures of the migration set `files` (path -> text) against `released`."""
    failures = []
    for path, digest in released.items():
        if path not in files:
            failures.append(f"{path}: released, and gone (a released migration is never removed)")
        elif hashlib.sha256(files[path].encode()).hexdigest() != digest:
            failures.append(f"{path}: released, and edited since (a released migration is never edited)")
    new = sorted(p for p in files if p not in released)
    for path in new:
        text = files[path]
        problems = problems_of(text)
        if not problems:
            continue
        markers = MARKER.findall(text)
        if not markers:
            failures.append(
                f"{path}: {problems[0]}\n    The release before this one still reads that (a rolling upgrade runs both).\n"
                "    Expand now and contract one release later (CONTRIBUTING.md, \"Migrations\"), or say in the file\n"
                "    `-- langcamp: needs-full-stop <why>` (and in OPERATIONS.md's Migration notes) or\n"
                "    `-- langcamp: side-by-side <why the previous release still works>`.")
            continue
        if any(not why for _, why in markers):
            failures.append(f"{path}: the langcamp marker needs its reason after it")
        if any(kind.lower() == "needs-full-stop" for kind, _ in markers):
            number = os.path.basename(path).split("_", 1)[0]
            notes = operations.split("\n## Migration notes", 1)[-1].split("\n## ", 1)[0]
            section = re.search(r"^### " + re.escape(number) + r"\b(.*?)(?=^### |\Z)", notes, re.M | re.S)
            if not section or "full stop" not in section.group(0).lower():
                failures.append(f"{path}: needs a full stop, so OPERATIONS.md's \"Migration notes\" need a "
                                f"\"### {number}\" section that says \"full stop\"")
    return new, failures

def released_list(text):
    out = {}
    for line in text.splitlines():
        if line.strip():
            digest, path = line.split(None, 1)
            out[path.strip().lstrip("*")] = digest
    return out

def self_test():
    """The check catches what it must and lets the rest pass (fixtures, no files)."""
    base = {"migrations/postgres/0001_initial.sql": "CREATE TABLE t (a INT, b TEXT NOT NULL);"}
    released = {p: hashlib.sha256(t.encode()).hexdigest() for p, t in base.items()}
    ops = "## Migration notes\n\n### 0090: x\n\nNeeds a full stop.\n\n## Backups\n"
    def run(name, sql, operations=ops):
        files = dict(base, **{f"migrations/postgres/{name}": sql})
        return check(files, released, operations)[1]
    cases = [
        ("0090_a.sql", "ALTER TABLE t ADD COLUMN c BIGINT;", True),
        ("0090_a.sql", "ALTER TABLE t ADD COLUMN c BIGINT NOT NULL DEFAULT 0;", True),
        ("0090_a.sql", "ALTER TABLE t ADD COLUMN c BIGINT CHECK (c IS NOT NULL OR a > 0);", True),
        ("0090_a.sql", "CREATE INDEX i ON t (a); -- DROP TABLE t in a comment", True),
        ("0090_a.sql", "INSERT INTO t (b) VALUES ('DROP TABLE t; ALTER TABLE t RENAME TO u');", True),
        ("0090_a.sql", "CREATE FUNCTION f() RETURNS trigger AS $$ BEGIN DROP TABLE x; END $$ LANGUAGE plpgsql;", True),
        ("0090_a.sql", "ALTER TABLE t DROP CONSTRAINT c; ALTER TABLE t ALTER COLUMN a DROP NOT NULL;", True),
        ("0090_a.sql", "DROP INDEX i; DROP TRIGGER x ON t;", True),
        ("0090_a.sql", "ALTER TABLE t DROP COLUMN a;", False),
        ("0090_a.sql", "ALTER TABLE t DROP a;", False),
        ("0090_a.sql", "alter table t\n  drop column if exists a;", False),
        ("0090_a.sql", "DROP TABLE t;", False),
        ("0090_a.sql", "ALTER TABLE t RENAME TO u;", False),
        ("0090_a.sql", "ALTER TABLE t RENAME COLUMN a TO z;", False),
        ("0090_a.sql", "ALTER TABLE t ALTER COLUMN a TYPE BIGINT;", False),
        ("0090_a.sql", "ALTER TABLE t ALTER COLUMN a SET NOT NULL;", False),
        ("0090_a.sql", "ALTER TABLE t ADD COLUMN c BIGINT NOT NULL;", False),
        ("0090_a.sql", "-- langcamp: side-by-side 0085 stopped reading a\nALTER TABLE t DROP COLUMN a;", True),
        ("0090_a.sql", "-- langcamp: needs-full-stop b becomes a number\nALTER TABLE t ALTER COLUMN b TYPE INT;", True),
        ("0090_a.sql", "-- langcamp: side-by-side\nALTER TABLE t DROP COLUMN a;", False),
        ("0091_a.sql", "-- langcamp: needs-full-stop b becomes a number\nALTER TABLE t ALTER COLUMN b TYPE INT;", False),
    ]
    for name, sql, passes in cases:
        failures = run(name, sql)
        if (not failures) != passes:
            sys.exit(f"migration-check self-test: {sql!r} should {'pass' if passes else 'fail'}: {failures}")
    edited = dict(base)
    edited["migrations/postgres/0001_initial.sql"] += " "
    if not check(edited, released, ops)[1]:
        sys.exit("migration-check self-test: an edited released migration should fail")
    if not check({}, released, ops)[1]:
        sys.exit("migration-check self-test: a removed released migration should fail")
    return len(cases) + 2

ref = sys.argv[1]
cases = self_test()
files = {}
for folder in FOLDERS:
    for name in sorted(os.listdir(folder)):
        if name.endswith(".sql"):
            files[f"{folder}/{name}"] = open(f"{folder}/{name}", "rb").read().decode("utf-8")
if ref:
    listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", ref, "--", *FOLDERS],
                            check=True, capture_output=True, text=True).stdout.split()
    released = {}
    for path in listed:
        if path.endswith(".sql"):
            blob = subprocess.run(["git", "show", f"{ref}:{path}"], check=True,
                                  capture_output=True).stdout
            released[path] = hashlib.sha256(blob).hexdigest()
    against = f"the migrations of {ref}"
else:
    released = released_list(open("migrations/released.txt").read())
    against = "migrations/released.txt"
new, failures = check(files, released, open("docs/OPERATIONS.md").read())
for failure in failures:
    print(f"migration-check: {failure}", file=sys.stderr)
if failures:
    sys.exit(1)
print(f"migration-check: {len(files)} migrations, {len(new)} new against {against}"
      + (f" ({', '.join(new)})" if new else "")
      + f"; none breaks the release before it unmarked (self-test: {cases} cases)")
PY
