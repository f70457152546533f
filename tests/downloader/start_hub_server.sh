# Sourced by scripts that need the tests' loopback Hub (hub_server.py) outside the test suite.
# start_hub_server DIR: serves DIR (see hub_server.py for its layout) and sets `server` (the
# pid, for the caller's cleanup) and `port` (the Hub API's port), or exits with the server's log.
start_hub_server() {
    local dir=$1
    python3 "$(dirname "${BASH_SOURCE[0]}")/hub_server.py" "$dir" >"$dir/ports" 2>"$dir/server.log" &
    server=$!
    for _ in $(seq 50); do grep -q PORTS "$dir/ports" && break; sleep 0.1; done
    port=$(awk '/PORTS/ {print $2}' "$dir/ports")
    [ -n "$port" ] || { echo "the Hub stand-in did not start:" >&2; cat "$dir/server.log" >&2; exit 1; }
}
