"""Hooks of scripts/schemathesis.sh: who each generated request is signed in as, and the
client address it comes from.

Sign-ins (contract §20). An auth provider puts a bearer token on every case, so
schemathesis knows the credentials as its own (the ignored-auth check strips them for its
probes without credentials and with invalid ones):

* by default the run's superadmin (LANGCAMP_FUZZ_SUPERADMIN, a JSON file that
  schemathesis.sh wrote): a sign-in with a TOTP factor at assurance level 2, refreshed
  before its access token expires (a refresh keeps the level);
* a sign-in of its own for every case (positive and negative) of the routes that would end
  or change the sign-in or the factors of whoever calls them, in the state the route acts
  on (scripts/schemathesis_signin.py signs it in through the API, its codes read from the
  .eml mail):
  - `POST /auth/logout` (the run of its own at the end): a new student; logout ends it;
  - `POST /auth/second-factor/*`: a user with a TOTP factor, signed in again with the
    e-mail code alone (level 1: the second step is due). Five wrong codes end the sign-in
    they are sent with, so the superadmin's never meets this route;
  - `POST /me/factors/totp` (and the passkey enrolment, `/me/passkeys*`): a new user
    without a factor, for whom enrolment is open;
  - `POST /me/factors/totp/{id}/confirm`: a new user with a pending TOTP factor;
  - `DELETE /me/factors/{id}`: a new user with a confirmed TOTP factor, at level 2 from
    its confirm (step-up);
  - `DELETE /admin/users/{id}/factors`: the superadmin; it ends the target's sign-ins.

A generated id names no factor and no user: in positive cases of the routes above whose
path names one, `{id}` becomes the pending factor, the factor or (for the reset) a new user
with a factor of the case's own, so the route acts instead of answering 404. And the
documented example code "123456" stands for what the user has at hand: with `totp` (and at
the confirm) the code the app shows now, with `recovery` one of the user's unused recovery
codes, so the examples reach the success answers; any other generated code is wrong (400
at the confirm, 401 at verify), as schemathesis.toml notes.

Client addresses: each generated request comes from a client address of its own
(`X-Forwarded-For`, believed from loopback, a default `TRUSTED_PROXIES`), so the
per-address rate limits (120 a minute a route, fewer for sign-in and the contact form) do
not answer 429 in place of the answer under test. In a clean-clone CI run, the probe
schemathesis sends without credentials to `POST /proficiency-tests` once met that route's
spent budget and got 429 where it expects 401. The limits have their own tests
(`tests/api/security.rs`); bench.sh's request.lua spreads its load the same way.

Only cases generated as valid get an address: the probe schemathesis sends without
credentials copies its case's headers, and it is sent for valid cases. A negative case is
left as generated, since any edit a `before_call` hook makes has schemathesis read it again,
which may turn it valid (a case missing its Authorization would then be sent with it). The
auth provider's edits come before that reading, at generation.
"""

import itertools
import json
import os
import time

import schemathesis

from schemathesis_signin import Api, Failed, fresh_step, totp_at

_requests = itertools.count()
_users = itertools.count(1)

# The documented example of every code field (SecondFactorInput, CodeInput).
EXAMPLE_CODE = "123456"
# Refresh the superadmin's access token when it is this old (JWT_EXPIRATION is 15 minutes).
REFRESH_AFTER_SECONDS = 10 * 60


def _next_address():
    """A client address not used before in this run (10.0.0.0 up to 10.251.255.255)."""
    n = next(_requests) % (252 << 16)
    return f"10.{n >> 16}.{(n >> 8) & 255}.{n & 255}"


def _api():
    global _API
    try:
        return _API
    except NameError:
        _API = Api(os.environ["LANGCAMP_FUZZ_BASE"], os.environ["LANGCAMP_FUZZ_MAIL"])
        return _API


class _Superadmin:
    """The run's superadmin: its tokens, refreshed in time."""

    def __init__(self):
        with open(os.environ["LANGCAMP_FUZZ_SUPERADMIN"], encoding="utf-8") as file:
            signed_in = json.load(file)
        self.access = signed_in["accessToken"]
        self.refresh = signed_in["refreshToken"]
        self.since = time.monotonic()

    def token(self):
        if time.monotonic() - self.since > REFRESH_AFTER_SECONDS:
            pair = _api().ok("POST", "/auth/refresh", {"refreshToken": self.refresh})
            self.access, self.refresh = pair["accessToken"], pair["refreshToken"]
            self.since = time.monotonic()
        return self.access


