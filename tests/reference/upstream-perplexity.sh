#!/usr/bin/env bash
# Upstream llama.cpp's own figures for tst_perplexity's upstream rows. Compiles upstream's
# llama-quantize and llama-perplexity from the source bundle node-llama-cpp ships, linked to that
# release's prebuilt libraries in the same package (a minute, where building llama.cpp whole takes
# half an hour on two cores); writes the tiny model's Q4_K_M file with upstream's quantizer (the
# committed test file); prints upstream's perplexity of the F16 and Q4_K_M files on the held-out
# text. Upstream runs a `llama` file with SiLU, so Ember's rows run with --ffn-act silu. CI does not
# run this: the test compares with the figures it printed.
#
#   tests/reference/upstream-perplexity.sh [WORK_DIR]   (default /tmp/upstream-tools)
set -euo pipefail
cd "$(dirname "$0")"
work=${1:-/tmp/upstream-tools}
libs=$PWD/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
[ -d "$libs" ] || { echo "run tests/reference/install.sh first" >&2; exit 2; }
mkdir -p "$work/bin"
[ -d "$work/src" ] || git clone -q node_modules/node-llama-cpp/llama/gitRelease.bundle "$work/src"
for tool in perplexity quantize; do
    (cd "$work/src" && g++ -std=c++17 -O2 -Iinclude -Iggml/include -Icommon "tools/$tool/$tool.cpp" "tools/$tool/main.cpp" \
        -o "$work/bin/llama-$tool" -L"$libs" -l:libllama-common.so -l:libllama.v0.4.0.so -l:libggml.v0.4.0.so \
        -l:libggml-base.so -Wl,-rpath,"$libs" -pthread)
done
# ggml loads its CPU backend from the program's folder.
ln -sf "$libs"/libggml-cpu-*.so "$work/bin/"
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
