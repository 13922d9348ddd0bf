#!/usr/bin/env bash
# Sets up everything, builds Switchboard and starts it.
#
# Until the desktop app lands this starts the headless CLI: with no provider configured it starts
# the local mock provider (no key, no network) so the first chat works out of the box.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cargo build --release --locked -p switchboard-cli -p switchboard-mock-provider
bin=target/release

if ! "$bin/switchboard" providers list --json | grep -q '"name"'; then
  port=$(( 20000 + RANDOM % 20000 ))
  "$bin/mock-provider" --port "$port" --echo > /dev/null &
  mock_pid=$!
  trap 'kill $mock_pid 2>/dev/null || true' EXIT
  sleep 0.3
  export SWITCHBOARD_DATA_DIR="${SWITCHBOARD_DATA_DIR:-$(mktemp -d)}"
  "$bin/switchboard" providers add demo --base-url "http://127.0.0.1:$port/v1" --model mock-model --default > /dev/null
  echo "No provider is configured: using the local mock provider (data in $SWITCHBOARD_DATA_DIR)."
  echo "Add a real one with: switchboard providers add openai --base-url https://api.openai.com/v1 --model gpt-4o-mini"
  echo
fi

if [ $# -gt 0 ]; then
  exec "$bin/switchboard" "$@"
fi
echo "Type a message and press Enter (Ctrl-D to quit). Try: what time is it?"
args=(chat)
while IFS= read -r -p "> " line; do
  [ -n "$line" ] || continue
  "$bin/switchboard" "${args[@]}" "$line" || true
  args=(chat --continue)
done
