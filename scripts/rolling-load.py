#!/usr/bin/env python3
"""The load of scripts/rolling-restart.sh: signed-in clients reading and writing through a
proxy while the instances behind it restart, recording every answer.

Standard library only. It talks to one address on the loopback interface (the proxy) and
reads sign-in codes from the instances' mail folders (DATA_DIR/mail, no MAIL_HOST). It is
bounded: it stops when --stop-file appears, after --max-seconds, or after --max-requests,
whichever comes first, and then writes its summary (JSON) to --out.

    rolling-load.py --port 8080 --mail-dir A/mail --mail-dir B/mail \
        --ready-file ready --stop-file stop --out summary.json

Every request carries an X-Forwarded-For address of its own from 198.18.0.0/15 (the
benchmarking range, never routed; the proxy appends the real peer, 127.0.0.1, which the
instances trust), so no rate limit of the service is met: any answer other than the
expected one counts as a failure.

What runs at once:
- readers: GET /me (signed in) and GET /courses, expected 200;
- submitters: POST /proficiency-tests/{id}/submit as a signed-in user, expected 201; the
  result id of each answer is recorded, so the caller can check each is stored once;
- sign-ins: POST /auth/otp/request for a new address, the code read from the mail, then
  POST /auth/otp/verify, each expected 200; each verified address is recorded (the
  verify creates its user).
"""

import argparse
import http.client
import json
import os
import random
import re
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from jsonapi import json_request  # noqa: E402

EXPECTED = {
    "GET /me": 200,
    "GET /courses": 200,
    "POST /proficiency-tests/{id}/submit": 201,
    "POST /auth/otp/request": 200,
    "POST /auth/otp/verify": 200,
    "GET /proficiency-tests": 200,
    "GET /proficiency-tests/{id}": 200,
}
HOST = "127.0.0.1"  # loopback only, by design


class Budget:
    """Shared bounds: a stop flag, a deadline and a request count."""

    def __init__(self, max_seconds, max_requests, stop_file):
        self.deadline = time.monotonic() + max_seconds
        self.max_requests = max_requests
        self.stop_file = stop_file
        self.lock = threading.Lock()
        self.sent = 0
        self.stopped = threading.Event()

    def take(self):
        """One more request, or False when the run is over."""
        if self.stopped.is_set():
            return False
        with self.lock:
            if self.sent >= self.max_requests or time.monotonic() > self.deadline:
                self.stopped.set()
                return False
            self.sent += 1
            n = self.sent
        if n % 50 == 0 and self.stop_file and os.path.exists(self.stop_file):
            self.stopped.set()
            return False
        return True


class Record:
    """Every answer, by operation; failures with their details."""

    def __init__(self, started):
        self.started = started
        self.lock = threading.Lock()
        self.counts = {op: 0 for op in EXPECTED}
        self.failures = []
        self.result_ids = []
        self.verified = []
        self.latencies = []

    def answer(self, op, status, latency, detail=""):
        ok = status == EXPECTED[op]
        with self.lock:
            self.counts[op] += 1
            self.latencies.append(latency)
            if not ok:
                self.failures.append({
                    "at": round(time.monotonic() - self.started, 3),
                    "op": op,
                    "status": status,
                    "detail": detail[:300],
                })
        return ok


