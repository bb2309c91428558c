#!/usr/bin/env bash
# Records what stock pgbench 15 prints and logs for the runs that `pgbench-report import`
# must read, so that its tests (crates/results/tests/import.rs) compare against real
# output without a server. Starts a throwaway cluster of its own (as user postgres when
# run as root), runs each case of CASES below, and saves under
# crates/results/tests/data/stock/NAME/:
#   args      the pgbench arguments, one a line
#   stdout    the report (and version banner)          -> import --report
#   stderr    progress: lines and messages             -> import --progress
#   log.N     -l per-transaction logs, one per thread  -> import --log
#   agg.N     --aggregate-interval logs                -> import --aggregate-log
# Needs stock pgbench 15 and the server binaries (PG_BINDIR, default pg_config --bindir).
set -euo pipefail

cd "$(dirname "$0")/.."
out=crates/results/tests/data/stock
bindir=${PG_BINDIR:-$(pg_config --bindir)}
pgbench=${PGBENCH:-$bindir/pgbench}
"$pgbench" --version | grep -q ' 15\.' || { echo "need stock pgbench 15" >&2; exit 1; }

# shellcheck source=../benches/cluster.sh
. benches/cluster.sh
tmp=$(mktemp -d)
trap 'stop_throwaway_cluster "$bindir" "$tmp"' EXIT
throwaway_cluster "$bindir" "$tmp" 5433 fsync=off max_connections=20
export PGHOST=$tmp PGPORT=5433 PGUSER=postgres PGDATABASE=postgres
"$pgbench" -i -s 2 -q >/dev/null 2>&1

scripts=$out/scripts
# name | arguments; pgbench runs where scripts/ holds a copy of $scripts, so the
# report names them scripts/NAME.sql
CASES=$(cat <<'END'
t-per-command-logged|-c 2 -j 2 -t 200 -r -l --random-seed=1
T-progress-logged|-f scripts/select-sleep.sql -c 2 -j 2 -T 4 -P 1 -l --random-seed=2
T-aggregate|-S -c 4 -j 2 -T 4 -P 1 -l --aggregate-interval=1 --random-seed=3
several-scripts|-f scripts/select.sql@3 -b simple-update@1 -c 2 -j 1 -t 150 -r -P 1 -l --random-seed=4
max-tries|-f scripts/conflict.sql -c 4 -j 2 -T 4 -P 1 --max-tries=10 --failures-detailed -r -l --random-seed=5
max-tries-aggregate|-f scripts/conflict.sql -c 4 -j 2 -T 3 -P 1 --max-tries=10 --failures-detailed -l --aggregate-interval=1 --random-seed=6
rate-latency-limit|-S -c 2 -j 2 -T 4 -R 400 -L 2 -P 1 -l --random-seed=7
connect|-S -C -c 2 -j 1 -t 50 --random-seed=8
END
)
while IFS='|' read -r name args; do
  [ -n "$name" ] || continue
  dir=$out/$name
  rm -rf "$dir" && mkdir -p "$dir"
  run=$tmp/run-$name && mkdir -p "$run" && chmod 777 "$run"
  cp -r "$scripts" "$run/scripts"
  read -ra argv <<<"$args"
  printf '%s\n' $args >"$dir/args"
  # Logs land in the working directory as pgbench_log.PID[.THREAD].
  (cd "$run" && "$pgbench" "${argv[@]}" >"$OLDPWD/$dir/stdout" 2>"$OLDPWD/$dir/stderr") || true
  kind=log
  case $args in *--aggregate-interval*) kind=agg ;; esac
  for f in "$run"/pgbench_log.*; do
    [ -e "$f" ] || continue
    base=${f##*/}
    rest=${base#pgbench_log.}
    thread=0
    case $rest in *.*) thread=${rest#*.} ;; esac
    mv "$f" "$dir/$kind.$thread"
  done
  echo "recorded $name: $(grep -E '^tps' "$dir/stdout" || echo 'no tps line')"
done <<<"$CASES"
