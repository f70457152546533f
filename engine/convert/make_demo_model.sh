#!/bin/bash
# Rebuilds resources/models/ember-demo/ from nothing but Debian packages, deterministically:
# KJV text -> SentencePiece tokenizer -> a ReLU LLaMA trained from scratch -> activation
# profile -> predictors -> PowerInfer PWRI file (F16) + activation/ -> README figures.
#
#   engine/convert/make_demo_model.sh [WORK_DIR]
#
# Needs: apt-get install bible-kjv bible-kjv-text python3-torch python3-numpy
# python3-sentencepiece libopenblas0-pthread, and a build with ember-cli (EMBER_BIN, default
# build/bin). Runs single-threaded and niced (30-40 minutes on one core); the work folder
# (default /tmp/ember-demo-work) keeps the HF checkpoint and every log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:-/tmp/ember-demo-work}
bin=${EMBER_BIN:-$root/build/bin}
out=$root/resources/models/ember-demo
py="nice -n 19 /usr/bin/python3"
if ! command -v bible > /dev/null; then
    echo "make_demo_model.sh: needs the Debian packages bible-kjv and bible-kjv-text" >&2
    exit 1
fi
mkdir -p "$work"

bible -f Gen1:1-Rev22:21 | $py "$here/demo/kjv_corpus.py" "$work"
$py "$here/demo/train_tokenizer.py" "$work" 4096
$py "$here/demo/train_demo.py" "$work/train.txt" "$work/valid.txt" "$work/tokenizer.model" "$work/hf" \
    | tee "$work/train.log"
$py "$here/ember-profile" "$work/hf" "$work/train.txt" -o "$work/activation" --max-tokens 100000 \
    | tee "$work/profile.log"
$py "$here/ember-train-predictor" "$work/hf" "$work/train.txt" -o "$work/predictor" | tee "$work/predictor.log"
$py "$here/ember-convert" "$work/hf" "$work/predictor" -o "$work/ember-demo.powerinfer.gguf" --outtype f16
$py "$here/demo/evaluate_demo.py" "$work/hf" "$work/predictor" "$work/activation" "$work/valid.txt" \
    | tee "$work/figures.json"

rm -rf "$out/activation"
mkdir -p "$out/activation"
cp "$work/ember-demo.powerinfer.gguf" "$out/"
cp "$work"/activation/activation_*.pt "$out/activation/"
for prompt in "In the beginning" "And it came to pass" "And Jesus said unto them," "The LORD is my shepherd"; do
    "$bin/ember-cli" -m "$out/ember-demo.powerinfer.gguf" -p "$prompt" -n 32 --temp 0 --repeat-penalty 1.0 -t 1 \
        2> /dev/null
    echo
done | tee "$work/samples.txt"
