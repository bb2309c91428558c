#!/usr/bin/env bash
# Real HammerDB 4.12 (../shared/tools/hammerdb/, or $HAMMERDB_DIR) beside
# `--workload=tpcc` on one throwaway cluster, at the same settings: the loads side by
# side (HammerDB's build and `-i --workload=tpcc` of WAREHOUSES at BUILD_VU
# connections), then PAIRS alternating adjacent runs (HammerDB, then ours, then
# HammerDB...) of VU virtual users / clients, RAMPUP and DURATION minutes. Each run
# records NOPM (its result line), the transactions the server counted
# (pg_stat_database's commits and rollbacks of the database, ramp-up included), the
# server's CPU per transaction (every postgres process's user + kernel time, exited
# backends included, from /proc) and the client's (the tool's own and its children's,
# from /usr/bin/time: HammerDB's is tclsh).
#
# DATABASES=own (the default): each tool on its own database with its own functions
# (HammerDB's build, pgbench-rs's -i): the server work of each. DATABASES=one: both on
# HammerDB's build (marked as a complete load for pgbench-rs), so both call HammerDB's
# functions on the same rows: the clients alone differ. (One database cannot hold both
# tools' functions: pgbench-rs's have HammerDB's names and arguments.)
#
# Before each run, its database is vacuumed (untimed; autovacuum is off, as in
# HammerDB's guides): without it every run leaves the next the dead rows of its
# updates and deletes, and by the fifth run (about 1.5 million transactions at 4
# warehouses) the server's CPU per transaction had grown fivefold for whichever tool
# ran then, which alternating pairs do not cancel. VACUUM_BETWEEN=false leaves it out.
#
# PIN=true keeps the server and the clients apart, as when the client runs on a
# machine of its own: the server's processes on the first half of the CPUs, each tool
# on the second half (taskset). Without it both share every CPU, and a client that
# costs more CPU leaves the server less: its NOPM is lower for that alone.
#
# Usage: benches/tpcc/hammerdb.sh   (env: WAREHOUSES=4 BUILD_VU=2 VU=8 RAMPUP=1
#        DURATION=3 PAIRS=3 ALLWAREHOUSE=false TIMEPROFILE=true DATABASES=own
#        PIN=false VACUUM_BETWEEN=true PGBENCH_RS=<binary> HAMMERDB_DIR=<dir> EXTRA_CONF="...")
# A pass takes PAIRS * 2 * (RAMPUP + DURATION) minutes plus the loads; HammerDB's
# shortest run is RAMPUP=0 DURATION=1.
set -euo pipefail

WAREHOUSES=${WAREHOUSES:-4}
BUILD_VU=${BUILD_VU:-2}
VU=${VU:-8}
RAMPUP=${RAMPUP:-1}
DURATION=${DURATION:-3}
PAIRS=${PAIRS:-3}
ALLWAREHOUSE=${ALLWAREHOUSE:-false}
TIMEPROFILE=${TIMEPROFILE:-true}
DATABASES=${DATABASES:-own}
PIN=${PIN:-false}
VACUUM_BETWEEN=${VACUUM_BETWEEN:-true}
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
hammerdb=${HAMMERDB_DIR:-$root/../shared/tools/hammerdb}
[[ -x $hammerdb/hammerdb.sh ]] || { echo "HammerDB not found at $hammerdb (set HAMMERDB_DIR)" >&2; exit 1; }
[[ $DATABASES == own || $DATABASES == one ]] || { echo "DATABASES is own or one" >&2; exit 1; }
if [[ -z "${PGBENCH_RS:-}" ]]; then
    (cd "$root" && cargo build --release --quiet -p pgbench-rs)
    PGBENCH_RS=$target/release/pgbench-rs
fi
export HAMMERDB_CACHE=${HAMMERDB_CACHE:-${TMPDIR:-/tmp}/hammerdb-pgtcl}
"$hammerdb/setup.sh" >/dev/null

# shellcheck source=../cluster.sh
source "$root/benches/cluster.sh"
bench_workdir
port=$((20000 + RANDOM % 20000))
# HammerDB connects over TCP; the cluster trusts every local connection, so the
# passwords hammerdb.sh gives are not checked. Both tools connect to 127.0.0.1.
# shellcheck disable=SC2086 # EXTRA_CONF is a list of settings
throwaway_cluster "$bindir" "$work" "$port" listen_addresses=127.0.0.1 fsync=off \
    synchronous_commit=off autovacuum=off max_wal_size=4GB shared_buffers=512MB \
    max_connections=200 ${EXTRA_CONF:-}
client_cpus=()
if [[ $PIN == true ]]; then
    cpus=$(nproc)
    [[ $cpus -ge 2 ]] || { echo "PIN=true needs 2 CPUs or more" >&2; exit 1; }
    server_cpus=0-$((cpus / 2 - 1))
    client_cpus=(taskset -c "$((cpus / 2))-$((cpus - 1))")
    # The postmaster and the processes it started; the backends it forks inherit it.
    for p in $(cluster_pids "$work"); do
        taskset -a -p -c "$server_cpus" "$p" >/dev/null
    done
