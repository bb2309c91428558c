#!/usr/bin/env bash
# Client instructions per `SELECT 1` round trip, pgbench-wire vs stock pgbench (libpq).
#
# Each client runs under `valgrind --tool=callgrind` twice, with N1 and N2 round trips
# on one connection; (Ir(N2) - Ir(N1)) / (N2 - N1) is the cost of one round trip with
# start-up (connection, TLS, process start) cancelled out. Only the client is counted;
# the server runs natively.
#
# Usage: benches/roundtrip/run.sh [N1 [N2]]        (default 1000 11000)
# Server: $ROUNDTRIP_CONNINFO if set (e.g. "host=/tmp/pgdev user=postgres dbname=postgres"),
# otherwise a throwaway cluster started here and removed on exit.
# Output: a table on stdout, also saved as benches/roundtrip/results/<date>.txt.
set -euo pipefail

N1=${1:-1000}
N2=${2:-11000}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}

command -v valgrind >/dev/null || { echo "valgrind not found (apt-get install valgrind)" >&2; exit 1; }

# shellcheck source=../cluster.sh
source "$root/benches/cluster.sh"
bench_workdir

if [[ -n ${ROUNDTRIP_CONNINFO:-} ]]; then
    conninfo=$ROUNDTRIP_CONNINFO
else
    port=$((40000 + $$ % 20000))
    throwaway_cluster "$bindir" "$work" "$port" fsync=off
    conninfo="host=$work port=$port user=postgres dbname=postgres"
fi

(cd "$root" && CARGO_TARGET_DIR=$target cargo build --quiet --release -p pgbench-wire --example roundtrip)
ours=$target/release/examples/roundtrip
echo 'select 1;' >"$work/select1.sql"

# Total instructions (Ir) of one callgrind run of the given command, with every
# argument "@N@" replaced by the round-trip count $1.
instructions() {
    local n=$1
    shift
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "${@//@N@/$n}" \
        >/dev/null 2>"$work/vg.err" || { cat "$work/vg.err" >&2; exit 1; }
    sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$work/vg.err"
}

per_round_trip() {
    local a b
    a=$(instructions "$N1" "$@")
    b=$(instructions "$N2" "$@")
    echo $(( (b - a) / (N2 - N1) ))
}

result=$(
    echo "instructions per SELECT 1 round trip (callgrind, N=$N1 vs $N2)"
    printf '%-10s %12s %12s\n' mode pgbench-wire pgbench
    for mode in simple prepared; do
        w=$(per_round_trip "$ours" "$conninfo" "$mode" @N@)
        s=$(per_round_trip "$bindir/pgbench" -n -M "$mode" -f "$work/select1.sql" -t @N@ "$conninfo")
        printf '%-10s %12s %12s\n' "$mode" "$w" "$s"
    done
    echo "stock: $("$bindir/pgbench" --version); pgbench-wire: $(git -C "$root" rev-parse --short HEAD)"
)
echo "$result"
mkdir -p "$here/results"
echo "$result" >"$here/results/$(date +%Y-%m-%d).txt"