class Client:
    """One keep-alive connection to the proxy; a broken connection is reopened."""

    forwarded = 0
    forwarded_lock = threading.Lock()

    def __init__(self, port, record):
        self.port = port
        self.record = record
        self.conn = None

    @classmethod
    def client_address(cls):
        with cls.forwarded_lock:
            cls.forwarded += 1
            n = cls.forwarded % (2 * 65536)
        return f"198.{18 + n // 65536}.{(n // 256) % 256}.{n % 256}"

    def call(self, op, method, path, body=None, token=None):
        """Sends one request; returns (status, parsed JSON or None). status 0: no answer."""
        headers, data = json_request(self.client_address(), body, token)
        started = time.monotonic()
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(HOST, self.port, timeout=30)
            self.conn.request(method, path, body=data, headers=headers)
            response = self.conn.getresponse()
            raw = response.read()
            status = response.status
            if response.will_close:
                self.conn.close()
                self.conn = None
        except (OSError, http.client.HTTPException) as e:
            if self.conn is not None:
                self.conn.close()
            self.conn = None
            self.record.answer(op, 0, time.monotonic() - started, f"{type(e).__name__}: {e}")
            return 0, None
        latency = time.monotonic() - started
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        if not self.record.answer(op, status, latency, raw.decode("utf-8", "replace")):
            return status, None
        return status, parsed


class Mailbox:
    """Sign-in codes from the instances' .eml files, by recipient."""

    CODE = re.compile(r"(?<!\d)(\d{6})(?!\d)")

    def __init__(self, folders):
        self.folders = folders
        self.lock = threading.Lock()
        self.read = set()
        self.codes = {}

    def _scan(self):
        for folder in self.folders:
            try:
                names = os.listdir(folder)
            except FileNotFoundError:
                continue
            for name in names:
                path = os.path.join(folder, name)
                if not name.endswith(".eml") or path in self.read:
                    continue
                try:
                    text = open(path, encoding="utf-8", errors="replace").read()
                except OSError:
                    continue
                to = re.search(r"^To: *(.+)$", text, re.M)
                plain = text.split("Content-Type: text/plain", 1)
                if not to or len(plain) < 2 or not text.rstrip().endswith("--"):
                    continue  # still being written: read again next time
                code = self.CODE.search(plain[1].split("\n--", 1)[0])
                self.read.add(path)
                if code:
                    self.codes.setdefault(to.group(1).strip().lower(), []).append(code.group(1))

    def code_for(self, email, budget, patience=20.0):
        deadline = time.monotonic() + patience
        while time.monotonic() < deadline and not budget.stopped.is_set():
            with self.lock:
                self._scan()
                codes = self.codes.get(email.lower())
                if codes:
                    return codes.pop()
            time.sleep(0.05)
        return None


def sign_in(client, mailbox, budget, email, record):
    """OTP sign-in through the proxy; the access token, or None."""
    if not budget.take():
        return None
    status, _ = client.call("POST /auth/otp/request", "POST", "/auth/otp/request", {"email": email})
    if status != 200:
        return None
    code = mailbox.code_for(email, budget)
    if code is None:
        if not budget.stopped.is_set():
            with record.lock:
                record.failures.append({
                    "at": round(time.monotonic() - record.started, 3),
                    "op": "mail", "status": 0, "detail": f"no code mail for {email}",
                })
        return None
    if not budget.take():
        return None
    status, body = client.call("POST /auth/otp/verify", "POST", "/auth/otp/verify",
                               {"email": email, "code": code})
    if status != 200 or not body:
        return None
    with record.lock:
        record.verified.append(email)
    return body["data"]["accessToken"]


def reader(port, record, budget, tokens, seed):
    rng = random.Random(seed)
    client = Client(port, record)
    while budget.take():
        if rng.random() < 0.5:
            client.call("GET /me", "GET", "/me", token=rng.choice(tokens))
        else:
            client.call("GET /courses", "GET", "/courses")


def submitter(port, record, budget, tokens, tests, seed):
    rng = random.Random(seed)
    client = Client(port, record)
    while budget.take():
        test_id, options = rng.choice(tests)
        answers = [{"questionIndex": i, "selectedOptionIndex": rng.randrange(n)}
                   for i, n in enumerate(options)]
        status, body = client.call("POST /proficiency-tests/{id}/submit", "POST",
                                   f"/proficiency-tests/{test_id}/submit",
                                   {"answers": answers}, token=rng.choice(tokens))
        if status == 201 and body:
            with record.lock:
                record.result_ids.append(body["data"]["id"])


