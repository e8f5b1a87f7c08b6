#!/usr/bin/env bash
# The TypeScript client check: turns the OpenAPI document into TypeScript types with
# openapi-typescript (which also validates the document and fails on one it cannot read)
# and compiles the example client in clients/typescript with `tsc --strict`. A document
# change that breaks the generator or a generated client fails here.
#
#   scripts/ts-client-check.sh [path/to/langcamp]     (default: target/debug/langcamp)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/common.sh

bin="${1:-target/debug/langcamp}"

if ! command -v npm >/dev/null 2>&1; then
  install_on_ci ts-client-check "Node.js and npm (Debian packages)" nodejs npm || {
    echo "ts-client-check: npm is not installed (Node.js 18 or later)" >&2
    exit 1
  }
fi
mkdir -p target
# The document the server serves at /swagger/json, printed without a server.
"$bin" openapi > target/openapi.json

cd clients/typescript
# Exactly the versions of package-lock.json; node_modules is not committed.
npm ci --no-audit --no-fund
npm run --silent generate
npm run --silent check
echo "TypeScript client: types generated and the example compiles with tsc --strict"
