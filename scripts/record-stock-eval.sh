#!/usr/bin/env bash
# Records what stock pgbench prints for expressions and seeded random sequences, so
# that the evaluator's tests (crates/script/tests/eval_*.rs) can compare without a
# server. Needs a running server (PGHOST/PGPORT/PGUSER/PGDATABASE, default: the dev
# server on /tmp/pgdev) and stock pgbench 15 on PATH (or PGBENCH=/path/to/pgbench).
#
#   crates/script/tests/data/eval/expressions.txt  one expression per line, run as
#       `\set x debug(EXPR)` with `-n -t 1 --random-seed=42` plus any options given
#       after ` ;; `; the result goes to expected.txt as
#       `LINE<TAB>OUTPUT[<TAB>OUTPUT...]` where OUTPUT is a `debug(...)` line or a
#       `pgbench: error: ...` message (abort notices dropped), or `PARSE-ERROR` when
#       stock rejects the script at load time.
#   crates/script/tests/data/eval/seq/cases.txt  one run per line (`NAME OPTIONS`);
#       the scripts print their values with `\shell echo :client_id ... >&2`, one line
#       per write, so threads cannot interleave inside a line; stderr goes to
#       seq/NAME.out with pgbench's own messages dropped.
set -euo pipefail

cd "$(dirname "$0")/.."
data=crates/script/tests/data/eval
: "${PGHOST:=/tmp/pgdev}" "${PGUSER:=postgres}" "${PGDATABASE:=postgres}"
export PGHOST PGUSER PGDATABASE
pgbench=${PGBENCH:-pgbench}
"$pgbench" --version | grep -q ' 15\.' || { echo "need stock pgbench 15" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# pgbench's own notices, which are not part of an expression's result.
noise='^pgbench: (setting random seed to|error: client [0-9]+ aborted in command|error: Run was aborted)'

out=$data/expected.txt
: >"$out.new"
while IFS= read -r line || [ -n "$line" ]; do
  case $line in '' | '#'*) continue ;; esac
  expr=${line%% ;; *}
  opts=()
  if [ "$expr" != "$line" ]; then
    eval "opts=(${line#* ;; })"
  fi
  seed=(--random-seed=42)
  for o in "${opts[@]}"; do
    case $o in --random-seed=*) seed=() ;; esac
  done
  printf '\\set x debug(%s)\n' "$expr" >"$tmp/expr.sql"
  # Expressions may fail on purpose: pgbench then exits 2 (run) or 1 (load).
  "$pgbench" -n -t 1 "${seed[@]}" "${opts[@]}" -f "$tmp/expr.sql" >/dev/null 2>"$tmp/err" || true
  if grep -q "^pgbench: error: $tmp/expr.sql:1: " "$tmp/err"; then
    result=PARSE-ERROR
  else
    result=$(grep -Ev "$noise" "$tmp/err" | paste -sd '\t' -)
  fi
  printf '%s\t%s\n' "$line" "$result" >>"$out.new"
done <"$data/expressions.txt"
mv "$out.new" "$out"
echo "wrote $out ($(wc -l <"$out") expressions)"

while read -r name args; do
  case $name in '' | '#'*) continue ;; esac
  read -ra argv <<<"$args"
  if ! (cd "$data/seq" && "$pgbench" -n "${argv[@]}" >/dev/null 2>"$tmp/seq.err"); then
    echo "stock run $name failed:" >&2
    cat "$tmp/seq.err" >&2
    exit 1
  fi
  {
    echo "# pgbench -n $args"
    grep -Ev "$noise" "$tmp/seq.err"
  } >"$data/seq/$name.out"
  echo "wrote $data/seq/$name.out ($(($(wc -l <"$data/seq/$name.out") - 1)) lines)"
done <"$data/seq/cases.txt"
