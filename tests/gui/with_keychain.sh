#!/bin/sh
# Runs a test binary against a real system keychain that is not the user's: a private D-Bus
# session with its own gnome-keyring (Secret Service), its keyrings in a scratch HOME.
# Usage: with_keychain.sh TEST_BINARY [ARGS…]
set -eu
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" XDG_DATA_HOME="$scratch/data" XDG_RUNTIME_DIR="$scratch/run" EMBER_TEST_KEYCHAIN=1
mkdir -p "$XDG_DATA_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
exec dbus-run-session -- sh -c 'printf ember | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec "$@"' sh "$@"
