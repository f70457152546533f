#!/usr/bin/env bash
# Compiles upstream llama.cpp's own command-line tools (llama-TOOL for each TOOL given) from the
# source bundle node-llama-cpp ships, linked to that release's prebuilt libraries in the same
# package: a minute, where building llama.cpp whole takes half an hour on two cores. Reference
# use only (tests/reference/*.sh); nothing of it ships or is copied.
#
#   tests/reference/build-upstream-tools.sh WORK_DIR TOOL...   (e.g. /tmp/upstream-tools quantize)
set -euo pipefail
cd "$(dirname "$0")"
work=$1
shift
libs=$PWD/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
[ -d "$libs" ] || { echo "run tests/reference/install.sh first" >&2; exit 2; }
mkdir -p "$work/bin"
[ -d "$work/src" ] || git clone -q node_modules/node-llama-cpp/llama/gitRelease.bundle "$work/src"
for tool in "$@"; do
    [ -x "$work/bin/llama-$tool" ] && continue
    (cd "$work/src" && g++ -std=c++17 -O2 -Iinclude -Iggml/include -Icommon "tools/$tool/$tool.cpp" "tools/$tool/main.cpp" \
        -o "$work/bin/llama-$tool" -L"$libs" -l:libllama-common.so -l:libllama.v0.4.0.so -l:libggml.v0.4.0.so \
        -l:libggml-base.so -Wl,-rpath,"$libs" -pthread)
done
# ggml loads its CPU backend from the program's folder.
ln -sf "$libs"/libggml-cpu-*.so "$work/bin/"
