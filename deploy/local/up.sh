#!/usr/bin/env bash
# `npm run up`: from a fresh clone, install, start the servers, build, migrate, seed a demo company,
# start every process, print the URLs. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/../.."
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
# Node 22, the dependencies (unless node_modules matches the lockfile), PostgreSQL, Redis, NATS.
source test/scripts/setup.sh deps servers
echo "[up] building"
npx turbo run build --output-logs=errors-only
exec node deploy/local/up.mjs "$@"
