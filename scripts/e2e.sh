#!/usr/bin/env bash
# End-to-end tests of the REAL desktop app under a virtual display, over WebDriver
# (tests/e2e: fantoccini -> tauri-driver -> WebKitWebDriver -> target/.../switchboard-desktop).
#
#   scripts/e2e.sh                 build the UI and the app, run the e2e suite under Xvfb
#   scripts/e2e.sh FILTER...       only the tests whose names contain FILTER (cargo test filters)
#   scripts/e2e.sh --bench         build, then run the desktop benchmarks instead of the tests
#
# Needs: xvfb-run, WebKitWebDriver (Debian/Ubuntu: webkit2gtk-driver; scripts/setup.sh installs
# both) and tauri-driver (the root devDependency @crabnebula/tauri-driver, or TAURI_DRIVER=path).
# Screenshots of every step land in tests/artifacts/e2e/ (gitignored).
set -euo pipefail
cd "$(dirname "$0")/.."

bench=0
if [ "${1:-}" = "--bench" ]; then
  bench=1
  shift
fi

target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac

# The app embeds ui/dist when it is compiled, so the UI is built first. (It embeds it through
# Tauri's custom-protocol feature, on by default in src-tauri; a `--no-default-features` build
# loads the Vite dev server instead, and the tests refuse it.)
npm run build
cargo build -p switchboard-desktop

# Test a private copy: another build in the shared target dir must not swap the binary mid-run.
mkdir -p "$target/e2e"
cp "$target/debug/switchboard-desktop" "$target/e2e/switchboard-desktop.tmp"
mv -f "$target/e2e/switchboard-desktop.tmp" "$target/e2e/switchboard-desktop"
export SWITCHBOARD_APP="$target/e2e/switchboard-desktop"

if [ "$bench" = 1 ]; then
  exec xvfb-run -a -s "-screen 0 1280x800x24" env SWITCHBOARD_E2E=1 \
    cargo bench -p switchboard-e2e --bench desktop -- "$@"
fi
exec xvfb-run -a -s "-screen 0 1280x800x24" env SWITCHBOARD_E2E=1 \
  cargo test -p switchboard-e2e -- --test-threads=1 "$@"
