#!/usr/bin/env bash
# Makes docs/images/compare.png, the screenshot of a real comparison that
# docs/comparing.md shows: stock pgbench's select-only workload in simple and in
# prepared query mode, 60 s each with -P 1 and -l, on a throwaway cluster; both
# imported with pgbench-report import, drawn with pgbench-report html, and the page
# captured by headless Chromium. Needs stock pgbench 15, the server binaries
# (PG_BINDIR, default pg_config --bindir) and chromium.
set -euo pipefail

cd "$(dirname "$0")/.."
bindir=${PG_BINDIR:-$(pg_config --bindir)}
pgbench=${PGBENCH:-$bindir/pgbench}
cargo build --quiet --bin pgbench-report
report=$PWD/target/debug/pgbench-report

# shellcheck source=../benches/cluster.sh
. benches/cluster.sh
tmp=$(mktemp -d)
trap 'stop_throwaway_cluster "$bindir" "$tmp"' EXIT
throwaway_cluster "$bindir" "$tmp" 5433 fsync=off
export PGHOST=$tmp PGPORT=5433 PGUSER=postgres PGDATABASE=postgres
"$pgbench" -i -s 10 -q >/dev/null 2>&1

for mode in simple prepared; do
  run=$tmp/$mode && mkdir -p "$run" && chmod 777 "$run"
  (cd "$run" && "$pgbench" -S -M "$mode" -c 4 -j 2 -T 60 -P 1 -l >out 2>err)
  "$report" import --report "$run/out" --progress "$run/err" --log "$run"/pgbench_log.* \
    -o "$tmp/$mode.json"
  grep '^tps' "$run/out"
done
"$report" compare "$tmp/simple.json" "$tmp/prepared.json" | head -12
"$report" html "$tmp/simple.json" "$tmp/prepared.json" -o "$tmp/compare.html"
mkdir -p docs/images
profile=$(mktemp -d)
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --window-size=1200,1500 \
  --screenshot="$PWD/docs/images/compare.png" "file://$tmp/compare.html" 2>/dev/null
rm -rf "$profile"
echo "wrote docs/images/compare.png"
