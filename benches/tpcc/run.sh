#!/usr/bin/env bash
# TPC-C (`--workload=tpcc`) on a throwaway cluster: the load of `-s SCALE` at `-j 1`
# and `-j JOBS` (wall time, the client's CPU and the server's CPU, so the server's
# share of the load shows), then a timed run (client CPU and server CPU per TPC-C
# transaction). CPU is user + kernel time: the client's from /usr/bin/time, the
# server's from /proc (the postmaster's own and its exited children's, cutime and
# cstime, plus every live child's), so it is the same however busy the machine is.
#
# Usage: benches/tpcc/run.sh     (env: SCALE=20 JOBS=2 CLIENTS=8 SECONDS_RUN=30
#                                 PGBENCH_RS=<binary> EXTRA_CONF="...")
set -euo pipefail

SCALE=${SCALE:-20}
JOBS=${JOBS:-2}
CLIENTS=${CLIENTS:-8}
SECONDS_RUN=${SECONDS_RUN:-30}
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
if [[ -z "${PGBENCH_RS:-}" ]]; then
    (cd "$root" && cargo build --release --quiet -p pgbench-rs)
    PGBENCH_RS=$target/release/pgbench-rs
fi

# shellcheck source=../cluster.sh
source "$root/benches/cluster.sh"
bench_workdir
port=$((20000 + RANDOM % 20000))
# shellcheck disable=SC2086 # EXTRA_CONF is a list of settings
throwaway_cluster "$bindir" "$work" "$port" fsync=off synchronous_commit=off \
    autovacuum=off max_wal_size=4GB shared_buffers=512MB ${EXTRA_CONF:-}
conn=(-h "$work" -p "$port" -U postgres)
"$bindir/psql" "${conn[@]}" -X -q -c "create database tpcc" postgres
ticks=$(getconf CLK_TCK)


# Runs pgbench-rs with ARGS; sets wall, client_s, server_s and keeps its output.
measure() {
    local before after start end
    "$bindir/psql" "${conn[@]}" -X -q -c checkpoint tpcc
    before=$(server_ticks "$work")
    start=$(date +%s.%N)
    /usr/bin/time -f '%U %S' -o "$work/time" "$PGBENCH_RS" "${conn[@]}" "$@" tpcc \
        >"$work/stdout" 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
    end=$(date +%s.%N)
    # Backends that just ended may not be reaped yet.
    sleep 1
    after=$(server_ticks "$work")
    wall=$(echo "$end - $start" | bc)
    client_s=$(awk '{print $1 + $2}' "$work/time")
    server_s=$(echo "scale=2; ($after - $before) / $ticks" | bc)
}

echo "### \`-i --workload=tpcc -s $SCALE\`"
echo
echo "| variant | wall s | client CPU s | server CPU s | server share of the CPU | done in |"
echo "|---|---:|---:|---:|---:|---|"
for j in 1 "$JOBS"; do
    measure -i --workload=tpcc -s "$SCALE" -j "$j"
    share=$(echo "scale=2; $server_s / ($server_s + $client_s)" | bc)
    done_line=$(grep '^done in' "$work/stderr" | sed 's/^done in [0-9.]* s (//; s/)\.$//')
    echo "| -j $j | $(printf '%.2f' "$wall") | $client_s | $server_s | $share | $done_line |"
done

echo
echo "### \`--workload=tpcc -c $CLIENTS -j $CLIENTS -T $SECONDS_RUN\` at $SCALE warehouses"
echo
measure --workload=tpcc -c "$CLIENTS" -j "$CLIENTS" -T "$SECONDS_RUN"
tx=$(grep '^number of transactions actually processed' "$work/stdout" | sed 's/.*: //; s/\/.*//')
echo "| transactions | client CPU µs/tx | server CPU µs/tx | client/server CPU | result |"
echo "|---:|---:|---:|---:|---|"
echo "| $tx | $(echo "scale=1; $client_s * 1000000 / $tx" | bc) | $(echo "scale=1; $server_s * 1000000 / $tx" | bc) | $(echo "scale=3; $client_s / $server_s" | bc) | $(grep '^TEST RESULT' "$work/stdout") |"
echo
echo "server: $("$bindir/postgres" --version), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
