#!/usr/bin/env bash
# Sourced by `npm test` and `npm run up` (`source test/scripts/setup.sh STEP...`): Node 22 first on
# PATH for the rest of the command (.ci/node22.sh), then test/scripts/setup.mjs with the steps
# named (deps, servers, browser). Returns non-zero when a step cannot be taken.
_wallet_setup_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../.ci/node22.sh
source "$_wallet_setup_dir/../../.ci/node22.sh" && node "$_wallet_setup_dir/setup.mjs" "$@"
