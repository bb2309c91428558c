#!/usr/bin/env bash
# Side-by-side benchmark of pgbench-rs against stock pgbench on a throwaway server
# tuned for benchmarking. See benches/README.md for how to read the results.
#   benches/compare.sh [--pairs N] [--seconds S] [--scale N] [--only NAME,...] [--no-callgrind] [--no-init]
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in /usr/bin/time python3; do
  command -v "$tool" >/dev/null || { echo "$tool is needed (Debian: apt-get install time python3)" >&2; exit 1; }
done
cargo build --release --locked --quiet
exec python3 benches/compare.py "$@"
