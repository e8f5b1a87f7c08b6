"""Webhook deliveries checked by the Standard Webhooks reference library (`standardwebhooks`
from PyPI), for scripts/webhooks-check.sh:

    python webhooks_check.py BASE_URL MAIL_DIR SUPERADMIN_EMAIL

Signs the superadmin in (scripts/schemathesis_signin.py: the e-mail code, then a TOTP factor),
starts a receiver on 127.0.0.1, registers it for `contact.created`, sends a contact request
and waits for the delivery, which the library must verify with the endpoint's secret (and
must refuse under another secret); then gives the endpoint a new secret and checks that the
next delivery verifies under the new secret and under the old one. Exits 1 on any failure.
"""

import http.server
import json
import sys
import threading
import time

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

import schemathesis_signin as signin

OTHER_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


class Deliveries:
    """What the receiver got: (headers, body) of each request, in order."""

    def __init__(self):
        self.got = []
        self.lock = threading.Lock()

    def wait_for(self, count, seconds=20):
        deadline = time.time() + seconds
        while time.time() < deadline:
            with self.lock:
                if len(self.got) >= count:
                    return list(self.got)
            time.sleep(0.05)
        raise SystemExit(f"webhooks check: {len(self.got)} of {count} deliveries arrived")


def receiver(deliveries):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with deliveries.lock:
                deliveries.got.append(({k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def verified(secret, delivery):
    headers, body = delivery
    try:
        return Webhook(secret).verify(body, headers)
    except WebhookVerificationError:
        return None


def main(base, mail_dir, email):
    api = signin.Api(base, mail_dir)
    token = api.enrolled(email)["accessToken"]
    deliveries = Deliveries()
    server = receiver(deliveries)
    url = f"http://127.0.0.1:{server.server_address[1]}/hooks"
    endpoint = api.ok("POST", "/admin/webhooks", {"url": url, "events": ["contact.created"]}, token)
    old = endpoint["secret"]
    contact = {"firstName": "Eva", "lastName": "Lind", "email": "eva@example.com", "message": "Hi"}

    api.ok("POST", "/contact", contact)
    first = deliveries.wait_for(1)[0]
    event = verified(old, first)
    if event is None or event["type"] != "contact.created" or event["data"]["firstName"] != "Eva":
        raise SystemExit(f"webhooks check: the delivery did not verify: {first}")
    if verified(OTHER_SECRET, first) is not None:
        raise SystemExit("webhooks check: a delivery verified under another secret")
    print(f"verified {first[0]['webhook-id']} ({event['type']}) with standardwebhooks")

    new = api.ok("POST", f"/admin/webhooks/{endpoint['id']}/secret", None, token)["secret"]
    api.ok("POST", "/contact", dict(contact, firstName="Ola"))
    second = deliveries.wait_for(2)[1]
    for name, secret in (("new", new), ("old", old)):
        event = verified(secret, second)
        if event is None or event["data"]["firstName"] != "Ola":
            raise SystemExit(f"webhooks check: after a new secret, the {name} one did not verify")
    print(f"verified {second[0]['webhook-id']} under the new and the old secret")
    log = api.ok("GET", f"/admin/webhooks/{endpoint['id']}/deliveries", None, token)
    states = [d["status"] for d in log["list"]]
    print(f"delivery log: {json.dumps(states)}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
