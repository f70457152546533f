#!/usr/bin/env bash
# The `ember` executable itself, as a user or the package check starts it: `--self-check` answers a
# prompt with the bundled demo model on a first run, and fails with the reason for a bad model.
set -euo pipefail
ember=$1
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
export QT_QPA_PLATFORM=offscreen

"$ember" --data-dir "$data/first" --self-check "In the beginning" >"$data/ok.log" 2>&1 || { cat "$data/ok.log"; exit 1; }
grep -q "^model: ember-demo.powerinfer (sparse)" "$data/ok.log" || { echo "demo model not loaded:"; cat "$data/ok.log"; exit 1; }
grep -q "^answer: ..*" "$data/ok.log" || { echo "no answer:"; cat "$data/ok.log"; exit 1; }
[ -f "$data/first/models/ember/ember-demo/activation/activation_5.pt" ] || { echo "demo not copied with its statistics"; exit 1; }
[ -f "$data/first/chats.db" ] || { echo "no chat database"; exit 1; }

printf 'GGUF\3\0\0\0' >"$data/truncated.gguf"
if "$ember" --data-dir "$data/bad" --model "$data/truncated.gguf" --self-check hi >"$data/bad.log" 2>&1; then
    echo "a truncated model passed the self-check"; exit 1
fi
grep -q "the model did not load: .*truncated.gguf" "$data/bad.log" || { echo "no reason naming the file:"; cat "$data/bad.log"; exit 1; }
grep -q "self-check: FAILED" "$data/bad.log"
echo "self-check behaves"
