#!/usr/bin/env bash
# Client CPU per transaction, pgbench-rs's --workload=oltp_* against real sysbench 1.0
# (Debian's package, its pgsql driver) with the same options on the same throwaway
# cluster: oltp_read_write, oltp_point_select, and oltp_point_select with 1,000
# clients. Each run's client CPU comes from the kernel's accounting of the child
# (GNU time: wait4's rusage, user and system apart), so it stays meaningful while
# other processes share the cores; divided by the transactions the tool reports.
# The two tools alternate (sysbench, ours, sysbench, ours, ...) ROUNDS times.
#
# The `-j 1` lines are pgbench's default thread count: one thread waits on all four
# clients (io_uring), where `-j 4` gives each client a thread that blocks, as each of
# sysbench's threads does. The floor line is four processes of benches/floor/floor.c
# sending oltp_point_select's statement with nothing but the system calls: what any
# client that waits for each reply pays per round trip on this machine.
#
# The write-only line is the users' guide's shape (1,000 threads, --rand-type=uniform;
# on 4 tables, not 250, to fit this machine).
#
# The 1,000-client lines run a number of transactions (sysbench's --events, our
# -t per client), not a time: connecting 1,000 backends takes seconds on a small
# machine, and pgbench's -T counts that time (as stock's does) where sysbench's
# --time starts once its threads are connected, so equal times are unequal work.
#
# Usage: benches/sysbench/run.sh [SECONDS [ROUNDS]]     (default 10 s, 2 rounds)
#        PORT=N for the throwaway cluster's port; EVENTS=N transactions for the
#        1,000-client lines (default 100000: 100 per client); OURS=BINARY runs that
#        pgbench-rs instead of building target/release's
# Output: a table on stdout, also appended to benches/sysbench/results/<date>.txt.
set -euo pipefail

SECONDS_PER_RUN=${1:-10}
ROUNDS=${2:-2}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
command -v sysbench >/dev/null || { echo "sysbench not found (apt-get install sysbench)" >&2; exit 1; }

# shellcheck source=../cluster.sh
source "$root/benches/cluster.sh"
bench_workdir
port=${PORT:-$((40000 + $$ % 20000))}
events=${EVENTS:-100000}
throwaway_cluster "$bindir" "$work" "$port" fsync=off synchronous_commit=off \
    autovacuum=off max_connections=1100 shared_buffers=256MB
if [[ -n ${OURS:-} ]]; then
    ours=$OURS
else
    (cd "$root" && CARGO_TARGET_DIR=$target cargo build --quiet --release --bin pgbench-rs)
    ours=$target/release/pgbench-rs
fi
as_server "$bindir/psql" -h "$work" -p "$port" -U postgres -qc 'create database sbtest'

sb=(--db-driver=pgsql "--pgsql-host=$work" "--pgsql-port=$port" --pgsql-user=postgres --pgsql-db=sbtest)
pg=(-h "$work" -p "$port" -U postgres)
sysbench oltp_read_write "${sb[@]}" --tables=4 --table-size=10000 --threads=4 prepare >/dev/null

# "user_us sys_us transactions" of one run of a command; the transactions are the
# number after LABEL in its output.
measure() {
    local label=$1
    shift
    local out t n
    out=$(/usr/bin/time -f 'TIME %U %S' "$@" 2>&1)
    t=$(grep '^TIME ' <<<"$out" | tail -1)
    n=$(grep -m1 "$label" <<<"$out" | sed -E "s/.*$label *([0-9]+).*/\1/")
    awk -v t="$t" -v n="$n" 'BEGIN { split(t, a, " "); printf "%.0f %.0f %d\n", a[2] * 1e6, a[3] * 1e6, n }'
}

