#!/usr/bin/env bash
# Client CPU per connection under `-C`-style reconnects, TLS and not: pgbench-wire's
# `reconnect` example vs stock `pgbench -C` (libpq), against a throwaway TCP cluster
# with a server certificate made here by the openssl tool.
#
# Each client makes N connections (one `SELECT 1` each) under /usr/bin/time; user+sys
# CPU divided by N is the cost of one connection (process start is spread over N).
# The TLS handshake's own cost is the sslmode=require figure minus the disable one.
#
# Usage: benches/handshake/run.sh [N]        (default 1000)
# Output: a table on stdout, also saved as benches/handshake/results/<date>.txt.
set -euo pipefail

N=${1:-1000}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}

# shellcheck source=../cluster.sh
source "$root/benches/cluster.sh"
bench_workdir

openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=localhost \
    -keyout "$work/server.key" -out "$work/server.crt" 2>/dev/null
chmod 600 "$work/server.key"
if [[ $(id -u) -eq 0 ]]; then chown postgres: "$work/server.key" "$work/server.crt"; fi
port=$((40000 + $$ % 20000))
throwaway_cluster "$bindir" "$work" "$port" fsync=off listen_addresses=127.0.0.1 \
    ssl=on "ssl_cert_file=$work/server.crt" "ssl_key_file=$work/server.key"
conninfo="host=127.0.0.1 port=$port user=postgres dbname=postgres"

(cd "$root" && CARGO_TARGET_DIR=$target cargo build --quiet --release -p pgbench-wire --example reconnect)
ours=$target/release/examples/reconnect
echo 'select 1;' >"$work/select1.sql"

# Microseconds of client CPU (user+sys) per connection for the given command.
per_connection() {
    local t
    t=$(/usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -1)
    awk -v t="$t" -v n="$N" 'BEGIN { split(t, a, " "); printf "%d", (a[1] + a[2]) * 1e6 / n }'
}

out=$(
    echo "client CPU per connection in microseconds (user+sys, N=$N connections, one SELECT 1 each)"
    printf '%-10s %14s %10s\n' sslmode pgbench-wire pgbench
    for mode in disable require; do
        c="$conninfo sslmode=$mode"
        a=$(per_connection "$ours" "$c" "$N")
        b=$(per_connection "$bindir/pgbench" -n -C -t "$N" -f "$work/select1.sql" "$c")
        printf '%-10s %14s %10s\n' "$mode" "$a" "$b"
    done
    echo "stock: $("$bindir/pgbench" --version); pgbench-wire: $(git -C "$root" rev-parse --short HEAD)"
)
echo "$out"
mkdir -p "$here/results"
echo "$out" >"$here/results/$(date +%Y-%m-%d).txt"
