#!/usr/bin/env bash
# Runs one fuzz target for SECONDS on its committed seed corpus (tests/fuzz/corpus/TARGET) and
# fails on any finding, leaving the input as BUILD/fuzz-findings/TARGET/crash-*. New inputs that
# reach new code go to BUILD/fuzz-corpus/TARGET, not into the committed seeds.
# Build first:  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
#                   -DEMBER_FUZZ=ON -DEMBER_SANITIZE=ON -DEMBER_TESTS=OFF && cmake --build build-fuzz --target ember-fuzzers
# Usage: tests/fuzz/run.sh TARGET SECONDS [BUILD_DIR]     (TARGET: gguf, pt, gpuidx, sparsity, expert_profile, tokenizer, hub_json,
#        chat_prompt, message_blocks, chat_import, api_request; or all)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
target=${1:?target}
seconds=${2:?seconds}
build=$(realpath "${3:-build-fuzz}")
if [ "$target" = all ]; then
    for t in gguf pt gpuidx sparsity expert_profile tokenizer hub_json chat_prompt message_blocks chat_import api_request; do "$0" "$t" "$seconds" "$build"; done
    exit 0
fi
binary="$build/bin/fuzz_$target"
[ -x "$binary" ] || { echo "no $binary: build the ember-fuzzers target first (see the top of $0)"; exit 2; }
work="$build/fuzz-corpus/$target"
findings="$build/fuzz-findings/$target"
mkdir -p "$work" "$findings"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
export QT_QPA_PLATFORM=offscreen
log="$findings/run.log"
if ! "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="$findings/" "$work" "$here/corpus/$target" >"$log" 2>&1; then
    tail -60 "$log"
    echo "fuzz_$target: FINDING (input in $findings)"
    exit 1
fi
stats=$(grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" "$log" | awk '{print $1 $2}' | tr '\n' ' ')
cov=$(grep -oE "cov: [0-9]+" "$log" | tail -1)
echo "fuzz_$target: ok, ${seconds}s, $cov, $stats"
