#!/usr/bin/env bash
# The `ember` executable itself, as a user or the package check starts it, end to end: on a first
# run with --data-dir, `--self-check` sends a prompt to the bundled demo model in the window, sees
# the answer stream in, stops it, regenerates it (any QML warning fails it), and both answers are
# then in the database; a bad model fails with the reason.
set -euo pipefail
ember=$1
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
export QT_QPA_PLATFORM=offscreen

"$ember" --data-dir "$data/first" --self-check "In the beginning" >"$data/ok.log" 2>&1 || { cat "$data/ok.log"; exit 1; }
grep -q "^model: ember-demo.powerinfer (sparse)" "$data/ok.log" || { echo "demo model not loaded:"; cat "$data/ok.log"; exit 1; }
for step in "streaming: ." "stopped: ." "answer: ..* (answer 2 of 2)\$" "self-check: ok"; do
    grep -q "^$step" "$data/ok.log" || { echo "no '$step' line:"; cat "$data/ok.log"; exit 1; }
done
[ -f "$data/first/models/ember/ember-demo/activation/activation_5.pt" ] || { echo "demo not copied with its statistics"; exit 1; }
[ -f "$data/first/chats.db" ] || { echo "no chat database"; exit 1; }
# The history: the question, and under it the stopped answer and the regenerated one, both saved.
python3 - "$data/first/chats.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT id, parent_id, role, status, stop_reason, content FROM messages ORDER BY id").fetchall()
assert [r[2] for r in rows] == ["user", "assistant", "assistant"], rows
question = rows[0][0]
assert all(r[1] == question and r[3] == "complete" and r[5] for r in rows[1:]), rows
assert rows[1][4] == "stopped" and rows[2][4] != "stopped", rows
PY

printf 'GGUF\3\0\0\0' >"$data/truncated.gguf"
if "$ember" --data-dir "$data/bad" --model "$data/truncated.gguf" --self-check hi >"$data/bad.log" 2>&1; then
    echo "a truncated model passed the self-check"; exit 1
fi
grep -q "the model did not load: .*truncated.gguf" "$data/bad.log" || { echo "no reason naming the file:"; cat "$data/bad.log"; exit 1; }
grep -q "self-check: FAILED" "$data/bad.log"
echo "self-check behaves"
