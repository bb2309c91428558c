#!/usr/bin/env bash
# Client instructions per `SELECT 1` transaction with `--metrics-listen` on and off.
#
# pgbench-rs runs under `valgrind --tool=callgrind` (pinned to one CPU, as compare.py's
# instruction count) with -t N1 and -t N2 transactions of one client;
# (Ir(N2) - Ir(N1)) / (N2 - N1) is the cost of one transaction with start-up
# cancelled out. With the endpoint on, nothing scrapes it during the run: a scrape's
# own cost is per scrape, not per transaction (the criterion bench `stats` measures
# one: `cargo bench -p pgbench-rs --bench stats -- scrape`). Only the client counts;
# the server runs natively.
#
# Usage: benches/metrics/run.sh [N1 [N2]]          (default 2000 12000)
# Server: a throwaway cluster on port $METRICS_BENCH_PORT (default 40000 + pid % 20000),
# the endpoint on $METRICS_BENCH_LISTEN (default 9459).
# Output: a table on stdout, also saved as benches/metrics/results/<date>.txt.
set -euo pipefail

N1=${1:-2000}
N2=${2:-12000}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}

command -v valgrind >/dev/null || { echo "valgrind not found (apt-get install valgrind)" >&2; exit 1; }

# shellcheck source=../cluster.sh
source "$root/benches/cluster.sh"
bench_workdir
port=${METRICS_BENCH_PORT:-$((40000 + $$ % 20000))}
listen=${METRICS_BENCH_LISTEN:-9459}
throwaway_cluster "$bindir" "$work" "$port" fsync=off synchronous_commit=off autovacuum=off

(cd "$root" && CARGO_TARGET_DIR=$target cargo build --quiet --release --bin pgbench-rs)
built=$(git -C "$root" rev-parse --short HEAD)
ours=$target/release/pgbench-rs
echo 'SELECT 1;' >"$work/select1.sql"

# Total instructions (Ir) of one callgrind run of pgbench-rs with N transactions ($1)
# and the other arguments.
instructions() {
    local n=$1
    shift
    taskset -c 0 valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
        "$ours" -h "$work" -p "$port" -U postgres -n -t "$n" -f "$work/select1.sql" "$@" postgres \
        >/dev/null 2>"$work/vg.err" || { cat "$work/vg.err" >&2; exit 1; }
    sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$work/vg.err"
}

per_transaction() {
    local a b
    a=$(instructions "$N1" "$@")
    b=$(instructions "$N2" "$@")
    echo $(( (b - a) / (N2 - N1) ))
}

result=$(
    echo "client instructions per SELECT 1 transaction (callgrind, -c 1, -t $N1 vs $N2)"
    printf '%-10s %10s %10s %8s\n' mode off on on/off
    for mode in simple prepared; do
        off=$(per_transaction -M "$mode")
        on=$(per_transaction -M "$mode" "--metrics-listen=$listen" --metrics-linger=0)
        printf '%-10s %10s %10s %8s\n' "$mode" "$off" "$on" \
            "$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.4f", a / b }')"
    done
    echo "pgbench-rs: $built"
)
echo "$result"
mkdir -p "$here/results"
echo "$result" >"$here/results/$(date +%Y-%m-%d).txt"
