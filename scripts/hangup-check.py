#!/usr/bin/env python3
"""Clients that hang up mid-request (issue #39), measured from outside the code.

Starts `langcamp serve` on a database of its own (a new PostgreSQL database, or an SQLite
file), seeds the demo school, signs students in, then for --seconds runs --clients
clients submitting placement answers: half are steady (they read every answer and record
each acknowledged result), half give up after 3 to 21 ms and reset their connection (RST),
as phones losing signal and closing tabs do. Afterwards:

- every acknowledged result must be stored (none missing);
- the server's log must hold no transaction-state notice from PostgreSQL ("there is
  already a transaction in progress", "there is no transaction in progress"): either
  would mean a connection went back to the pool inside a transaction, or a rollback met
  none;
- no steady client may have failed.

Results stored without an acknowledgement are counted, not failed: a submission whose
client left after it was handed to the database completes as its own transaction.

    scripts/hangup-check.py --binary target/release/langcamp \
        --database-url postgres://postgres@127.0.0.1:5433/postgres --seconds 20

Standard library only; talks to the server on loopback only. Exit 0 when every check
holds, 1 otherwise; the summary (JSON) goes to stdout.
"""

import argparse
import http.client
import json
import os
import random
import re
import shutil
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from jsonapi import json_request  # noqa: E402

HOST = "127.0.0.1"
NOTICES = re.compile(r"there is (already a|no) transaction in progress")


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, token=None, forwarded=None):
    headers, data = json_request(forwarded or fresh_address(), body, token)
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    try:
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        return response.status, (json.loads(raw) if raw else None)
    finally:
        conn.close()


_counter = [0]
_counter_lock = threading.Lock()


def fresh_address():
    """An X-Forwarded-For address of its own (198.18.0.0/15), so no rate limit answers."""
    with _counter_lock:
        _counter[0] += 1
        n = _counter[0] % (2 * 65536)
    return f"198.{18 + n // 65536}.{(n // 256) % 256}.{n % 256}"


def code_from_mail(mail_dir, email, patience=20.0):
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        for name in sorted(os.listdir(mail_dir)) if os.path.isdir(mail_dir) else []:
            text = open(os.path.join(mail_dir, name), encoding="utf-8", errors="replace").read()
            if f"To: {email}" in text:
                found = re.search(r"sign-in code is (\d{6})", text)
                if found:
                    return found.group(1)
        time.sleep(0.05)
    raise SystemExit(f"no sign-in code for {email}")


def sign_in(port, mail_dir, email):
    status, _ = request(port, "POST", "/auth/otp/request", {"email": email})
    assert status == 200, status
    code = code_from_mail(mail_dir, email)
    status, body = request(port, "POST", "/auth/otp/verify", {"email": email, "code": code})
    assert status == 200, (status, body)
    return body["data"]["accessToken"]


def fixed_tests(port):
    """(id, option counts) of the active fixed tests."""
    status, body = request(port, "GET", "/proficiency-tests?limit=100")
    assert status == 200, status
    tests = []
    for test in body["data"]["list"]:
        if test.get("mode", "fixed") != "fixed":
            continue
        tests.append((test["id"], [len(q["options"]) for q in test["questions"]]))
    assert tests, "the demo seed has fixed tests"
    return tests


def submission(rng, tests):
    test_id, options = rng.choice(tests)
    answers = [{"questionIndex": i, "selectedOptionIndex": rng.randrange(n)}
               for i, n in enumerate(options)]
    return f"/proficiency-tests/{test_id}/submit", {"answers": answers}


def steady(port, tokens, tests, until, seed, record):
    rng = random.Random(seed)
    while time.monotonic() < until:
        path, body = submission(rng, tests)
        try:
            status, answer = request(port, "POST", path, body, rng.choice(tokens))
        except OSError as e:
            record("failure", f"{type(e).__name__}: {e}")
            continue
        if status == 201:
            record("acknowledged", answer["data"]["id"])
        else:
            record("failure", f"{status} {answer}")


