#!/usr/bin/env bash
# Times initialisation (`-i -s 50`) of stock pgbench and pgbench-rs side by side on a
# throwaway cluster: stock, ours (default, must be no slower), ours with `-j 2`
# (target: at most 0.7 of stock), ours with `--resume` (a whole resumable load: what
# recording units costs) and the `--resume` that finishes a resumable load killed
# (SIGKILL) once half its units were recorded (target: under 0.85 of a whole load;
# the time is the resume's alone), run in rotation (A B C D E A B C D E ...) so drift
# in the machine's load hits all alike. Prints Markdown tables: total wall time per run
# with medians and ratios to stock, then the median of each step from the `done in`
# line.
#
# Usage: benches/init/compare.sh            (env: SCALE=50 PAIRS=3 JOBS=2
#                                             PGBENCH_RS=<binary> PGBENCH=<stock binary>
#                                             BINDIR=<dir with initdb, pg_ctl>
#                                             EXTRA_CONF="fsync=off ..."
#                                             PORT=<port> TMPDIR=<socket parent>)
set -euo pipefail

SCALE=${SCALE:-50}
PAIRS=${PAIRS:-3}
JOBS=${JOBS:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}

if [[ -z "${PGBENCH_RS:-}" ]]; then
    (cd "$root" && cargo build --release --quiet -p pgbench-rs)
    PGBENCH_RS=$target/release/pgbench-rs
fi
BINDIR=${BINDIR:-$(pg_config --bindir)}
PGBENCH=${PGBENCH:-$BINDIR/pgbench}
[[ -x "$PGBENCH" ]] || PGBENCH=$(command -v pgbench)

# shellcheck source=../cluster.sh
source "$root/benches/cluster.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pgbench-rs-init-bench.XXXXXX")
port=${PORT:-$((20000 + RANDOM % 20000))}
trap 'stop_throwaway_cluster "$BINDIR" "$tmp"' EXIT
# shellcheck disable=SC2086 # EXTRA_CONF is a list of settings
throwaway_cluster "$BINDIR" "$tmp" "$port" ${EXTRA_CONF:-}

conn=(-h "$tmp" -p "$port" -U postgres)
"$BINDIR/psql" "${conn[@]}" -X -q -c "create database bench" postgres

names=("stock pgbench" "pgbench-rs" "pgbench-rs -j $JOBS" "pgbench-rs --resume"
    "pgbench-rs --resume after a kill at half")
VARIANTS=${VARIANTS:-0 1 2 3 4}
# Starts a resumable load and kills it once half of its units (branches and tellers,
# then one per scale) are recorded.
kill_half_way() {
    local pid units
    "$PGBENCH_RS" "${conn[@]}" -i -s "$SCALE" --resume bench 2>/dev/null &
    pid=$!
    while :; do
        units=$("$BINDIR/psql" "${conn[@]}" -X -Atq -c \
            "select count(*) from pgbench_rs_load where unit not like '=%'" bench 2>/dev/null || echo 0)
        ((units >= SCALE / 2 + 1)) && break
        kill -0 "$pid" 2>/dev/null || { echo "the load ended before half its units" >&2; exit 1; }
        sleep 0.02
    done
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null || true
}
declare -a totals steps
run_variant() {
    local v=$1 cmd
    case $v in
        0) cmd=("$PGBENCH" "${conn[@]}" -i -s "$SCALE" bench) ;;
        1) cmd=("$PGBENCH_RS" "${conn[@]}" -i -s "$SCALE" bench) ;;
        2) cmd=("$PGBENCH_RS" "${conn[@]}" -i -s "$SCALE" -j "$JOBS" bench) ;;
        3) cmd=("$PGBENCH_RS" "${conn[@]}" -i -s "$SCALE" --resume bench) ;;
        4) kill_half_way
           cmd=("$PGBENCH_RS" "${conn[@]}" -i -s "$SCALE" --resume bench) ;;
    esac
    # Start every run from a clean slate of dirty buffers and WAL.
    "$BINDIR/psql" "${conn[@]}" -X -q -c checkpoint bench
    local start end
    start=$(date +%s.%N)
    "${cmd[@]}" 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; exit 1; }
    end=$(date +%s.%N)
    totals[v]+="$(echo "$end - $start" | bc) "
    steps[v]+="$(grep '^done in' "$tmp/stderr" | sed 's/^done in [0-9.]* s (//; s/)\.$//')|"
}

for ((pair = 1; pair <= PAIRS; pair++)); do
    for v in $VARIANTS; do run_variant "$v"; done
done

median() { tr ' ' '\n' | { grep -v '^$' || true; } | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

stock_median=$(echo "${totals[0]}" | median)
echo "### \`-i -s $SCALE\`: wall time in seconds ($PAIRS runs each, in rotation)"
echo
header="| variant |"; rule="|---|"
for ((r = 1; r <= PAIRS; r++)); do header+=" run $r |"; rule+="---:|"; done
echo "$header median | ratio to stock |"
echo "$rule---:|---:|"
for v in $VARIANTS; do
    med=$(echo "${totals[v]}" | median)
    row="| ${names[v]} |"
    for t in ${totals[v]}; do row+=" $(printf '%.2f' "$t") |"; done
    echo "$row $(printf '%.2f' "$med") | $(echo "scale=3; $med / $stock_median" | bc) |"
done

echo
echo "### Median seconds per step (from the \`done in\` line)"
echo
echo "| variant | drop tables | create tables | client-side generate | vacuum | primary keys |"
echo "|---|---:|---:|---:|---:|---:|"
for v in $VARIANTS; do
    row="| ${names[v]} |"
    for op in "drop tables" "create tables" "client-side generate" "vacuum" "primary keys"; do
        vals=$(echo "${steps[v]}" | tr '|' '\n' | tr ',' '\n' | { grep "^ *$op " || true; } | awk '{print $(NF-1)}' | tr '\n' ' ')
        row+=" $(echo "$vals" | median) |"
    done
    echo "$row"
done
echo
echo "server: $("$BINDIR/postgres" --version), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
