#!/usr/bin/env bash
# Client cost at one thread per client and beyond (issue #48): stock pgbench and ours
# on one throwaway cluster, alternately (A B B A per line), at the guides' headline
# line `-c 256 -j 256` of index-inserts-only, at `-c 1000 -j 1000`, and at the floor
# and multiplexed lines. Per run: client CPU (user+sys) per transaction and peak RSS
# (`/usr/bin/time`), then in a separate run the system calls per transaction and the
# futex calls among them, counted by `perf stat` on the syscall tracepoints. (Not
# `strace -f -c`: it slows every call so much that threads pile up on locks they
# rarely meet otherwise; under strace our futex calls were 1 a transaction, under
# perf 0.01.)
#   benches/threads/run.sh [SECONDS [PAIRS]]     (env OURS=path, LINES="name;args|...")
# Prints a markdown table; results/ keeps what was committed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../cluster.sh"
seconds=${1:-8}
pairs=${2:-1}
ours=${OURS:-$here/../../target/release/pgbench-rs}
bench_workdir
throwaway_cluster "$bindir" "$work" "${PORT:-5790}" max_connections=1100 fsync=off \
    synchronous_commit=off autovacuum=off full_page_writes=off shared_buffers=256MB
export PGHOST=$work PGPORT=${PORT:-5790} PGUSER=postgres PGDATABASE=postgres
stock=$bindir/pgbench
examples=$here/../../examples
"$stock" -i -q -s 10 >/dev/null 2>&1
"$bindir/psql" -q -f "$examples/index-inserts-only.setup.sql" >/dev/null
select1=$work/select1.sql
echo 'SELECT 1;' >"$select1"
ins=$examples/index-inserts-only.sql
default_lines="index-inserts -c 256 -j 256;-c 256 -j 256 -f $ins"
default_lines+="|index-inserts -c 1000 -j 1000;-c 1000 -j 1000 -f $ins"
default_lines+="|SELECT 1 -c 2 -j 2;-c 2 -j 2 -f $select1"
default_lines+="|SELECT 1 -c 32 -j 2;-c 32 -j 2 -f $select1"
lines=${LINES:-$default_lines}

# One run: "tx cpu_s rss_kb" (transactions, user+sys seconds, peak RSS).
run_timed() {
    local tool=$1
    shift
    local out
    out=$(/usr/bin/time -f 'TIME %U %S %M' "$tool" -n -T "$seconds" "$@" 2>&1)
    awk '/^number of transactions actually processed/ {tx=$NF; sub("/.*","",tx)}
         /^TIME/ {cpu=$2+$3; rss=$4} END {print tx, cpu, rss}' <<<"$out"
}

# One run under perf stat: "tx calls futex" (transactions, system calls of all
# threads, futex calls).
run_traced() {
    local tool=$1
    shift
    local out
    out=$(perf stat -x, -o "$work/perf.txt" -e raw_syscalls:sys_enter \
        -e syscalls:sys_enter_futex "$tool" -n -T "$seconds" "$@" 2>&1)
    local tx
    tx=$(awk '/^number of transactions actually processed/ {t=$NF; sub("/.*","",t); print t}' <<<"$out")
    echo "$tx $(awk -F, '/raw_syscalls/ {c=$1} /sys_enter_futex/ {f=$1} END {print c, f}' "$work/perf.txt")"
}

vacuum() { "$bindir/psql" -q -c 'VACUUM' >/dev/null 2>&1 || true; }

echo "| line | tool | tps | client CPU µs/tx | peak RSS MB | syscalls/tx | futex/tx |"
echo "|---|---|---:|---:|---:|---:|---:|"
IFS='|' read -ra entries <<<"$lines"
for entry in "${entries[@]}"; do
    name=${entry%%;*}
    read -ra args <<<"${entry#*;}"
    for ((p = 0; p < pairs; p++)); do
        for tool in stock ours ours stock; do
            bin=$stock
            [[ $tool == ours ]] && bin=$ours
            vacuum
            read -r tx cpu rss < <(run_timed "$bin" "${args[@]}")
            read -r ttx calls futex < <(run_traced "$bin" "${args[@]}")
            awk -v n="$name" -v t="$tool" -v tx="$tx" -v cpu="$cpu" -v rss="$rss" \
                -v s="$seconds" -v ttx="$ttx" -v calls="$calls" -v futex="$futex" 'BEGIN {
                printf "| %s | %s | %.0f | %.1f | %.1f | %.2f | %.3f |\n", n, t, tx / s,
                    1e6 * cpu / tx, rss / 1024, calls / ttx, futex / ttx }'
        done
    done
done
