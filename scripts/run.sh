#!/usr/bin/env bash
# Sets up everything, builds Switchboard and starts the desktop app.
#   ./scripts/run.sh           the desktop app
#   ./scripts/run.sh --cli ... the headless CLI with these arguments (e.g. --cli chat "hi")
#
# With no provider configured yet, a local mock provider (no key, no network) is started and used
# with a throwaway data directory, so the app can be tried at once.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
npm run build --silent
cargo build --locked -p switchboard-desktop -p switchboard-cli -p switchboard-mock-provider
bin="${CARGO_TARGET_DIR:-target}/debug" # where cargo put it, as in e2e.sh

if ! "$bin/switchboard" providers list --json | grep -q '"name"'; then
  port=$(( 20000 + RANDOM % 20000 ))
  "$bin/mock-provider" --port "$port" --echo > /dev/null &
  mock_pid=$!
  trap 'kill $mock_pid 2>/dev/null || true' EXIT
  sleep 0.3
  export SWITCHBOARD_DATA_DIR="${SWITCHBOARD_DATA_DIR:-$(mktemp -d)}"
  "$bin/switchboard" providers add demo --base-url "http://127.0.0.1:$port/v1" --model mock-model --default > /dev/null
  echo "No provider is configured: using a local mock provider (data in $SWITCHBOARD_DATA_DIR)."
  echo "Add a real one with: $bin/switchboard providers add openai --base-url https://api.openai.com/v1 --model gpt-4o-mini"
fi

if [ "${1:-}" = "--cli" ]; then
  shift
  "$bin/switchboard" "$@"
  exit $?
fi
"$bin/switchboard-desktop"
