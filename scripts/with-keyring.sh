#!/usr/bin/env bash
# Runs CMD... against a real, throwaway Secret Service: a private D-Bus session bus
# (dbus-run-session) with an unlocked GNOME Keyring whose files live in a temporary HOME that is
# deleted afterwards. Exports SWITCHBOARD_TEST_KEYRING=1 so the keychain integration tests run
# instead of skipping (and SWITCHBOARD_TEST_KEYRING_DISPOSABLE=1, which lets them lock it at the
# end to test the "locked" explanation). The person's own keychain, bus and HOME are never touched.
#
#   scripts/with-keyring.sh cargo test -p switchboard-secrets
#
# Needs (Debian/Ubuntu): apt-get install -y dbus gnome-keyring
# (dbus-x11 is not needed: dbus-run-session comes with the `dbus` package.)
set -euo pipefail

if [[ $# -eq 0 ]]; then
    echo "usage: $0 CMD [ARGS...]" >&2
    exit 2
fi

for tool in dbus-run-session gnome-keyring-daemon; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "$0: '$tool' is not installed; on Debian/Ubuntu: sudo apt-get install -y dbus gnome-keyring" >&2
        exit 127
    fi
done

# Cargo and rustup find their homes through HOME; pin them before HOME moves, so the command
# still finds the toolchain and the registry cache.
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"

scratch="$(mktemp -d "${TMPDIR:-/tmp}/switchboard-keyring.XXXXXX")"
cleanup() { rm -rf "$scratch"; }
trap cleanup EXIT

mkdir -p "$scratch/home" "$scratch/runtime" "$scratch/data" "$scratch/config" "$scratch/cache"
chmod 700 "$scratch/runtime"

export HOME="$scratch/home"
export XDG_RUNTIME_DIR="$scratch/runtime"
export XDG_DATA_HOME="$scratch/data"
export XDG_CONFIG_HOME="$scratch/config"
export XDG_CACHE_HOME="$scratch/cache"
export SWITCHBOARD_TEST_KEYRING=1
# Tells the tests this keyring is disposable, so they may also lock it to test that path.
export SWITCHBOARD_TEST_KEYRING_DISPOSABLE=1
# No display: GNOME Keyring must never try to show a prompt window.
unset DISPLAY WAYLAND_DISPLAY

# Inside the private bus: start the keyring, unlocked with a throwaway password (which also
# creates the default "login" collection in the scratch HOME), then run the command. The daemon
# exits on its own when dbus-run-session tears the bus down.
# shellcheck disable=SC2016 # expanded by the inner shell
dbus-run-session -- bash -c '
    set -euo pipefail
    keyring_env="$(printf "switchboard-test" | gnome-keyring-daemon --replace --unlock --components=secrets --daemonize)"
    # It prints GNOME_KEYRING_CONTROL=...; export it so clients that look for it find it.
    while IFS= read -r line; do
        [[ "$line" == *=* ]] && export "${line?}"
    done <<<"$keyring_env"
    "$@"
' with-keyring "$@"