def quitter(port, tokens, tests, until, seed, record):
    rng = random.Random(seed)
    while time.monotonic() < until:
        path, body = submission(rng, tests)
        data = json.dumps(body).encode()
        head = (f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nAuthorization: Bearer {rng.choice(tokens)}\r\n"
                f"X-Forwarded-For: {fresh_address()}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\n\r\n").encode()
        try:
            with socket.create_connection((HOST, port)) as s:
                s.sendall(head + data)
                time.sleep(rng.uniform(0.003, 0.021))
                # Reset, not a polite close: the client is simply gone.
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            record("abandoned", None)
        except OSError:
            record("abandoned", None)


def stored_results(database_url, data_dir):
    if database_url.startswith("postgres"):
        out = subprocess.run(["psql", "-At", database_url, "-c", "SELECT id FROM test_results"],
                             check=True, capture_output=True, text=True).stdout
        return set(out.split())
    conn = sqlite3.connect(os.path.join(data_dir, "langcamp.db"))
    try:
        return {row[0] for row in conn.execute("SELECT id FROM test_results")}
    finally:
        conn.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--database-url", default="", help="a PostgreSQL server URL; empty: SQLite")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--students", type=int, default=16)
    args = parser.parse_args()

    data_dir = tempfile.mkdtemp(prefix="langcamp-hangup-")
    database = ""
    database_url = f"sqlite://{data_dir}/langcamp.db?mode=rwc"
    admin_url = args.database_url
    if admin_url:
        database = f"hangup_{uuid.uuid4().hex[:12]}"
        subprocess.run(["psql", admin_url, "-qc", f"CREATE DATABASE {database}"], check=True)
        database_url = admin_url.rsplit("/", 1)[0] + "/" + database
    port = free_port()
    env = dict(os.environ, DATABASE_URL=database_url, DATA_DIR=data_dir, PORT=str(port),
               HOST=HOST, JWT_SECRET="hangup-check-secret-0123456789", RUST_LOG="info")
    env.pop("MAIL_HOST", None)
    log_path = os.path.join(data_dir, "server.log")
    server = None
    try:
        subprocess.run([args.binary, "migrate"], env=env, check=True, capture_output=True)
        subprocess.run([args.binary, "seed", "--demo"], env=env, check=True, capture_output=True)
        log = open(log_path, "w")
        server = subprocess.Popen([args.binary, "serve"], env=env, stdout=log, stderr=log)
        deadline = time.monotonic() + 30
        while True:
            try:
                if request(port, "GET", "/ready")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the server did not become ready"
            time.sleep(0.1)
        mail_dir = os.path.join(data_dir, "mail")
        tokens = [sign_in(port, mail_dir, f"hangup-{n}@example.test") for n in range(args.students)]
        tests = fixed_tests(port)
        seeded = stored_results(database_url, data_dir)

        lock = threading.Lock()
        seen = {"acknowledged": [], "failure": [], "abandoned": 0}

        def record(kind, value):
            with lock:
                if kind == "abandoned":
                    seen["abandoned"] += 1
                else:
                    seen[kind].append(value)

        until = time.monotonic() + args.seconds
        threads = []
        for n in range(args.clients):
            work = steady if n % 2 == 0 else quitter
            threads.append(threading.Thread(target=work, args=(port, tokens, tests, until, n, record)))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        time.sleep(2)  # work whose client left finishes on its own
        stored = stored_results(database_url, data_dir) - seeded
        server.terminate()
        server.wait(timeout=30)
        log.close()
        server = None
        text = open(log_path, encoding="utf-8", errors="replace").read()
        notices = NOTICES.findall(text)
        acknowledged = set(seen["acknowledged"])
        missing = acknowledged - stored
        summary = {
            "database": "postgres" if admin_url else "sqlite",
            "seconds": args.seconds,
            "clients": args.clients,
            "acknowledged": len(acknowledged),
            "abandoned": seen["abandoned"],
            "stored": len(stored),
            "storedWithoutAnswer": len(stored - acknowledged),
            "acknowledgedMissing": len(missing),
            "steadyFailures": len(seen["failure"]),
            "firstFailures": seen["failure"][:5],
            "transactionNotices": len(notices),
        }
        print(json.dumps(summary, indent=2))
        ok = not missing and not notices and not seen["failure"]
        return 0 if ok else 1
    finally:
        if server is not None:
            server.kill()
        if database:
            subprocess.run(["psql", admin_url, "-qc", f"DROP DATABASE IF EXISTS {database} WITH (FORCE)"],
                           check=False)
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
