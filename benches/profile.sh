#!/usr/bin/env bash
# Where each client's CPU goes: runs stock pgbench and pgbench-rs under `perf record`
# with the same arguments and prints, for each, the share of samples in the kernel,
# in the client's own code and in libraries, and the top symbols. This is how the
# client-CPU target of benches/README.md was examined: on a round-trip-bound workload
# most of a client's time is the kernel's context switch and wake-up, the same for both.
#
# Usage: benches/profile.sh [pgbench options and DBNAME]
#   default: -n -c 2 -j 2 -T 5 -f <SELECT 1 script>, against the server the libpq
#   environment (PGHOST, PGPORT, PGUSER, PGDATABASE) points at; initialise it first
#   for the builtin scripts.
# Needs perf (Debian: linux-perf) and kernel.perf_event_paranoid <= 2.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
command -v perf >/dev/null || { echo "perf not found (Debian: apt-get install linux-perf)" >&2; exit 1; }

bindir=${PG_BINDIR:-$(pg_config --bindir)}
stock=$bindir/pgbench
[[ -x $stock ]] || stock=$(command -v pgbench)
(cd "$root" && cargo build --release --locked --quiet -p pgbench-rs)
ours=$target/release/pgbench-rs

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ $# -eq 0 ]]; then
    echo 'SELECT 1;' >"$work/select1.sql"
    set -- -n -c 2 -j 2 -T 5 -f "$work/select1.sql"
fi

for client in "$stock" "$ours"; do
    echo "== $(basename "$client") $*"
    perf record -q -o "$work/perf.data" -- "$client" "$@" 2>&1 \
        | grep -E '^(tps|number of transactions actually processed)' || true
    echo "-- samples by object"
    perf report -i "$work/perf.data" --stdio --no-children --sort dso 2>/dev/null \
        | grep -Ev '^(#|$)' | sed -n 1,6p
    echo "-- top symbols"
    perf report -i "$work/perf.data" --stdio --no-children --sort sym 2>/dev/null \
        | grep -Ev '^(#|$)' | sed -n 1,12p
    echo
done
