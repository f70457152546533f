#!/usr/bin/env bash
# The GPU backend's check, for a machine with an NVIDIA GPU (about 5-8 minutes on 16 cores):
# builds with CUDA for this GPU, runs the op tests and the whole-model test on it against the
# CPU, benchmarks a synthetic 7B-shaped ReluLLaMA Q4_0 model at VRAM budgets of 25, 50 and
# 100 % of its size next to all-CPU runs, and prints one summary.
#
#   engine/tools/gpu-check.sh [BUILD_DIR] [OUT_DIR]
#
# Needs cmake, a C++20 compiler, Qt 6 base (Qt Test), the CUDA toolkit (nvcc on PATH or in
# /usr/local/cuda/bin) and python3. Set EMBER_CUDA_ARCHITECTURES to cross-build; the default
# is this machine's GPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
out=${2:-/tmp/ember-gpu-check}
jobs=$(nproc)
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

note "== GPU"
nvidia-smi --query-gpu=name,memory.total,memory.free,clocks.max.memory --format=csv,noheader 2>&1 | tee -a "$summary" || true
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DEMBER_GUI=OFF -DEMBER_CUDA=ON -DEMBER_HIP=OFF \
    -DEMBER_CUDA_ARCHITECTURES="${EMBER_CUDA_ARCHITECTURES:-native}" >"$out/configure.log"
cmake --build "$build" -j"$jobs" --target tst_backend_ops tst_gpu_kernel_math tst_hybrid ember-cli ember-bench \
    ember-synth-model >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
"$build/bin/ember-cli" --list-gpus | tee -a "$summary"

note "== tests (GPU against the CPU kernels; the whole model at several budgets)"
status=0
for t in tst_gpu_kernel_math tst_backend_ops tst_hybrid; do
    if EMBER_REQUIRE_GPU=1 "$build/bin/$t" >"$out/$t.log" 2>&1; then
        note "$t: $(grep '^Totals' "$out/$t.log")"
    else
        status=1
        note "$t: FAILED"
        grep -E '^(FAIL|SKIP)|Loc:' "$out/$t.log" | head -20 | tee -a "$summary"
    fi
done

note "== tg128, synthetic 7B-shaped ReluLLaMA Q4_0 (ember-synth-model), $jobs threads, mean ± sd of 3 runs"
models="$out/models"
mkdir -p "$models"
[ -f "$models/synth-7b-q4_0.gguf" ] || "$build/bin/ember-synth-model" -o "$models/synth-7b-q4_0.gguf" >/dev/null
[ -f "$models/synth-7b-sparse-q4_0.gguf" ] ||
    "$build/bin/ember-synth-model" -o "$models/synth-7b-sparse-q4_0.gguf" --sparse-rank 1024 >/dev/null
python3 engine/tools/synth_activation.py "$models/activation" 32 11008
bench() {
    local label=$1
    shift
    "$build/bin/ember-bench" -p 0 -n 128 -r 3 -t "$jobs" "$@" >"$out/bench-$label.log" 2>&1 || {
        status=1
        note "$label: FAILED: $(tail -1 "$out/bench-$label.log")"
        return
    }
    note "$label: $(grep -E '^\| .* tg128' "$out/bench-$label.log" | awk -F'|' '{print $7}') t/s"
    grep -E '^(device|tg128|memory read)' "$out/bench-$label.log" | sed 's/^/    /' | tee -a "$summary"
}
bench "dense, CPU" -m "$models/synth-7b-q4_0.gguf"
bench "sparse, CPU" -m "$models/synth-7b-sparse-q4_0.gguf" --no-membw
for budget in 25% 50% 100%; do
    bench "sparse, GPU budget $budget" -m "$models/synth-7b-sparse-q4_0.gguf" --device gpu --vram-budget "$budget" --no-membw
done
note "== $( [ $status -eq 0 ] && echo PASSED || echo FAILED ) (logs in $out)"
exit $status
