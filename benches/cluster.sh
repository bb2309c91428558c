# Sourced by the benchmark scripts: where the server binaries are, and a throwaway
# PostgreSQL cluster on a private Unix socket, run as `postgres` when we are root
# (initdb and postgres refuse root).
#   throwaway_cluster BINDIR DIR PORT [NAME=VALUE ...]   initdb in DIR/data and start
#   stop_throwaway_cluster BINDIR DIR                    stop it (immediate), remove DIR
#   bench_workdir                                        $bindir, $work, removed at exit

# The server binaries and stock pgbench: $PG_BINDIR, else the newest Debian install.
#   bindir=$(stock_bindir) || exit 1
stock_bindir() {
    local bindir=${PG_BINDIR:-}
    if [[ -z $bindir ]]; then
        bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    fi
    [[ -x $bindir/pgbench ]] || { echo "stock pgbench not found; set PG_BINDIR" >&2; return 1; }
    echo "$bindir"
}

as_server() {
    if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

throwaway_cluster() {
    local bindir=$1 dir=$2 port=$3 setting
    shift 3
    chmod 755 "$dir"
    if [[ $(id -u) -eq 0 ]]; then chown postgres: "$dir"; fi
    as_server "$bindir/initdb" -D "$dir/data" -U postgres -A trust --no-sync >/dev/null
    local conf=("-k" "$dir" "-c" "listen_addresses=" "-p" "$port")
    for setting in "$@"; do conf+=("-c" "$setting"); done
    as_server "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o "${conf[*]}" start >/dev/null
}

# The set-up the per-topic benches share: stock's server binaries in $bindir, a
# work directory in $work, removed (with any cluster started in it) at exit.
bench_workdir() {
    bindir=$(stock_bindir) || exit 1
    work=$(mktemp -d)
    trap 'stop_throwaway_cluster "$bindir" "$work"' EXIT
}

stop_throwaway_cluster() {
    as_server "$1/pg_ctl" -D "$2/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$2"
}

# The postmaster of the cluster in directory $1 and the processes it has started
# (backends forked later are its children too).
cluster_pids() {
    local pm
    pm=$(head -1 "$1/data/postmaster.pid")
    echo "$pm" $(cat "/proc/$pm/task/$pm/children")
}

# Every CPU tick the processes of the cluster in directory $1 spent so far, exited
# backends included (the postmaster's waited-for children's time).
server_ticks() {
    local pm total pid
    pm=$(head -1 "$1/data/postmaster.pid")
    total=$(awk '{print $16 + $17}' "/proc/$pm/stat")
    for pid in $(cluster_pids "$1"); do
        [[ -r /proc/$pid/stat ]] && total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo "$total"
}
