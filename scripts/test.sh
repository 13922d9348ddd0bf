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

if [ -n "${CI:-}" ]; then
  # The test executables (a few GiB) are not run again; CI's disk is not ours to fill.
  find "${CARGO_TARGET_DIR:-target}/debug/deps" -maxdepth 1 -type f -perm -u+x ! -name '*.so' -delete
  df -h "${CARGO_TARGET_DIR:-target}" | tail -n 1
fi

echo "== The installer: a release .deb, unpacked; the desktop end-to-end suite runs the app it ships"
# The suite (one app at a time) drives the production build: embedded UI, its CSP, stripped binary.
npm run tauri build -- --bundles deb --ci
target="${CARGO_TARGET_DIR:-target}"
deb="$(ls -t "$target"/release/bundle/deb/*.deb | head -n 1)"
echo "built $deb ($(du -h "$deb" | cut -f1))"
# Every package it depends on exists under that name (and is installed here).
dpkg-deb -f "$deb" Depends | tr ',' '\n' | awk 'NF {print $1}' | xargs dpkg-query -W
unpacked="$(mktemp -d)"
trap 'rm -rf "$unpacked"' EXIT
dpkg-deb -x "$deb" "$unpacked"
test -f "$unpacked/usr/share/applications/Switchboard.desktop"
SWITCHBOARD_APP="$unpacked/usr/bin/switchboard-desktop" \
  xvfb-run -a -s "-screen 0 1280x800x24" cargo test --locked -p switchboard-e2e -- --test-threads=1
