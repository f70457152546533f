#!/usr/bin/env bash
# Upstream llama.cpp's own figures for tst_perplexity's upstream rows. Builds upstream's
# llama-quantize and llama-perplexity (build-upstream-tools.sh); writes the tiny model's Q4_K_M
# file with upstream's quantizer (the committed test file); prints upstream's perplexity of the F16 and Q4_K_M files on the held-out
# text. Upstream runs a `llama` file with SiLU, so Ember's rows run with --ffn-act silu. CI does not
# run this: the test compares with the figures it printed.
#
#   tests/reference/upstream-perplexity.sh [WORK_DIR]   (default /tmp/upstream-tools)
set -euo pipefail
cd "$(dirname "$0")"
work=${1:-/tmp/upstream-tools}
./build-upstream-tools.sh "$work" perplexity quantize
data=../data/tiny-relu-llama
"$work/bin/llama-quantize" "$data/model.dense.gguf" "$data/model.dense.q4_k_m.upstream.gguf" Q4_K_M >/dev/null 2>&1
for m in model.dense.gguf model.dense.q4_k_m.upstream.gguf; do
    # The whole text (BENCHMARKS.md) and its first 40 chunks (the test). -b 256: one 256-token
    # chunk per batch, as Ember evaluates it.
    for chunks in -1 40; do
        echo "== $m, --chunks $chunks"
        "$work/bin/llama-perplexity" -m "$data/$m" -f "$data/val.txt" -c 256 -b 256 -t 2 --chunks $chunks \
            --load-mode none 2>&1 | grep -E 'calculating perplexity over|Final estimate'
    done
done
