#!/usr/bin/env bash
# Builds the engine, its programs (ember-cli, ember-quantize, ember-bench) and the downloader's
# file-layer test for Windows with MinGW-w64 (Debian's g++-mingw-w64-x86-64-posix): the check that
# none has POSIX-only code left. Given the Linux ember-cli and Wine (Debian's wine64), it then runs
# them: the file-layer test; ember-quantize, which must write the same file as on Linux;
# ember-bench; and both ember-cli builds on the demo model (also under a CJK folder name) and a
# Q4_0 PowerInfer model, requiring the same greedy text. The release build uses MSVC
# (.github/workflows/windows.yml), which this cannot run.
#
#   packaging/windows/mingw-engine-check.sh [OUT_DIR [LINUX_EMBER_CLI]]
set -euo pipefail
cd "$(dirname "$0")/../.."
source packaging/same_greedy_text.sh
out=${1:-build-mingw}
cxx=x86_64-w64-mingw32-g++-posix
mkdir -p "$out/obj"

flags=(-std=c++20 -O1 -Wall -Wextra -Werror -Iengine -Iengine/include -DEMBER_X86=1)
avx2=(-mavx2 -mfma -mf16c)
avx512=(-mavx512f -mavx512bw -mavx512vl -mavx512vnni -mavx512vbmi "${avx2[@]}" -Wno-uninitialized -Wno-maybe-uninitialized)

# The AMX kernels are Linux-only, as in engine/CMakeLists.txt.
library=$(ls engine/{gguf,tensor,tensor/x86,tokenizer,sampling,sparse,model,session}/*.cpp \
             engine/backend/*.cpp engine/backend/arena/*.cpp engine/backend/sim/*.cpp engine/backend/no_gpu/*.cpp |
          grep -v '_amx\.cpp$')
tools="engine/tools/ember_cli.cpp engine/tools/intermediate_dump.cpp engine/tools/ember_quantize.cpp engine/tools/ember_bench.cpp engine/tools/memory_bandwidth.cpp"
sources="$library $tools"
compile() {
    local src=$1 extra=()
    case $src in
        *_avx512.cpp) extra=("${avx512[@]}") ;;
        *_avx2.cpp) extra=("${avx2[@]}") ;;
    esac
    "$cxx" "${flags[@]}" "${extra[@]}" -c "$src" -o "$out/obj/$(echo "$src" | tr / _).o"
}
export -f compile
export cxx out
export flags_s="${flags[*]}" avx2_s="${avx2[*]}" avx512_s="${avx512[*]}"
printf '%s\n' $sources | xargs -P "$(nproc)" -I{} bash -c '
    flags=($flags_s); avx2=($avx2_s); avx512=($avx512_s); compile {}'
# The UTF-8 code page manifest every Windows program of Ember carries (utf8_program.cmake).
x86_64-w64-mingw32-windres packaging/windows/utf8_manifest.rc -O coff -o "$out/utf8_manifest.o"
obj() { for src in "$@"; do echo "$out/obj/$(echo "$src" | tr / _).o"; done; }
link() {
    local exe=$1; shift
    "$cxx" -static -o "$out/$exe" $(obj $library) $(obj "$@") "$out/utf8_manifest.o"
    echo "$exe for Windows: $(stat -c %s "$out/$exe") bytes"
}
link ember-cli.exe engine/tools/ember_cli.cpp engine/tools/intermediate_dump.cpp
link ember-quantize.exe engine/tools/ember_quantize.cpp
link ember-bench.exe engine/tools/ember_bench.cpp engine/tools/memory_bandwidth.cpp

# The downloader's file layer (no curl or OpenSSL for MinGW in Debian, so not the whole library)
# and its test program.
"$cxx" "${flags[@]}" -Idownloader/include -Idownloader/src -static -o "$out/tst_part_file.exe" \
    downloader/src/{part_file,os_file,os_file_windows,os_file_posix,glob}.cpp tests/downloader/tst_part_file.cpp \
    "$out/utf8_manifest.o"
echo "tst_part_file.exe for Windows: built"

linux_cli=${2:-}
wine=$(command -v wine64 || command -v wine || ls /usr/lib/wine/wine64 2>/dev/null || true)
[ -n "$linux_cli" ] || exit 0
[ -n "$wine" ] || { echo "no Wine: ember-cli.exe built, not run" >&2; exit 1; }
export WINEDEBUG=-all WINEPREFIX="$(cd "$out" && pwd)/wineprefix"
"$wine" "$out/tst_part_file.exe" | tr -d '\r' || { echo "tst_part_file.exe failed under Wine" >&2; exit 1; }
# The GGUF writer's Windows path (_wfopen, _commit): the same quantized file, byte for byte.
"$wine" "$out/ember-quantize.exe" tests/data/tiny-relu-llama/model.dense.gguf "$out/q8.windows.gguf" Q8_0 >/dev/null
"$(dirname "$linux_cli")/ember-quantize" tests/data/tiny-relu-llama/model.dense.gguf "$out/q8.linux.gguf" Q8_0 >/dev/null
cmp "$out/q8.windows.gguf" "$out/q8.linux.gguf" || { echo "ember-quantize.exe under Wine wrote a different file" >&2; exit 1; }
echo "ember-quantize.exe under Wine: the same Q8_0 file as on Linux ($(stat -c %s "$out/q8.linux.gguf") bytes)"
"$wine" "$out/ember-bench.exe" -m resources/models/ember-demo/ember-demo.powerinfer.gguf -p 8 -n 8 -r 1 --no-membw >/dev/null \
    || { echo "ember-bench.exe failed under Wine" >&2; exit 1; }
echo "ember-bench.exe under Wine: ran on the demo model"
# A model under a folder name outside any legacy code page: found only through the manifest.
unicode_dir="$out/模型 é"
mkdir -p "$unicode_dir"
cp resources/models/ember-demo/ember-demo.powerinfer.gguf "$unicode_dir/"
for case in "resources/models/ember-demo/ember-demo.powerinfer.gguf|In the beginning" \
            "tests/data/tiny-relu-llama/model.q4_0.powerinfer.gguf|And it came to pass" \
            "$unicode_dir/ember-demo.powerinfer.gguf|In the beginning"; do
    same_greedy_text "ember-cli.exe under Wine" "$linux_cli" "${case%%|*}" "${case#*|}" -- "$wine" "$out/ember-cli.exe"
done
