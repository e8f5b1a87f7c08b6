"""Hooks of scripts/schemathesis.sh: each generated request comes from a client address of
its own (`X-Forwarded-For`, believed from loopback, a default `TRUSTED_PROXIES`), so the
per-address rate limits (120 a minute a route, fewer for sign-in and the contact form) do
not answer 429 in place of the answer under test. In a clean-clone CI run, the probe
schemathesis sends without credentials to `POST /proficiency-tests` once met that route's
spent budget and got 429 where it expects 401. The limits have their own tests
(`tests/api/security.rs`); bench.sh's request.lua spreads its load the same way.

Only cases generated as valid get an address: the probe schemathesis sends without
credentials copies its case's headers, and it is sent for valid cases. A negative case is
left as generated, since any edit makes schemathesis read it again and may turn it
valid (a case missing its Authorization would then be sent with it).
"""

import itertools
import os

import schemathesis

_requests = itertools.count()


def _logout_tokens():
    """Fresh access tokens, one for each valid case of POST /auth/logout (which ends the
    sign-in it is sent with): scripts/schemathesis.sh signs them in before that run."""
    path = os.environ.get("LOGOUT_TOKENS")
    if not path:
        return iter(())
    with open(path, encoding="utf-8") as tokens:
        return iter([line.strip() for line in tokens if line.strip()])


_logout = _logout_tokens()


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.meta is not None and case.meta.generation.mode.is_negative:
        return
    n = next(_requests) % (1 << 24)
    if case.headers is None:
        case.headers = {}
    case.headers["X-Forwarded-For"] = f"10.{n >> 16}.{(n >> 8) & 255}.{n & 255}"
    if case.path == "/auth/logout":
        token = next(_logout, None)
        if token is None:
            raise RuntimeError("out of sign-ins for POST /auth/logout: raise SCHEMATHESIS_LOGOUT_SIGN_INS")
        case.headers["Authorization"] = f"Bearer {token}"
