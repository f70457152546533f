#!/usr/bin/env bash
# Builds the .deb and .rpm from a finished build, validates the desktop metadata, installs the .deb
# with apt, runs the installed /usr/bin/ember on the offscreen platform until it has answered one
# prompt with the bundled demo model, then removes the package and checks nothing is left behind.
# Needs root (or sudo) for apt; CI runs it from .ci/run.  Usage: check-package.sh [BUILD_DIR]
set -euo pipefail
build=$(realpath "${1:-build}")
here=$(cd "$(dirname "$0")" && pwd)
run() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
export DEBIAN_FRONTEND=noninteractive

appstreamcli validate --no-net "$here/io.github.emberapp.Ember.metainfo.xml"
desktop-file-validate "$here/io.github.emberapp.Ember.desktop"

rm -f "$build"/ember_*.deb "$build"/ember-*.rpm
(cd "$build" && cpack -G "DEB;RPM" >/dev/null)
deb=$(ls "$build"/ember_*.deb)
rpm=$(ls "$build"/ember-*.rpm)
echo "built $(basename "$deb") ($(du -h "$deb" | cut -f1)) and $(basename "$rpm") ($(du -h "$rpm" | cut -f1))"
rpm -qpl "$rpm" | grep -x /usr/bin/ember >/dev/null || { echo "FAILED: $rpm has no /usr/bin/ember"; exit 1; }

if dpkg -s ember >/dev/null 2>&1; then echo "FAILED: a package named ember is already installed; not touching it"; exit 1; fi
data=$(mktemp -d)
cleanup() { run apt-get remove -y ember >/dev/null 2>&1 || true; rm -rf "$data"; }
trap cleanup EXIT

run apt-get install -y --no-install-recommends "$deb" >/dev/null
[ "$(command -v ember)" = /usr/bin/ember ] || { echo "FAILED: ember is not on PATH at /usr/bin/ember"; exit 1; }
[ -f /usr/share/applications/io.github.emberapp.Ember.desktop ] || { echo "FAILED: no desktop entry"; exit 1; }
[ -f /usr/share/icons/hicolor/256x256/apps/io.github.emberapp.Ember.png ] || { echo "FAILED: no icon"; exit 1; }

# From a folder with no build tree in sight, so the demo model can only come from the package.
(cd "$data" && QT_QPA_PLATFORM=offscreen timeout 180 /usr/bin/ember --data-dir "$data/profile" \
    --self-check "And God said") | tee "$data/self-check.log"
grep -q "^model: ember-demo" "$data/self-check.log" || { echo "FAILED: the installed app did not load the demo model"; exit 1; }
grep -q "^self-check: ok" "$data/self-check.log" || { echo "FAILED: no answer from the installed app"; exit 1; }
[ -f "$data/profile/models/ember/ember-demo/ember-demo.powerinfer.gguf" ] \
    || { echo "FAILED: the demo model was not copied into the user's library"; exit 1; }

# The installed ember-calibrate measures a dense model on the installed calibration text, where the
# app looks for it (share/ember/calibration beside bin/).
"$build/bin/ember-synth-model" -o "$data/dense.gguf" --type Q4_0 --n-layer 2 --n-embd 128 --n-head 2 --n-ff 512 \
    --n-vocab 512 >/dev/null
/usr/bin/ember-calibrate -m "$data/dense.gguf" -f /usr/share/ember/calibration/calibration.txt -c 64 --max-tokens 512 \
    --quality-tokens 128 >/dev/null 2>&1 && [ -s "$data/dense.sparsity.gguf" ] \
    || { echo "FAILED: the installed ember-calibrate did not measure a dense model on the installed text"; exit 1; }

# The installed API server, on the installed demo model, answers a completion over loopback (its
# HTTP library is a dependency of the package).
/usr/bin/ember-server -m /usr/share/ember/models/ember-demo/ember-demo.powerinfer.gguf --port 0 \
    >"$data/server.port" 2>"$data/server.log" &
server=$!
for _ in $(seq 100); do [ -s "$data/server.port" ] && break; sleep 0.1; done
port=$(head -1 "$data/server.port")
answer=$(curl -s "http://127.0.0.1:$port/v1/completions" -d '{"prompt": "And God said", "max_tokens": 4}' || true)
kill "$server"; wait "$server" || true
echo "$answer" | grep -q '"completion_tokens":4' || { echo "FAILED: the installed ember-server did not answer: $answer"; cat "$data/server.log"; exit 1; }

run apt-get remove -y ember >/dev/null
trap 'rm -rf "$data"' EXIT
leftovers=$(ls -d /usr/bin/ember /usr/bin/ember-* /usr/share/ember /usr/share/applications/io.github.emberapp.Ember.desktop \
                 /usr/share/metainfo/io.github.emberapp.Ember.metainfo.xml 2>/dev/null || true)
[ -z "$leftovers" ] || { echo "FAILED: left behind after removal: $leftovers"; exit 1; }
echo "package check: ok (installed, answered a prompt in the app and over the API, calibrated a dense model, removed cleanly)"
