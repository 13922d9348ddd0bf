#!/usr/bin/env bash
# Installs the Python reference MCP server (mcp-server-time) that the MCP client tests talk to,
# into a private virtualenv at <target>/mcp-venv, where <target> is $CARGO_TARGET_DIR when set,
# else <repo>/target. (The npm reference servers come from package.json via `npm ci`.)
# Safe to run again: it checks first and prints nothing when the pinned version is already there.
set -euo pipefail

MCP_SERVER_TIME_VERSION="2026.10.19"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# A relative CARGO_TARGET_DIR is relative to the caller's directory, as it is for cargo.
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in
  /*) ;;
  *) target="$PWD/$target" ;;
esac
venv="$target/mcp-venv"

installed_version() {
  [ -x "$venv/bin/python" ] && [ -x "$venv/bin/mcp-server-time" ] || return 1
  "$venv/bin/python" - <<'EOF' 2>/dev/null
from importlib.metadata import version
print(version("mcp-server-time"))
EOF
}

if [ "$(installed_version || true)" = "$MCP_SERVER_TIME_VERSION" ]; then
  exit 0
fi

echo "mcp-servers: installing mcp-server-time $MCP_SERVER_TIME_VERSION into $venv"
if ! command -v python3 >/dev/null 2>&1; then
  echo "mcp-servers: python3 (3.10 or newer, with venv and pip) is needed; run scripts/setup.sh." >&2
  exit 1
fi
# A venv whose interpreter no longer runs (the system Python moved on) is rebuilt from scratch.
if [ -e "$venv" ] && ! "$venv/bin/python" -c '' >/dev/null 2>&1; then
  rm -rf "$venv"
fi
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$target"
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  "mcp-server-time==$MCP_SERVER_TIME_VERSION"
"$venv/bin/mcp-server-time" --help >/dev/null
