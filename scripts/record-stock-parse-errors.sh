#!/usr/bin/env bash
# Records what stock pgbench 15 does with the scripts of crates/script/tests/data/parse/,
# so that the parser's tests (crates/script/tests/parse_*.rs) compare against it without
# a server. Needs stock pgbench 15 on PATH (or PGBENCH=/path/to/pgbench) and, for the
# framing and expression cases, a running server given by PGHOST/PGPORT/PGUSER
# (PGDATABASE, default postgres). Run from anywhere; it rewrites only recorded files.
#
#   errors/NAME.sql       -> errors/NAME.stderr: everything `pgbench -f NAME.sql` writes
#                            to stderr while loading the script (it exits 1 before
#                            connecting); NAME.args adds options (e.g. -M extended).
#   framing/NAME.sql      -> framing/NAME.stock: one `sending <SQL>` entry per SQL
#                            command sent (from --debug, multi-line SQL kept), then
#                            `report` and the `-r` per-command lines with the numbers
#                            replaced by `-`. NAME.args adds options (-M, -D).
#   framing/fuzz.txt      -> framing/fuzz.expected: random scripts whose SQL sits in an
#                            `\if 0` block; stock's load error or its -r command list.
#   expressions/expressions.txt -> expressions/expected.txt: each line EXPR runs as the
#                            script `\set x debug(EXPR)`; the result is
#                            `EXPR<TAB>stderr line<TAB>...`.
#   expressions/fuzz.txt  -> expressions/fuzz.expected: random expression and backslash
#                            command scripts, one a line (U+23CE for a newline); stock's
#                            load error or ACCEPTED.
#   builtins/              -> `-b list`, `--show-script=NAME` and failed `-b` lookups.
set -euo pipefail

cd "$(dirname "$0")/../crates/script/tests/data/parse"
pgbench=${PGBENCH:-pgbench}
"$pgbench" --version | grep -q ' 15\.' || { echo "need stock pgbench 15" >&2; exit 1; }
db=${PGDATABASE:-postgres}

args_of() { # options from NAME.args, if any
  if [ -f "$1.args" ]; then read -ra args <"$1.args"; else args=(); fi
}

# 1. load-time errors: no server involved, pgbench stops while reading the script
(
  cd errors
  for sql in *.sql; do
    name=${sql%.sql}
    args_of "$name"
    rc=0
    "$pgbench" -n -t 1 "${args[@]}" -f "$sql" "$db" >/dev/null 2>"$name.stderr" || rc=$?
    [ "$rc" -eq 1 ] || echo "warning: errors/$sql: pgbench exited with $rc, not 1" >&2
  done
)

# 2. framing: what stock sends and what -r lists for scripts that load
(
  cd framing
  for sql in *.sql; do
    name=${sql%.sql}
    args_of "$name"
    "$pgbench" -n -t 1 -r --debug "${args[@]}" -f "$sql" "$db" >"$name.out" 2>"$name.err" || true
    {
      # a "sending" entry runs until the next line of pgbench's own
      awk '/^pgbench: client 0 sending / { sub(/^pgbench: client 0 /, ""); keep = 1; print; next }
           /^pgbench: / { keep = 0; next }
           keep { print }' "$name.err"
      echo report
      awk '/^statement latencies in milliseconds/ { on = 1; next }
           on && /^ +[0-9.]+ +[0-9]+  / { sub(/^ +[0-9.]+ +[0-9]+  /, "- "); print; next }
           on { print }' "$name.out"
    } >"$name.stock"
    rm -f "$name.out" "$name.err"
  done
)

# 2b. random framing scripts (framing/fuzz.txt, one per line, U+23CE for a newline): a
#     load error, or the -r command list, newlines again as U+23CE, U+241F between
(
  cd framing
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  : >fuzz.expected.new
  while IFS= read -r script || [ -n "$script" ]; do
    case $script in '#'*) continue ;; esac
    printf '%s' "$script" | sed 's/\xe2\x8f\x8e/\n/g' >"$tmp/f.sql"
    (cd "$tmp" && "$pgbench" -n -t 1 -r -f f.sql "$db" >out 2>err) || true
    report=$(awk '/^statement latencies in milliseconds/ { on = 1; next }
                  on && /^ +[0-9.]+ +[0-9]+  / { sub(/^ +[0-9.]+ +[0-9]+  /, "- "); print; next }
                  on { print }' "$tmp/out" | sed -z 's/\n/\xe2\x8f\x8e/g')
    printf '%s\xe2\x90\x9f%s\n' "$(sed -z 's/\n/\xe2\x8f\x8e/g' "$tmp/err")" "$report" >>fuzz.expected.new
  done <fuzz.txt
  mv fuzz.expected.new fuzz.expected
)

# 3. expressions, through `\set x debug(EXPR)`
(
  cd expressions
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  : >expected.txt.new
  while IFS= read -r expr || [ -n "$expr" ]; do
    case $expr in '' | '#'*) continue ;; esac
    printf '\\set x debug(%s)\n' "$expr" >"$tmp/e.sql"
    (cd "$tmp" && "$pgbench" -n -t 1 -f e.sql "$db" >/dev/null 2>err) || true
    printf '%s\t%s\n' "$expr" "$(grep -v '^pgbench: error: Run was aborted' "$tmp/err" | paste -sd '\t' -)" \
      >>expected.txt.new
  done <expressions.txt
  mv expected.txt.new expected.txt
)

# 4. random scripts (expressions/fuzz.txt, one per line, U+23CE for newline): what stock
#    reports while loading them, or ACCEPTED when it loads them and then fails to connect
#    to a nonexistent socket directory (so no server is needed)
(
  cd expressions
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  : >fuzz.expected.new
  while IFS= read -r script || [ -n "$script" ]; do
    case $script in '#'*) continue ;; esac
    printf '%s' "$script" | sed 's/\xe2\x8f\x8e/\n/g' >"$tmp/e.sql"
    (cd "$tmp" && "$pgbench" -h /nonexistent -n -t 1 -f e.sql x >/dev/null 2>err) || true
    if grep -q 'could not create connection for setup' "$tmp/err"; then
      echo ACCEPTED >>fuzz.expected.new
    else
      sed -z 's/\n/\xe2\x8f\x8e/g' "$tmp/err" >>fuzz.expected.new
      echo >>fuzz.expected.new
    fi
  done <fuzz.txt
  mv fuzz.expected.new fuzz.expected
)

# 5. builtin scripts
(
  cd builtins
  "$pgbench" -b list 2>list.stderr >/dev/null
  for name in tpcb-like simple-update select-only; do
    "$pgbench" --show-script="$name" 2>"show-$name.stderr" >/dev/null
  done
  for prefix in s xyz '' list-; do
    "$pgbench" -b "$prefix" 2>"find-${prefix:-empty}.stderr" >/dev/null || true
  done
)

echo "recorded $(ls errors/*.stderr | wc -l) errors, $(ls framing/*.stock | wc -l) framing cases," \
  "$(wc -l <expressions/expected.txt) expressions," \
  "$(($(wc -l <expressions/fuzz.expected) + $(wc -l <framing/fuzz.expected))) random scripts"
