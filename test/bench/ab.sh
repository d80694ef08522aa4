#!/usr/bin/env bash
# Interleaved A/B of the whole product against another build (docs/benchmarks.md, "How to reproduce").
#   test/bench/ab.sh <base tree> [pairs]     e.g. test/bench/ab.sh /work/wt-base 3
# <base tree> is a worktree of the other commit, installed and built (npm ci && npx turbo run build).
# Runs base, this tree, base, this tree, … (BENCH_ONLY, default `sends`, with BENCH_PG_STATEMENTS=1):
# every process of the base through BENCH_MAIN_<PROCESS>; the bench script, its database and its
# migrations are this tree's. Each run's report is in test/bench/reports/; a line per run is printed.
set -euo pipefail
cd "$(dirname "$0")/../.."
base="${1:?usage: test/bench/ab.sh <base tree> [pairs]}"
pairs="${2:-3}"
# shellcheck source=../../.ci/node22.sh
source .ci/node22.sh
# BENCH_MAIN_<PROCESS>=<the base's build of it>, for every process the bench starts (deploy/local/processes.mjs).
mapfile -t base_env < <(node --input-type=module -e '
  const { processes } = await import(process.argv[1]);
  for (const p of processes) console.log(`BENCH_MAIN_${p.name.toUpperCase().replace(/-/g, "_")}=${process.argv[2]}/${p.dir}/${p.main}`);
' "$PWD/deploy/local/processes.mjs" "$base")
for f in "${base_env[@]}"; do [ -f "${f#*=}" ] || { echo "[ab] missing ${f#*=}: build the base tree first" >&2; exit 1; }; done
mkdir -p test/bench/reports && rm -f test/bench/reports/ab-*.log
export BENCH_ONLY="${BENCH_ONLY:-sends}" BENCH_PG_STATEMENTS="${BENCH_PG_STATEMENTS:-1}"
for i in $(seq 1 "$pairs"); do
  for side in base new; do
    log="test/bench/reports/ab-$side-$i.log"
    echo "[ab] pair $i, $side → $log"
    if [ "$side" = base ]; then env "${base_env[@]}" node test/bench/run.mjs >"$log" 2>&1
    else node test/bench/run.mjs >"$log" 2>&1; fi
  done
done
echo "[ab] done; the means of each side:"
node test/bench/ab-summary.mjs