# One line of the table: per-transaction client CPU of both tools over ROUNDS rounds;
# EVENTS, when not empty, is the run's transactions (else SECONDS_PER_RUN its time).
compare() {
    local name=$1 clients=$2 jobs=$3 test=$4 events=$5
    shift 5
    local sb_opts=("$@") d_opts=() o sb_len our_len
    if [[ -n $events ]]; then
        sb_len=(--events="$events" --time=0)
        our_len=(-t "$((events / clients))")
    else
        sb_len=(--time="$SECONDS_PER_RUN")
        our_len=(-T "$SECONDS_PER_RUN")
    fi
    for o in "$@"; do
        o=${o#--}
        d_opts+=(-D "${o//-/_}")
    done
    local su=0 ss=0 sn=0 ou=0 os=0 on=0 r
    for ((r = 0; r < ROUNDS; r++)); do
        read -r u s n < <(measure 'transactions:' sysbench "$test" "${sb[@]}" "${sb_opts[@]}" \
            --threads="$clients" "${sb_len[@]}" run)
        su=$((su + u)) ss=$((ss + s)) sn=$((sn + n))
        read -r u s n < <(measure 'number of transactions actually processed:' "$ours" "${pg[@]}" \
            --workload="$test" "${d_opts[@]}" -M prepared -c "$clients" -j "$jobs" \
            "${our_len[@]}" sbtest)
        ou=$((ou + u)) os=$((os + s)) on=$((on + n))
    done
    awk -v name="$name" -v su="$su" -v ss="$ss" -v sn="$sn" -v ou="$ou" -v os="$os" -v on="$on" 'BEGIN {
        a = su / sn; b = ss / sn; c = ou / on; d = os / on
        printf "%-33s %8.1f %8.1f %8.1f %9d | %8.1f %8.1f %8.1f %9d | %6.2f %6.2f\n",
            name, a, b, a + b, sn, c, d, c + d, on, (c + d) / (a + b), c / a }'
}

cc -O2 -Wall -Wextra -o "$work/floor" "$root/benches/floor/floor.c"
# Per round trip of four floor clients at once: "user_us sys_us" (their mean).
floor4() {
    local i
    for i in 1 2 3 4; do
        "$work/floor" "$work/.s.PGSQL.$port" postgres sbtest poll 100000 \
            "SELECT c FROM sbtest$i WHERE id=5000" >"$work/floor.$i" &
    done
    wait
    cat "$work/floor".[1-4] | awk '{u += $1; k += $2} END {printf "%-33s %8.1f %8.1f %8.1f\n", "floor: 4 clients, system calls only", u / 4, k / 4, (u + k) / 4}'
}

out=$(
    echo "client CPU per transaction, microseconds (user, kernel, total; transactions), $ROUNDS rounds of ${SECONDS_PER_RUN} s or $events transactions"
    echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
    printf '%-33s %8s %8s %8s %9s | %8s %8s %8s %9s | %6s %6s\n' workload \
        'sb user' 'sb sys' 'sb tot' 'sb tx' 'our user' 'our sys' 'our tot' 'our tx' total user
    compare "oltp_read_write -c 4 -j 4" 4 4 oltp_read_write "" --tables=4 --table-size=10000
    compare "oltp_read_write -c 4 -j 1" 4 1 oltp_read_write "" --tables=4 --table-size=10000
    compare "oltp_point_select -c 4 -j 4" 4 4 oltp_point_select "" --tables=4 --table-size=10000
    compare "oltp_point_select -c 4 -j 1" 4 1 oltp_point_select "" --tables=4 --table-size=10000
    floor4
    compare "oltp_point_select -c 1000 -j 2" 1000 2 oltp_point_select "$events" --tables=4 --table-size=10000
    compare "oltp_point_select -c 1000 -j 1000" 1000 1000 oltp_point_select "$events" --tables=4 --table-size=10000
    compare "oltp_write_only -c 1000 -j 2" 1000 2 oltp_write_only "$events" --tables=4 --table-size=10000 --rand-type=uniform
    echo "ratios: ours / sysbench (targets: total <= 0.8, user <= 0.5)"
    echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "sysbench: $(sysbench --version); pgbench-rs: $(git -C "$root" rev-parse --short HEAD); $(nproc) cores"
)
echo "$out"
mkdir -p "$here/results"
# Appended: a day's earlier runs stay beside it.
file="$here/results/$(date +%Y-%m-%d).txt"
if [[ -s $file ]]; then printf '\nRun at %s:\n\n' "$(date +%H:%M)" >>"$file"; fi
echo "$out" >>"$file"
