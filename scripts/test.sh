#!/usr/bin/env bash
# Sets up everything, then runs every check CI runs: formatting, lints, type checks, all tests
# (the UI's, the engine's, the desktop app end to end under Xvfb, the keychain against a real
# Secret Service in a throwaway D-Bus session).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

echo "== UI: lint, type check, unit tests, build"
npm run lint
npm run check
npm test
npm run build

echo "== Rust: format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== Rust: all tests (the desktop app end to end under Xvfb; the keychain on a real Secret Service)"
export SWITCHBOARD_E2E=1
runner=(cargo test --workspace --locked --no-fail-fast --exclude switchboard-e2e)
if command -v cargo-nextest >/dev/null 2>&1; then
  runner=(cargo nextest run --workspace --locked --no-fail-fast --exclude switchboard-e2e)
fi
xvfb-run -a -s "-screen 0 1280x800x24" scripts/with-keyring.sh "${runner[@]}"
if [ "${runner[1]}" = nextest ]; then
  cargo test --workspace --locked --doc
fi
echo "== The desktop app end to end (one app at a time)"
xvfb-run -a -s "-screen 0 1280x800x24" cargo test --locked -p switchboard-e2e -- --test-threads=1
