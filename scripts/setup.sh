#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build, run and test Switchboard:
# system libraries for the Tauri desktop shell (WebKitGTK), the test-only tools (Xvfb, WebKit's
# WebDriver, a throwaway D-Bus + gnome-keyring for the keychain tests), Rust, the UI's npm
# packages and the reference MCP servers the MCP client tests run. Safe to run again: every step
# checks first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

apt_packages=(
  build-essential pkg-config curl git file
  libwebkit2gtk-4.1-dev libgtk-3-dev librsvg2-dev libsoup-3.0-dev
  xvfb xauth webkit2gtk-driver dbus dbus-x11 gnome-keyring
  python3-venv python3-pip
)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "setup: installing the Rust toolchain with rustup"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --default-toolchain none
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
fi
# rust-toolchain.toml pins the version; this fetches it (with rustfmt and clippy) when missing.
cargo --version >/dev/null

node_ok() {
  command -v node >/dev/null 2>&1 && node -e '
    const [a, b] = process.versions.node.split(".").map(Number);
    process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'
}
if ! node_ok; then
  echo "setup: installing Node.js from the distribution"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null || true
  if ! node_ok; then
    echo "setup: Switchboard's UI build needs Node.js 20.19 or newer; this system has $(node --version 2>/dev/null || echo none)." >&2
    echo "       Install it (for example from https://nodejs.org or with nvm) and run this again." >&2
    exit 1
  fi
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing the UI's npm packages"
  npm ci --no-audit --no-fund --loglevel=error
fi

# The Python reference MCP server the MCP client tests run (the npm ones came with npm ci above).
scripts/mcp-servers.sh