_superadmin = None


def _superadmin_token():
    global _superadmin
    if _superadmin is None:
        _superadmin = _Superadmin()
    return _superadmin.token()


def _email(kind):
    return f"{kind}-{next(_users)}@langcamp.test"


def _is_negative(case):
    return case.meta is not None and case.meta.generation.mode.is_negative


def _set_path_id(case, value):
    case.path_parameters = {**(case.path_parameters or {}), "id": value}


def _code_at_hand(case, user):
    """The example code becomes what `user` has: the TOTP code of a step not yet used, or
    (with `method: recovery`) an unused recovery code."""
    if not isinstance(case.body, dict) or case.body.get("code") != EXAMPLE_CODE:
        return
    if case.body.get("method") == "recovery":
        if user.get("recoveryCodes"):
            case.body = {**case.body, "code": user["recoveryCodes"][0]}
    else:
        case.body = {**case.body, "code": totp_at(user["secret"], fresh_step(user.get("step")))}


# Who signs each case of a route in, and what a positive case's data then names: (method,
# path template) -> (sign-in, edit of a positive case or None).
def _logout():
    return {"accessToken": _api().sign_in(_email("logout"))["accessToken"]}


def _without_factor():
    return {"accessToken": _api().sign_in(_email("enrol"))["accessToken"]}


def _pending():
    """A new user with a pending TOTP factor (started, not confirmed)."""
    user = _without_factor()
    pending = _api().start_totp(user["accessToken"])
    return {**user, "pendingId": pending["id"], "secret": pending["secret"]}


def _with_factor():
    """A new user with a confirmed TOTP factor, signed in at level 2 by its confirm."""
    return _api().enrolled(_email("factor"))


def _second_step_due():
    """A user with a TOTP factor, signed in again with the e-mail code alone (level 1)."""
    user = _with_factor()
    again = _api().sign_in(user["email"])
    return {**user, "accessToken": again["accessToken"]}


def _superadmin_resetting():
    """The superadmin, and a user with a factor for it to reset."""
    return {"accessToken": _superadmin_token(), "target": _with_factor()["userId"]}


_OWN_SIGN_IN = {
    ("POST", "/auth/logout"): (_logout, None),
    ("POST", "/auth/second-factor/verify"): (_second_step_due, _code_at_hand),
    ("POST", "/auth/second-factor/options"): (_second_step_due, None),
    ("POST", "/me/factors/totp"): (_without_factor, None),
    ("POST", "/me/passkeys/options"): (_without_factor, None),
    ("POST", "/me/passkeys"): (_without_factor, None),
    ("POST", "/me/factors/totp/{id}/confirm"): (
        _pending,
        lambda case, user: (_set_path_id(case, user["pendingId"]), _code_at_hand(case, user)),
    ),
    ("DELETE", "/me/factors/{id}"): (_with_factor, lambda case, user: _set_path_id(case, user["factorId"])),
    ("DELETE", "/admin/users/{id}/factors"): (
        _superadmin_resetting,
        lambda case, user: _set_path_id(case, user["target"]),
    ),
}


@schemathesis.auth(refresh_interval=None)
class SignIns:
    """Every case's bearer token (not cached: the routes above take a new sign-in for each
    case; nothing is retried on a 401, which for a second factor is a wrong code)."""

    def get(self, case, context):
        own = _OWN_SIGN_IN.get((case.method.upper(), case.path))
        if own is None:
            return {"accessToken": _superadmin_token()}
        sign_in, edit = own
        for attempt in range(3):
            try:
                return {**sign_in(), "edit": edit}
            except Failed:
                # A sign-in mail the run's edits of the `otp` template made unreadable:
                # another new user.
                if attempt == 2:
                    raise

    def set(self, case, data, context):
        if case.headers is None:
            case.headers = {}
        case.headers["Authorization"] = f"Bearer {data['accessToken']}"
        # An address of its own for negative cases too: set at generation, before
        # schemathesis reads the case, it changes nothing of what the case tests, and
        # their refusals are then the answers under test rather than 429.
        case.headers["X-Forwarded-For"] = _next_address()
        if data.get("edit") is not None and not _is_negative(case):
            data["edit"](case, data)


@schemathesis.hook
def before_call(context, case, kwargs):
    if _is_negative(case):
        return
    if case.headers is None:
        case.headers = {}
    case.headers["X-Forwarded-For"] = _next_address()