def signer(port, record, budget, mailbox, run, worker):
    client = Client(port, record)
    n = 0
    while not budget.stopped.is_set():
        n += 1
        sign_in(client, mailbox, budget, f"rolling-{run}-{worker}-{n}@example.test", record)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, required=True, help="the proxy's port on 127.0.0.1")
    p.add_argument("--mail-dir", action="append", required=True)
    p.add_argument("--run", default=str(os.getpid()), help="a tag for the new addresses")
    p.add_argument("--users", type=int, default=12)
    p.add_argument("--readers", type=int, default=4)
    p.add_argument("--submitters", type=int, default=2)
    p.add_argument("--signers", type=int, default=1)
    p.add_argument("--max-seconds", type=float, default=150)
    p.add_argument("--max-requests", type=int, default=400000)
    p.add_argument("--ready-file", help="written once the users are signed in and load starts")
    p.add_argument("--stop-file")
    p.add_argument("--out", required=True)
    args = p.parse_args()

    started = time.monotonic()
    record = Record(started)
    budget = Budget(args.max_seconds, args.max_requests, args.stop_file)
    mailbox = Mailbox(args.mail_dir)

    # The signed-in users, in parallel (each waits for its mail).
    tokens = []
    def prepare(i):
        token = sign_in(Client(args.port, record), mailbox, budget,
                        f"rolling-{args.run}-user-{i}@example.test", record)
        if token:
            with record.lock:
                tokens.append(token)
    threads = [threading.Thread(target=prepare, args=(i,)) for i in range(args.users)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if len(tokens) != args.users:
        sys.exit(f"rolling-load: only {len(tokens)} of {args.users} users signed in: "
                 f"{record.failures[:5]}")

    # The active fixed placement tests (an adaptive one is taken through attempts, not
    # submitted; a release before adaptive tests sends no `mode`) and the number of options
    # of each question.
    client = Client(args.port, record)
    status, body = client.call("GET /proficiency-tests", "GET", "/proficiency-tests?limit=50")
    tests = []
    for test in (body or {}).get("data", {}).get("list", []) if status == 200 else []:
        if test.get("mode", "fixed") != "fixed":
            continue
        status, detail = client.call("GET /proficiency-tests/{id}", "GET",
                                     f"/proficiency-tests/{test['id']}")
        if status == 200:
            tests.append((test["id"], [len(q["options"]) for q in detail["data"]["questions"]]))
    if not tests:
        sys.exit(f"rolling-load: no active placement test to submit ({status}: {body})")

    load_started = time.monotonic()
    if args.ready_file:
        open(args.ready_file, "w").write("load running\n")
    threads = (
        [threading.Thread(target=reader, args=(args.port, record, budget, tokens, i))
         for i in range(args.readers)]
        + [threading.Thread(target=submitter, args=(args.port, record, budget, tokens, tests, i))
           for i in range(args.submitters)]
        + [threading.Thread(target=signer, args=(args.port, record, budget, mailbox, args.run, i))
           for i in range(args.signers)]
    )
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - load_started

    latencies = sorted(record.latencies)
    def pct(q):
        return round(latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000, 1) if latencies else 0
    summary = {
        "requests": sum(record.counts.values()),
        "byOperation": record.counts,
        "failed": len(record.failures),
        "failures": record.failures[:50],
        "submissionsAnswered201": len(record.result_ids),
        "resultIds": record.result_ids,
        "signInsVerified": len(record.verified),
        "verifiedEmails": record.verified,
        "seconds": round(took, 1),
        "latencyMs": {"p50": pct(0.5), "p99": pct(0.99), "max": pct(1.0)},
        "boundReached": not (args.stop_file and os.path.exists(args.stop_file)),
    }
    with open(args.out, "w") as f:
        json.dump(summary, f)


if __name__ == "__main__":
    main()
