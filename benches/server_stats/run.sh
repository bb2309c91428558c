#!/usr/bin/env bash
# What --server-stats costs: select-only at -c 8 -j 2 on a throwaway cluster, runs
# with and without it alternately (A B A B). Per run: tps and the client's CPU per
# transaction (the results file's run.client_cpu, getrusage of the whole process);
# with it, the sampler's own backend's CPU (user + system from /proc/PID/stat, read
# every 0.2 s until the backend exits) beside the server's CPU over the run (every
# postgres process's, exited backends through the postmaster's cutime/cstime).
#   benches/server_stats/run.sh [SECONDS [PAIRS]]
set -euo pipefail
seconds=${1:-10}
pairs=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
source "$repo/benches/cluster.sh"
bench_workdir
port=${PORT:-55461}
throwaway_cluster "$bindir" "$work" "$port" fsync=off synchronous_commit=off autovacuum=off
export PGHOST=$work PGPORT=$port PGUSER=postgres PGDATABASE=postgres
(cd "$repo" && cargo build --release --quiet --bin pgbench-rs)
ours=$repo/target/release/pgbench-rs
"$bindir/pgbench" -i -q -s 10 >/dev/null 2>&1
tick=$(getconf CLK_TCK)

# The sampler's backend: the session running the activity query; its last ticks.
watch_sampler() {
    local pid="" last=0
    while [[ -z $pid ]]; do
        pid=$("$bindir/psql" -Atqc "select pid from pg_stat_activity where query like '%pg_backend_pid() and application_name%' and pid <> pg_backend_pid() limit 1" 2>/dev/null || true)
        sleep 0.2
    done
    while [[ -e /proc/$pid/stat ]]; do
        last=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo "$last")
        sleep 0.2
    done
    echo "$last"
}

out=$here/results/$(date -u +%Y-%m-%d)-$(hostname).md
{
    echo "# --server-stats: select-only -c 8 -j 2 -T $seconds, scale 10, $pairs pairs ($(git -C "$repo" rev-parse --short HEAD))"
    echo
    echo "| run | tps | client CPU µs/tx | server CPU s | sampler backend CPU s | sampler share of server CPU |"
    echo "|---|---|---|---|---|---|"
} >"$out"
for i in $(seq "$pairs"); do
    for mode in off on; do
        extra=()
        [[ $mode == on ]] && extra=(--server-stats)
        before=$(server_ticks "$work")
        if [[ $mode == on ]]; then watch_sampler >"$work/sampler" & watcher=$!; fi
        "$ours" -S -c 8 -j 2 -T "$seconds" "${extra[@]}" --export-json="$work/r.json" >/dev/null 2>&1
        sampler=-
        if [[ $mode == on ]]; then wait "$watcher"; sampler=$(cat "$work/sampler"); fi
        after=$(server_ticks "$work")
        python3 - "$work/r.json" "$mode" "$((after - before))" "$sampler" "$tick" >>"$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
mode, server, sampler, tick = sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
run = doc["run"]
tps = doc["summary"]["tps"]
cpu = run["client_cpu"]["cpu_s"] / run["total"]["cnt"] * 1e6
share = "-" if sampler == "-" else f"{int(sampler) / server * 100:.2f}%"
samp = "-" if sampler == "-" else f"{int(sampler) / tick:.2f}"
print(f"| {mode} | {tps:.0f} | {cpu:.2f} | {server / tick:.2f} | {samp} | {share} |")
PY
    done
done
cat "$out"
