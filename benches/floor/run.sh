#!/usr/bin/env bash
# The floor under the lines with one client per thread: client CPU per `SELECT 1`
# round trip of a client that makes only the system calls (floor.c, in C, no protocol
# library), beside stock pgbench and pgbench-rs at `-c 2 -j 2`, all on one throwaway
# cluster, in alternating rounds.
#
# Two floor processes run at once, as the two threads of `-c 2 -j 2` do, in each of
# the two ways to wait (floor.c's header). pgbench's figures are the whole process's
# getrusage divided by its transactions (`-t` large enough that start-up is noise).
#
# Usage: benches/floor/run.sh [ROUNDS [ROUND_TRIPS]]     (default 3 rounds of 100000)
# Output: a table on stdout, also saved as benches/floor/results/<date>.txt.
set -euo pipefail

rounds=${1:-3}
trips=${2:-100000}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}

# shellcheck source=../cluster.sh
source "$root/benches/cluster.sh"
bench_workdir
port=$((40000 + $$ % 20000))
throwaway_cluster "$bindir" "$work" "$port" fsync=off
socket=$work/.s.PGSQL.$port

cc -O2 -Wall -Wextra -o "$work/floor" "$here/floor.c"
(cd "$root" && CARGO_TARGET_DIR=$target cargo build --quiet --release --bin pgbench-rs)
ours=$target/release/pgbench-rs
echo 'SELECT 1;' >"$work/select1.sql"

# Two floor clients at once: the mean of their per-round-trip figures.
floor_pair() {
    "$work/floor" "$socket" postgres postgres "$1" "$trips" >"$work/a" &
    "$work/floor" "$socket" postgres postgres "$1" "$trips" >"$work/b"
    wait
    cat "$work/a" "$work/b" | awk '{u += $1; k += $2; s += $3} END {printf "%.2f %.2f %.2f\n", u/2, k/2, s/2}'
}

# A pgbench at -c 2 -j 2: user, kernel µs and voluntary switches per transaction.
bench_pair() {
    python3 - "$@" <<'PY'
import resource, subprocess, sys, re
out = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=True).stdout
n = int(re.search(r"number of transactions actually processed: (\d+)", out).group(1))
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime * 1e6 / n:.2f} {r.ru_stime * 1e6 / n:.2f} {r.ru_nvcsw / n:.2f}")
PY
}

args=(-n -c 2 -j 2 -t "$trips" -f "$work/select1.sql" -h "$work" -p "$port" -U postgres postgres)
declare -A rows
for ((i = 1; i <= rounds; i++)); do
    rows[floor-poll]+="$(floor_pair poll)"$'\n'
    rows[floor-recv-first]+="$(floor_pair recv-first)"$'\n'
    rows[stock]+="$(bench_pair "$bindir/pgbench" "${args[@]}")"$'\n'
    rows[ours]+="$(bench_pair "$ours" "${args[@]}")"$'\n'
done

# The median of each column over the rounds.
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
result=$(
    echo "client CPU per SELECT 1 round trip, two clients at once (µs; medians of $rounds rounds of $trips)"
    printf '%-18s %8s %8s %8s %10s\n' client user kernel total "switches"
    for who in floor-poll floor-recv-first stock ours; do
        u=$(awk 'NF {print $1}' <<<"${rows[$who]}" | median)
        k=$(awk 'NF {print $2}' <<<"${rows[$who]}" | median)
        t=$(awk 'NF {print $1 + $2}' <<<"${rows[$who]}" | median)
        s=$(awk 'NF {print $3}' <<<"${rows[$who]}" | median)
        printf '%-18s %8.2f %8.2f %8.2f %10.2f\n' "$who" "$u" "$k" "$t" "$s"
    done
    echo "stock: $("$bindir/pgbench" --version); pgbench-rs: $(git -C "$root" rev-parse --short HEAD)"
)
echo "$result"
mkdir -p "$here/results"
echo "$result" >"$here/results/$(date +%Y-%m-%d).txt"