fi
psql_at() { "$bindir/psql" -h "$work" -p "$port" -U postgres -X -q -A -t "$@"; }
ticks=$(getconf CLK_TCK)
mkdir -p "$work/hdb"


# The server's transactions in database $1 so far.
server_xacts() {
    psql_at -d "$1" -c "select xact_commit + xact_rollback from pg_stat_database where datname = '$1'"
}

# Runs "$@" measured; sets wall, client_s, server_s, and keeps its output in $work/out.
measure() {
    local before start end
    psql_at -d postgres -c checkpoint
    before=$(server_ticks "$work")
    start=$(date +%s.%N)
    /usr/bin/time -f '%U %S' -o "$work/time" "${client_cpus[@]}" "$@" >"$work/out" 2>&1 ||
        { cat "$work/out" >&2; exit 1; }
    end=$(date +%s.%N)
    sleep 1 # backends that just ended may not be reaped, their counts not flushed
    wall=$(echo "$end - $start" | bc)
    client_s=$(awk '{print $1 + $2}' "$work/time")
    server_s=$(echo "scale=3; ($(server_ticks "$work") - $before) / $ticks" | bc)
}

# The two tools as commands (measure runs them under /usr/bin/time).
hdb=(env PGHOST=127.0.0.1 PGPORT="$port" TMPDIR="$work/hdb" HDB_WAREHOUSES="$WAREHOUSES"
    HDB_BUILD_VU="$BUILD_VU" HDB_VU="$VU" HDB_RAMPUP="$RAMPUP" HDB_DURATION="$DURATION"
    HDB_ALLWAREHOUSE="$ALLWAREHOUSE" HDB_TIMEPROFILE="$TIMEPROFILE" "$hammerdb/hammerdb.sh")
ours=("$PGBENCH_RS" -h 127.0.0.1 -p "$port" -U postgres)

echo "### Loads of $WAREHOUSES warehouses at $BUILD_VU connections"
echo
echo "| tool | wall s | client CPU s | server CPU s |"
echo "|---|---:|---:|---:|"
measure "${hdb[@]}" build
grep -q "TPCC SCHEMA COMPLETE" "$work/out" || { cat "$work/out" >&2; exit 1; }
printf '| HammerDB 4.12 | %.1f | %s | %s |\n' "$wall" "$client_s" "$server_s"
psql_at -d postgres -c "create database ours"
measure "${ours[@]}" -i --workload=tpcc -s "$WAREHOUSES" -j "$BUILD_VU" ours
printf '| pgbench-rs | %.1f | %s | %s |\n' "$wall" "$client_s" "$server_s"

ours_db=ours
if [[ $DATABASES == one ]]; then
    ours_db=tpcc
    psql_at -d tpcc -c "comment on table warehouse is 'pgbench-rs tpcc load of $WAREHOUSES warehouses: complete'"
fi
all=$([[ $ALLWAREHOUSE == true ]] && echo 1 || echo 0)
warmup=()
[[ $RAMPUP -gt 0 ]] && warmup=(--warmup=$((RAMPUP * 60)))

echo
echo "### $PAIRS pairs at $VU virtual users / clients, rampup $RAMPUP min, duration $DURATION min, allwarehouse $ALLWAREHOUSE, databases: $DATABASES, vacuum between runs: $VACUUM_BETWEEN"
echo
echo "| pair | tool | NOPM | server transactions | server CPU ms/tx | client CPU ms/tx | client/server CPU |"
echo "|---:|---|---:|---:|---:|---:|---:|"
row() {
    local pair=$1 tool=$2 db=$3 xacts_before=$4 nopm xacts
    nopm=$(grep -o 'System achieved [0-9]* NOPM' "$work/out" | grep -o '[0-9]*')
    xacts=$(($(server_xacts "$db") - xacts_before))
    printf '| %s | %s | %s | %s | %.4f | %.4f | %.3f |\n' "$pair" "$tool" "$nopm" "$xacts" \
        "$(echo "$server_s * 1000 / $xacts" | bc -l)" "$(echo "$client_s * 1000 / $xacts" | bc -l)" \
        "$(echo "$client_s / $server_s" | bc -l)"
}
# The database $1 without the dead rows of the runs before (see the header).
settle() {
    if [[ $VACUUM_BETWEEN == true ]]; then psql_at -d "$1" -c vacuum; fi
}
for pair in $(seq 1 "$PAIRS"); do
    settle tpcc
    x=$(server_xacts tpcc)
    measure "${hdb[@]}" run
    row "$pair" "HammerDB 4.12" tpcc "$x"
    settle "$ours_db"
    x=$(server_xacts "$ours_db")
    measure "${ours[@]}" --workload=tpcc -D "allwarehouse=$all" -c "$VU" -j "$VU" \
        "${warmup[@]}" -T $((DURATION * 60)) "$ours_db"
    row "$pair" "pgbench-rs" "$ours_db" "$x"
done
echo
echo "server: $("$bindir/postgres" --version), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)$([[ $PIN == true ]] && echo ", server on CPUs $server_cpus, clients on ${client_cpus[2]}")"
