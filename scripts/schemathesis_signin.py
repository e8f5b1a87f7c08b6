"""Sign-ins through the real API for scripts/schemathesis.sh and its hooks
(scripts/schemathesis_hooks.py), with the standard library only: the e-mail code read from
the .eml mail the server writes without MAIL_HOST, and the second factor of contract §20
played the way an authenticator app plays it (RFC 6238: SHA-1, 6 digits, 30 s steps).

Every request comes from a client address of its own (`X-Forwarded-For`, believed from
loopback), in 10.252.0.0/15, apart from the addresses the hooks give generated cases, so
the rate limits (5 code requests per address in 5 minutes) do not answer in their place.

As a command, it signs in the run's superadmin with a TOTP factor:

    python3 scripts/schemathesis_signin.py superadmin BASE_URL MAIL_DIR EMAIL

prints `{"accessToken", "refreshToken", "secret", "factorId", "step"}` as JSON: tokens at
assurance level 2 (the confirm raises the sign-in that enrolled), the factor's base32
secret, and the TOTP time step its confirm used (a code works once per step).
"""

import base64
import email
import email.policy
import hashlib
import hmac
import itertools
import json
import os
import re
import struct
import sys
import time
import urllib.error
import urllib.request

STEP_SECONDS = 30

_clients = itertools.count()


