"""An OTLP/HTTP trace receiver for scripts/trace-check.sh, built on the OpenTelemetry
project's own protocol definitions (`opentelemetry-proto` from PyPI): it decodes each
`POST /v1/traces` (protobuf) into ExportTraceServiceRequest and writes every span as one
JSON line (ids in hex, kind, name, attributes, its resource's attributes, links).

    python otlp_receiver.py serve PORT SPANS_FILE
    python otlp_receiver.py check SPANS_FILE EXPECTATIONS_JSON

`check` reads the expectations scripts/trace-check.sh wrote (the traceparents it sent
through nginx) and exits 1 unless each one arrived as an instance's SERVER span under that
parent, with PostgreSQL CLIENT spans under it, and both instances served some.
"""

import http.server
import json
import sys
import threading

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

SERVER, CLIENT = 2, 3


def attributes(kvs):
    out = {}
    for kv in kvs:
        value = kv.value
        kind = value.WhichOneof("value")
        out[kv.key] = getattr(value, kind) if kind else None
    return out


def serve(port, spans_file):
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
                self.send_response(404)
                self.end_headers()
                return
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            lines = []
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope in resource_spans.scope_spans:
                    for span in scope.spans:
                        lines.append(json.dumps({
                            "name": span.name,
                            "kind": span.kind,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_span_id": span.parent_span_id.hex(),
                            "attributes": attributes(span.attributes),
                            "resource": resource,
                            "links": [[l.trace_id.hex(), l.span_id.hex()] for l in span.links],
                        }))
            with lock, open(spans_file, "a") as out:
                for line in lines:
                    out.write(line + "\n")
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, *args):
            pass

    http.server.ThreadingHTTPServer(("127.0.0.1", int(port)), Handler).serve_forever()


def check(spans_file, expectations_file):
    spans = [json.loads(line) for line in open(spans_file)]
    sent = json.load(open(expectations_file))
    by_id = {s["span_id"]: s for s in spans}
    instances = set()
    for expected in sent:
        trace_id, parent = expected["trace_id"], expected["parent_span_id"]
        servers = [s for s in spans if s["trace_id"] == trace_id and s["kind"] == SERVER]
        if len(servers) != 1:
            sys.exit(f"trace check: {len(servers)} server spans for trace {trace_id} ({expected['request']})")
        server = servers[0]
        if server["parent_span_id"] != parent:
            sys.exit(f"trace check: the server span of {expected['request']} is not under the proxy's parent {parent}: {server}")
        if server["name"] != expected["name"]:
            sys.exit(f"trace check: expected the span {expected['name']!r}, got {server['name']!r}")
        instances.add(server["resource"].get("service.instance.id"))
        if expected.get("database"):
            under = []
            for span in spans:
                if span["trace_id"] != trace_id or span["kind"] != CLIENT:
                    continue
                if span["attributes"].get("db.system.name") != "postgresql":
                    continue
                up = span
                while up and up["span_id"] != server["span_id"]:
                    up = by_id.get(up["parent_span_id"])
                if up:
                    under.append(span)
            if not under:
                sys.exit(f"trace check: no PostgreSQL span under the server span of {expected['request']}")
        print(f"trace {trace_id}: {server['name']} on instance {server['resource'].get('service.instance.id')}"
              f" under {parent}" + (" with its statements" if expected.get("database") else ""))
    if len(instances) < 2:
        sys.exit(f"trace check: the spans came from {len(instances)} instance(s), expected both")
    print(f"trace check: {len(sent)} requests through nginx, each under its traceparent, from both instances")


if __name__ == "__main__":
    {"serve": serve, "check": check}[sys.argv[1]](*sys.argv[2:])
