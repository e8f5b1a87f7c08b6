"""What the Python checks of scripts/ share (hangup-check.py, rolling-load.py)."""

import json


def json_request(forwarded, body=None, token=None):
    """The headers and encoded body of a request to the API: JSON both ways, from the
    client address `forwarded` (each check gives its clients addresses of their own, so
    the per-client rate limits never answer), signed in with `token` if given."""
    headers = {"Accept": "application/json", "X-Forwarded-For": forwarded}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = "Bearer " + token
    return headers, data
