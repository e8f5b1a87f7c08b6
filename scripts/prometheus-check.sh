#!/usr/bin/env bash
# Prometheus can scrape a served instance: /metrics answers only with the token, its text
# passes `promtool check metrics` and carries the series of contract §15 (route labels are
# templates, never concrete paths); the alert rules of docs/OPERATIONS.md pass
# `promtool check rules`, and OPERATIONS.md shows exactly the checked file.
#
#   scripts/prometheus-check.sh [path/to/langcamp]     (default: target/debug/langcamp)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin="$(realpath "${1:-target/debug/langcamp}")"
if ! command -v promtool >/dev/null; then
  echo "installing promtool (Debian package prometheus)" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus) >/dev/null
fi

promtool check rules docs/prometheus-alerts.yml
python3 - <<'PY'
import re, sys
doc = open("docs/OPERATIONS.md").read()
rules = open("docs/prometheus-alerts.yml").read()
blocks = re.findall(r"```yaml\n(.*?)```", doc, re.S)
if rules not in blocks:
    sys.exit("docs/OPERATIONS.md must show docs/prometheus-alerts.yml verbatim in a ```yaml block")
PY

work="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
export DATA_DIR="$work" DATABASE_URL="sqlite://$work/langcamp.db?mode=rwc" JWT_SECRET="prometheus-check-secret-0123456789"
export RUST_LOG=warn HOST=127.0.0.1 PORT="$port" METRICS_TOKEN="scrape-token-$$"
unset MAIL_HOST
"$bin" serve >"$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
base="http://127.0.0.1:$port"
for _ in $(seq 1 200); do curl -sf "$base/health" >/dev/null && break; sleep 0.1; done

# Some traffic: a list, a concrete id (404), an unknown route, a mail in the outbox.
curl -s "$base/courses" >/dev/null
curl -s "$base/courses/0190c6b0-0000-7000-8000-000000000000" >/dev/null
curl -s "$base/no/such/route" >/dev/null
curl -s "$base/auth/otp/request" -H 'content-type: application/json' -d '{"email":"ops@example.com"}' >/dev/null

status=$(curl -s -o /dev/null -w '%{http_code}' "$base/metrics")
[ "$status" = 401 ] || { echo "/metrics without the token answered $status, expected 401" >&2; exit 1; }
curl -sf "$base/metrics" -H "authorization: Bearer $METRICS_TOKEN" >"$work/scrape.txt"
promtool check metrics <"$work/scrape.txt"
for series in langcamp_http_requests_total langcamp_http_request_duration_seconds_bucket \
  langcamp_mail_outbox_queued langcamp_mail_outbox_oldest_seconds langcamp_mail_sent_total \
  langcamp_mail_failed_total langcamp_db_pool_connections process_resident_memory_bytes \
  langcamp_webhook_deliveries_total langcamp_webhook_queue_oldest_seconds; do
  grep -q "^$series" "$work/scrape.txt" || { echo "the scrape lacks $series" >&2; cat "$work/scrape.txt" >&2; exit 1; }
done
# A fresh instance lists every rate-limit rule at 0 before its first 429 (contract §15;
# second_factor: the factor codes and passkeys of §20 and §21).
for rule in default refresh otp_request otp_verify second_factor contact upload; do
  grep -qx "langcamp_rate_limited_total{rule=\"$rule\"} 0" "$work/scrape.txt" \
    || { echo "the fresh scrape lacks langcamp_rate_limited_total{rule=\"$rule\"} 0" >&2; exit 1; }
done
grep -q 'route="/courses/{id}"' "$work/scrape.txt" || { echo "no route template label" >&2; exit 1; }
if grep -q '0190c6b0' "$work/scrape.txt"; then echo "a concrete path leaked into a label" >&2; exit 1; fi
echo "prometheus check: rules pass promtool, the scrape passes promtool check metrics with every §15 series"