def totp_at(secret, step):
    """The 6-digit code of base32 `secret` for time step `step` (RFC 6238 with SHA-1)."""
    key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    digest = hmac.new(key, struct.pack(">Q", step), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    value = struct.unpack(">I", digest[offset : offset + 4])[0] & 0x7FFFFFFF
    return f"{value % 1_000_000:06d}"


def current_step():
    return int(time.time()) // STEP_SECONDS


def fresh_step(used):
    """A time step whose code the server accepts now and that is not `used` (the step a
    factor's last code took): the current one, else the next (one step of clock skew is
    allowed either way); waits when even that one is used."""
    while True:
        now = current_step()
        for step in (now, now + 1):
            if used is None or step > used:
                return step
        time.sleep(0.2)


def _candidate_codes(message):
    """The 6-digit codes a mail may carry: the built-in wording's first, then the numbers
    of 6 digits in its text, then every 6 digits of a longer run of digits."""
    part = message.get_body(preferencelist=("plain", "html"))
    text = part.get_content() if part is not None else ""
    found = re.findall(r"sign-in code is (\d{6})", text)
    found += re.findall(r"(?<!\d)\d{6}(?!\d)", text)
    for run in re.findall(r"\d{7,}", text):
        found += [run[i : i + 6] for i in range(len(run) - 5)]
    return list(dict.fromkeys(found))


class Failed(RuntimeError):
    pass


class Api:
    """The served instance at `base` (http://127.0.0.1:PORT) with its mail in `mail_dir`."""

    def __init__(self, base, mail_dir):
        self.base = base.rstrip("/")
        self.mail_dir = mail_dir
        self._mail = {}  # address -> the candidate codes of each mail to it, in order
        self._read = set()  # mail files read

    def call(self, method, path, body=None, token=None):
        """(status, data) of one request; `data` is the envelope's `data` (None on failure)."""
        n = next(_clients) % (1 << 17)
        headers = {"X-Forwarded-For": f"10.{252 + (n >> 16)}.{(n >> 8) & 255}.{n & 255}"}
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(self.base + path, data=payload, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, text = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read()
        try:
            envelope = json.loads(text)
        except ValueError:
            envelope = {}
        return status, envelope.get("data") if isinstance(envelope, dict) else None

    def ok(self, method, path, body=None, token=None, expect=(200, 201)):
        status, data = self.call(method, path, body, token)
        if status not in expect:
            raise Failed(f"{method} {path} answered {status}")
        return data

    def _scan_mail(self):
        """Reads the mail files not read yet, in the order they were written (their names
        are UUID v7), and keeps each one's candidate codes under its address."""
        try:
            names = sorted(os.listdir(self.mail_dir))
        except FileNotFoundError:
            return
        for name in names:
            if not name.endswith(".eml") or name in self._read:
                continue
            try:
                with open(os.path.join(self.mail_dir, name), "rb") as file:
                    raw = file.read()
            except FileNotFoundError:
                continue
            message = email.message_from_bytes(raw, policy=email.policy.default)
            boundary = message.get_boundary()
            if boundary and f"--{boundary}--".encode() not in raw:
                continue  # still being written: read it again on the next scan
            self._read.add(name)
            to = str(message.get("To", "")).strip().lower()
            self._mail.setdefault(to, []).append(_candidate_codes(message))

    def _mails_of(self, address):
        self._scan_mail()
        return self._mail.get(address.lower(), [])

    def sign_in(self, address, patience=20.0):
        """Signs `address` in with the code its mail brings: the `data` of `POST
        /auth/otp/verify` (a new address becomes a user).

        The code is found in the first mail to `address` after the request that shows one.
        A superadmin may have edited the `otp` template in the run (its text must show the
        code, nothing more is known), so the built-in wording comes first, then every
        6-digit number of the text; at most four wrong ones are tried (five end a code)."""
        seen = len(self._mails_of(address))
        self.ok("POST", "/auth/otp/request", {"email": address})
        deadline = time.monotonic() + patience
        tries = 0
        while time.monotonic() < deadline:
            mails = self._mails_of(address)
            for candidates in mails[seen:]:
                seen += 1
                for code in candidates:
                    if tries == 4:
                        raise Failed(f"none of the codes in the mail to {address} signs in")
                    tries += 1
                    status, data = self.call("POST", "/auth/otp/verify", {"email": address, "code": code})
                    if status == 200:
                        return data
                    if status != 401:
                        raise Failed(f"POST /auth/otp/verify answered {status}")
            time.sleep(0.02)
        raise Failed(f"no sign-in code mail for {address} in {self.mail_dir}")

    def start_totp(self, token):
        """`POST /me/factors/totp`: the pending factor's `{id, secret, otpauthUri}`."""
        return self.ok("POST", "/me/factors/totp", {}, token)

    def confirm_totp(self, token, pending):
        """Confirms a pending factor with the code of the current step: `(data, step)`,
        `data` as `POST /me/factors/totp/{id}/confirm` answers (tokens at level 2)."""
        step = fresh_step(None)
        data = self.ok("POST", f"/me/factors/totp/{pending['id']}/confirm",
                       {"code": totp_at(pending["secret"], step)}, token)
        return data, step

    def enrolled(self, address):
        """A new user signed in with a confirmed TOTP factor: `{email, userId, accessToken,
        refreshToken, secret, factorId, step, recoveryCodes}`, the tokens at level 2."""
        signed_in = self.sign_in(address)
        pending = self.start_totp(signed_in["accessToken"])
        added, step = self.confirm_totp(signed_in["accessToken"], pending)
        return {
            "email": address,
            "recoveryCodes": added["recoveryCodes"],
            "accessToken": added["accessToken"],
            "refreshToken": added["refreshToken"],
            "secret": pending["secret"],
            "factorId": added["factor"]["id"],
            "step": step,
            "userId": signed_in["user"]["id"],
        }


def main(argv):
    if len(argv) != 5 or argv[1] != "superadmin":
        sys.exit("usage: schemathesis_signin.py superadmin BASE_URL MAIL_DIR EMAIL")
    _, _, base, mail_dir, address = argv
    api = Api(base, mail_dir)
    signed_in = api.sign_in(address)
    if signed_in.get("secondFactor") != "enroll" or signed_in.get("aal") != 1:
        sys.exit(f"{address}: expected a staff sign-in asked to enrol a factor, got {signed_in.get('secondFactor')}")
    pending = api.start_totp(signed_in["accessToken"])
    added, step = api.confirm_totp(signed_in["accessToken"], pending)
    if added.get("aal") != 2:
        sys.exit(f"{address}: the confirm did not raise the sign-in to level 2")
    print(json.dumps({
        "accessToken": added["accessToken"],
        "refreshToken": added["refreshToken"],
        "secret": pending["secret"],
        "factorId": added["factor"]["id"],
        "step": step,
    }))


if __name__ == "__main__":
    main(sys.argv)
