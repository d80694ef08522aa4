#!/usr/bin/env bash
# `npm run up`: from a fresh clone, install, build, migrate, seed a demo company, start every
# process, print the URLs. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/../.."
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
source .ci/node22.sh
node test/scripts/preflight.mjs
echo "[up] installing dependencies (npm install)"
npm install --no-audit --no-fund --loglevel=error
echo "[up] building"
npx turbo run build --output-logs=errors-only
exec node deploy/local/up.mjs "$@"
