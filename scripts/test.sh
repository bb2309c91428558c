#!/usr/bin/env bash
# The project's whole check, as README.md gives it: first what the tests need is
# installed where missing (scripts/test-deps.sh: Debian's current PostgreSQL 15 and
# stock pgbench, sysbench, Prometheus, Chromium, ...), then the paths the docs quote,
# formatting, unused dependencies, lints, and every test. Nothing is skipped: CI=true
# makes a test that lacks a tool fail rather than say "skipped", and the server tests
# start their own throwaway clusters. Every test binary runs even after one fails
# (--no-fail-fast), so one failure never hides the others. docs/testing.md says what is
# tested where.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=test-deps.sh
. scripts/test-deps.sh
export CI=true
scripts/check-paths.sh
python3 scripts/check-circles.py
cargo fmt --all --check
cargo machete
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet
cargo test --workspace --locked --no-fail-fast
