#!/usr/bin/env bash
# The engine's CPU path on a 64-bit ARM CPU, the one an Apple Silicon Mac runs (the NEON kernels:
# a dot product for every weight type, the F16/Q4_0/Q8_0 row axpys; the ARM spin-wait hint): builds ember-cli,
# ember-quantize and the kernel check with Debian's g++-aarch64-linux-gnu and runs them under
# qemu-user (Debian's qemu-user) on Linux. The NEON kernels must agree with the scalar ones; given
# the x86 build's tools, the same greedy text on the demo model and a Q4_0 PowerInfer model, and
# the same quantized file byte for byte. No Mac is at hand; this is the part of the macOS
# build that can be checked here.
#
#   packaging/macos/arm64-engine-check.sh OUT_DIR X86_BIN_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
source packaging/same_greedy_text.sh
out=$1
x86=$2
cxx=aarch64-linux-gnu-g++
mkdir -p "$out/obj"
library=$(ls engine/{gguf,tensor,tokenizer,sampling,sparse,model,session}/*.cpp engine/backend/*.cpp \
             engine/backend/arena/*.cpp engine/backend/sim/*.cpp engine/backend/no_gpu/*.cpp)
printf '%s\n' $library engine/tools/ember_cli.cpp engine/tools/intermediate_dump.cpp engine/tools/ember_quantize.cpp \
    tests/engine/arm_kernels_check.cpp |
    xargs -P "$(nproc)" -I{} sh -c "$cxx -std=c++20 -O2 -Wall -Wextra -Werror -Iengine -Iengine/include -c {} -o $out/obj/\$(echo {} | tr / _).o"
lib_objs=$(for src in $library; do echo "$out/obj/$(echo "$src" | tr / _).o"; done)
"$cxx" -static -o "$out/ember-cli" $lib_objs "$out/obj/engine_tools_ember_cli.cpp.o" \
    "$out/obj/engine_tools_intermediate_dump.cpp.o" -lpthread
"$cxx" -static -o "$out/ember-quantize" $lib_objs "$out/obj/engine_tools_ember_quantize.cpp.o" -lpthread
"$cxx" -static -o "$out/arm_kernels_check" $lib_objs "$out/obj/tests_engine_arm_kernels_check.cpp.o" -lpthread
echo "ember-cli, ember-quantize and arm_kernels_check for aarch64: built"
qemu-aarch64 "$out/arm_kernels_check"

for case in "resources/models/ember-demo/ember-demo.powerinfer.gguf|In the beginning" \
            "tests/data/tiny-relu-llama/model.q4_0.powerinfer.gguf|And it came to pass"; do
    same_greedy_text "ember-cli on aarch64" "$x86/ember-cli" "${case%%|*}" "${case#*|}" -- qemu-aarch64 "$out/ember-cli"
done
qemu-aarch64 "$out/ember-quantize" tests/data/tiny-relu-llama/model.dense.gguf "$out/q4.arm64.gguf" Q4_0 >/dev/null 2>&1
"$x86/ember-quantize" tests/data/tiny-relu-llama/model.dense.gguf "$out/q4.x86.gguf" Q4_0 >/dev/null 2>&1
cmp "$out/q4.arm64.gguf" "$out/q4.x86.gguf" || { echo "ember-quantize on aarch64 wrote a different file" >&2; exit 1; }
echo "ember-quantize on aarch64: the same Q4_0 file as on x86 ($(stat -c %s "$out/q4.x86.gguf") bytes)"
