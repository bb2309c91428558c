#!/usr/bin/env bash
# The RDS/Aurora guide's 1,000-thread line (issue #49): sysbench `oltp_write_only`
# with 1,000 threads beside `--workload=oltp_write_only -c 1000 -j 1000` on one
# throwaway cluster (max_connections 1100), A B B A per pair, `VACUUM ANALYZE`
# before every run, uniform draws. Both runs are given the same table set: sysbench's
# `--tables`/`--table-size` and our `-D tables=`/`-D table_size=` (without them either
# tool runs on one table of 10,000 rows whatever was loaded).
#   benches/sysbench/write-only.sh [SECONDS [PAIRS]]   (env OURS, TABLES, TABLE_SIZE,
#                                                        THREADS, PORT)
# Per run: transactions per second (sysbench's own figure, which divides by its
# total time; ours without the connection time), client CPU (user+sys) per
# transaction, peak RSS, and for ours the latest `-P 2` line due within the run: how
# long after the instant it was due it was computed (the time it shows).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../cluster.sh"
seconds=${1:-20}
pairs=${2:-1}
tables=${TABLES:-25}
size=${TABLE_SIZE:-40000}
threads=${THREADS:-1000}
port=${PORT:-5791}
ours=${OURS:-$here/../../target/release/pgbench-rs}
bench_workdir
throwaway_cluster "$bindir" "$work" "$port" max_connections=1100 fsync=off \
    synchronous_commit=off autovacuum=off full_page_writes=off shared_buffers=256MB
export PGHOST=$work PGPORT=$port PGUSER=postgres PGDATABASE=postgres
"$ours" -i --workload=oltp_write_only -D tables="$tables" -D table_size="$size" >/dev/null 2>&1

sb_run() {
    /usr/bin/time -f 'TIME %U %S %M' sysbench oltp_write_only --db-driver=pgsql \
        --pgsql-host="$work" --pgsql-port="$port" --pgsql-user=postgres --pgsql-db=postgres \
        --tables="$tables" --table-size="$size" --rand-type=uniform --threads="$threads" \
        --time="$seconds" --report-interval=2 run 2>&1 |
        awk '/transactions:/ {tx=$2; tps=$3; gsub(/[(]/,"",tps)} /^TIME/ {cpu=$2+$3; rss=$4}
             END {printf "%.0f %.1f %.0f -\n", tps, 1e6 * cpu / tx, rss / 1024}'
}

ours_run() {
    /usr/bin/time -f 'TIME %U %S %M' "$ours" --workload=oltp_write_only -D rand_type=uniform \
        -D tables="$tables" -D table_size="$size" -c "$threads" -j "$threads" -T "$seconds" \
        -P 2 2>&1 |
        awk -v end="$seconds" 'BEGIN {due=2}
             /^progress:/ {at=$2; if (due <= end && at - due > worst) worst=at - due
                           due=2 * (int(at / 2) + 1)}
             /^number of transactions actually processed/ {tx=$NF}
             /^tps =/ {tps=$3} /^TIME/ {cpu=$2+$3; rss=$4}
             END {printf "%.0f %.1f %.0f %.1f\n", tps, 1e6 * cpu / tx, rss / 1024, worst}'
}

echo "oltp_write_only, $threads threads, $tables tables of $size rows, ${seconds} s runs"
echo "| run | tool | tps | client CPU µs/tx | peak RSS MB | latest -P 2 line, s late |"
echo "|---:|---|---:|---:|---:|---:|"
run=0
# The previous run's backends gone (they take a while to exit at 1,000), then
# vacuumed.
settle() {
    local i
    for ((i = 0; i < 120; i++)); do
        [[ $("$bindir/psql" -Atc "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'" 2>/dev/null) == 1 ]] && break
        sleep 1
    done
    "$bindir/psql" -q -c 'VACUUM ANALYZE' >/dev/null 2>&1 || true
}

for ((p = 0; p < pairs; p++)); do
    for tool in sysbench ours ours sysbench; do
        settle
        run=$((run + 1))
        if [[ $tool == sysbench ]]; then r=$(sb_run); else r=$(ours_run); fi
        read -r tps cpu rss late <<<"$r"
        echo "| $run | $tool | $tps | $cpu | $rss | $late |"
    done
done
