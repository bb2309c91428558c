#!/usr/bin/env bash
# The project's whole check, as README.md gives it: the paths the docs quote,
# formatting, unused dependencies, lints, every test (the server tests start their
# own throwaway clusters; nothing is skipped). docs/testing.md says what is tested where.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/check-paths.sh
python3 scripts/check-circles.py
cargo fmt --all --check
# No dependency that nothing uses (.ci/run installs cargo-machete).
cargo machete
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet
cargo test --workspace --locked
