#!/usr/bin/env bash
# CPU that the running product burns with no traffic, per process: start the stack (`npm run up`),
# wait until it is ready and idle, then `bash test/bench/idle-cpu.sh [seconds]` (default 20).
# Node processes are named by their working directory (the service), plus Postgres (all its
# processes), NATS and Redis. Reads /proc only; sends nothing anywhere.
set -euo pipefail
seconds="${1:-20}"
ticks=$(getconf CLK_TCK)
snapshot() {
  for p in $(pgrep -f 'dist/main.js') $(pgrep -x postgres) $(pgrep -x nats-server) $(pgrep -x redis-server); do
    local cmd name
    cmd=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) || continue
    case "$cmd" in
      *postgres*) name=postgres ;; *nats-server*) name=nats ;; *redis-server*) name=redis ;;
      *) name=$(basename "$(readlink "/proc/$p/cwd" 2>/dev/null)") || continue ;;
    esac
    # utime + stime, fields 14 and 15 of /proc/PID/stat (the command may hold spaces: count from the end of it)
    echo "$name $(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | awk '{print $12 + $13}')"
  done | awk '{a[$1] += $2} END {for (k in a) print k, a[k]}' | sort
}
before=$(mktemp); after=$(mktemp)
trap 'rm -f "$before" "$after"' EXIT
snapshot >"$before"; sleep "$seconds"; snapshot >"$after"
echo "CPU with no traffic, over ${seconds} s (ms of CPU per second):"
join "$before" "$after" | awk -v s="$seconds" -v t="$ticks" '{ms = ($3 - $2) * 1000 / t / s; printf "  %-16s %6.1f\n", $1, ms; sum += ms} END {printf "  %-16s %6.1f\n", "total", sum}'
