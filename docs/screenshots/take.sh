#!/usr/bin/env bash
# Retakes the README's screenshots from the real app on a virtual X display (xvfb-run, Debian's
# xvfb), in the light and the dark theme: the chat while an answer streams, the split view after
# it, the same chat at 800×600, and the Models page mid-download. The Hub is the tests'
# loopback stand-in (tests/downloader/hub_server.py) serving the bundled demo model as a repo,
# throttled so the download is caught in progress.
#
#   docs/screenshots/take.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
hub=$(mktemp -d)
server=
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    rm -rf "$hub"
}
trap cleanup EXIT

mkdir -p "$hub/files/ember/ember-demo"
cp -r resources/models/ember-demo/. "$hub/files/ember/ember-demo/"
cat >"$hub/config.json" <<'JSON'
{"repos": {"ember/ember-demo": {"sha": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4"}},
 "faults": [{"kind": "throttle", "count": -1, "bytes_per_second": 3000000}]}
JSON
source tests/downloader/start_hub_server.sh
start_hub_server "$hub"

for theme in light dark; do
    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1920x1080x24" "$build/bin/ember-screenshots" docs/screenshots \
        --theme "$theme" --hub "http://127.0.0.1:$port" ember/ember-demo ember-demo.powerinfer.gguf
done
