#!/usr/bin/env bash
# The server's COPY ceiling for pgbench_accounts beside our data phase and stock's, at
# one scale on a throwaway cluster. The ceiling loads the same rows (written beforehand
# to COPY text files by benches/init/copy_rows.rs, our own generator) with psql's
# `\copy ... from` over the same number of connections, in the same transaction shape
# as ours: on one connection `begin; truncate; copy ... with (freeze on); commit` like
# `-i`, on N connections one committed truncate and then N plain COPYs at once like
# `-i -j N`. A last variant is the server reading one file itself (`COPY ... FROM
# 'file'`, no client or socket at all). Ours and stock are timed by the
# `client-side generate` of their `done in` line (`-I dtg`: data only, no vacuum or
# keys); the ceilings by wall time around psql. Runs in rotation, forward then back
# (A B C D E E D C B A ...), so drift in the machine's load hits all alike; prints a
# Markdown table with medians and ratios to the ceiling on as many connections.
#
# Usage: benches/init/ceiling.sh            (env: SCALE=100 ROUNDS=2 JOBS=2
#                                             PGBENCH_RS=<binary> COPY_ROWS=<binary>
#                                             BINDIR=<dir with initdb, pg_ctl>
#                                             EXTRA_CONF="fsync=off ..."
#                                             PORT=<port> TMPDIR=<socket parent>)
set -euo pipefail

SCALE=${SCALE:-100}
ROUNDS=${ROUNDS:-2}
JOBS=${JOBS:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}

if [[ -z "${PGBENCH_RS:-}" ]]; then
    (cd "$root" && cargo build --release --quiet -p pgbench-rs --bin pgbench-rs)
    PGBENCH_RS=$target/release/pgbench-rs
fi
if [[ -z "${COPY_ROWS:-}" ]]; then
    (cd "$root" && cargo build --quiet -p pgbench-rs --example copy-rows)
    COPY_ROWS=$target/debug/examples/copy-rows
fi
BINDIR=${BINDIR:-$(pg_config --bindir)}
PGBENCH=${PGBENCH:-$BINDIR/pgbench}
[[ -x "$PGBENCH" ]] || PGBENCH=$(command -v pgbench)

# shellcheck source=../cluster.sh
source "$root/benches/cluster.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pgbench-rs-ceiling.XXXXXX")
port=${PORT:-$((20000 + RANDOM % 20000))}
trap 'stop_throwaway_cluster "$BINDIR" "$tmp"' EXIT
# shellcheck disable=SC2086 # EXTRA_CONF is a list of settings
throwaway_cluster "$BINDIR" "$tmp" "$port" ${EXTRA_CONF:-}

conn=(-h "$tmp" -p "$port" -U postgres)
psql() { "$BINDIR/psql" "${conn[@]}" -X -q -v ON_ERROR_STOP=1 "$@" bench; }
"$BINDIR/psql" "${conn[@]}" -X -q -c "create database bench" postgres

# The rows: one file for one connection, JOBS files for JOBS connections.
mkdir -p "$tmp/one" "$tmp/split"
"$COPY_ROWS" "$SCALE" 1 "$tmp/one"
"$COPY_ROWS" "$SCALE" "$JOBS" "$tmp/split"
chmod -R a+rX "$tmp/one" "$tmp/split"

names=("stock pgbench -I dtg" "pgbench-rs -I dtg" "pgbench-rs -I dtg -j $JOBS"
    "ceiling: psql \\copy, 1 connection" "ceiling: psql \\copy, $JOBS connections"
    "ceiling: server COPY FROM file, 1 connection")
ceiling_of=(3 3 4 3 4 5)
VARIANTS=${VARIANTS:-0 1 2 3 4 5}
declare -a times
generate_seconds() { # the client-side generate of a done in line on stdin
    grep '^done in' | sed 's/.*client-side generate \([0-9.]*\) s.*/\1/'
}
run_variant() {
    local v=$1 start end t k
    # Start every run from a clean slate of dirty buffers and WAL.
    psql -c checkpoint
    case $v in
        0) t=$("$PGBENCH" "${conn[@]}" -i -I dtg -s "$SCALE" bench 2>&1 | generate_seconds) ;;
        1) t=$("$PGBENCH_RS" "${conn[@]}" -i -I dtg -s "$SCALE" bench 2>&1 | generate_seconds) ;;
        2) t=$("$PGBENCH_RS" "${conn[@]}" -i -I dtg -s "$SCALE" -j "$JOBS" bench 2>&1 | generate_seconds) ;;
        3 | 4 | 5)
            "$PGBENCH_RS" "${conn[@]}" -i -I dt -s "$SCALE" bench 2>/dev/null
            psql -c checkpoint
            start=$(date +%s.%N)
            case $v in
                3) psql -c begin -c "truncate pgbench_accounts" \
                       -c "\\copy pgbench_accounts from '$tmp/one/accounts.1' with (freeze on)" \
                       -c commit ;;
                4) psql -c "truncate pgbench_accounts"
                   for ((k = 1; k <= JOBS; k++)); do
                       psql -c "\\copy pgbench_accounts from '$tmp/split/accounts.$k'" &
                   done
                   wait ;;
                5) psql -c begin -c "truncate pgbench_accounts" \
                       -c "copy pgbench_accounts from '$tmp/one/accounts.1' with (freeze on)" \
                       -c commit ;;
            esac
            end=$(date +%s.%N)
            t=$(echo "$end - $start" | bc) ;;
    esac
    [[ -n $t ]] || { echo "no time for ${names[v]}" >&2; exit 1; }
    times[v]+="$t "
}

forward=($VARIANTS)
for ((round = 1; round <= ROUNDS; round++)); do
    for v in "${forward[@]}"; do run_variant "$v"; done
    for ((i = ${#forward[@]} - 1; i >= 0; i--)); do run_variant "${forward[i]}"; done
done

median() { tr ' ' '\n' | { grep -v '^$' || true; } | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "### Data phase of \`-s $SCALE\` (pgbench_accounts' $((SCALE * 100000)) rows): seconds, $((ROUNDS * 2)) runs each in rotation"
echo
header="| variant |"; rule="|---|"
for ((r = 1; r <= ROUNDS * 2; r++)); do header+=" run $r |"; rule+="---:|"; done
echo "$header median | ratio to the ceiling on as many connections |"
echo "$rule---:|---:|"
for v in $VARIANTS; do
    med=$(echo "${times[v]}" | median)
    c=${ceiling_of[v]}
    ratio="-"
    if [[ -n "${times[c]:-}" ]]; then
        ratio=$(echo "scale=3; $med / $(echo "${times[c]}" | median)" | bc)
    fi
    row="| ${names[v]} |"
    for t in ${times[v]}; do row+=" $(printf '%.2f' "$t") |"; done
    echo "$row $(printf '%.2f' "$med") | $ratio |"
done
echo
echo "server: $("$BINDIR/postgres" --version), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
