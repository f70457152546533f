// The ARM kernels against the scalar ones, where Qt's test library is not at hand: the aarch64
// build under qemu-user (packaging/macos/arm64-engine-check.sh) runs this. Dot products, for every
// weight type, must equal a double-precision sum of the dequantized rows to float rounding; row axpys must equal
// the scalar twins bit for bit. Exits 1 with the first difference, 0 when every table agrees.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "tensor/fp16.h"
#include "tensor/kernels.h"
#include "tensor/quantize.h"
#include "tensor/random_blocks.h"

using namespace ember::tensor;

namespace {

std::vector<float> random_floats(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = dist(rng);
    return v;
}

// x quantized to t, or for the types Ember reads but does not write, random blocks of t.
std::vector<uint8_t> quantized(DType t, const std::vector<float>& x) {
    const int64_t n = int64_t(x.size());
    std::vector<uint8_t> q(row_bytes(t, n));
    if (t == DType::IQ4_NL || t == DType::Q2_K || t == DType::Q3_K || t == DType::IQ4_XS) {
        std::mt19937_64 rng(uint64_t(n) * 31 + uint64_t(t));
        random_row(t, n, 0.05f, rng, q.data());
    } else {
        quantize_row(t, x.data(), q.data(), n);
    }
    return q;
}

bool near(double got, const std::vector<float>& a, const std::vector<float>& b) {
    double exact = 0, magnitude = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        exact += double(a[i]) * b[i];
        magnitude += std::fabs(double(a[i]) * b[i]);
    }
    return std::fabs(got - exact) <= 1e-5 * magnitude;
}

std::vector<float> dequantized(DType t, const std::vector<uint8_t>& q, int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    dequantize_row(t, q.data(), v.data(), n);
    return v;
}

using Dot = float (*)(int64_t, const void*, const void*);

// A table's one-row dot product for a weight type.
Dot dot_of(const KernelTable& k, DType t) {
    switch (t) {
        case DType::Q4_0: return k.dot_q4_0_q8_0;
        case DType::Q8_0: return k.dot_q8_0_q8_0;
        case DType::Q4_1: return k.dot_q4_1_q8_0;
        case DType::Q5_0: return k.dot_q5_0_q8_0;
        case DType::Q5_1: return k.dot_q5_1_q8_0;
        case DType::IQ4_NL: return k.dot_iq4_nl_q8_0;
        case DType::Q2_K: return k.dot_q2_k_q8_k;
        case DType::Q3_K: return k.dot_q3_k_q8_k;
        case DType::Q4_K: return k.dot_q4_k_q8_k;
        case DType::Q5_K: return k.dot_q5_k_q8_k;
        case DType::Q6_K: return k.dot_q6_k_q8_k;
        case DType::IQ4_XS: return k.dot_iq4_xs_q8_k;
        default: return nullptr;
    }
}

int fail(const char* isa, const char* what, int64_t n) {
    std::fprintf(stderr, "arm_kernels_check: %s: %s differs at n=%lld\n", isa, what, (long long)n);
    return 1;
}

}  // namespace

int main() {
    const KernelTable& r = reference_kernels();
    for (int i = 1; i < available_kernel_count(); ++i) {
        const KernelTable& k = available_kernels(i);
        for (int64_t n : {32, 64, 96, 256, 544, 4096 + 256}) {
            const auto wf = random_floats(n, uint32_t(n)), xf = random_floats(n, uint32_t(n) + 1);
            const auto w16 = quantized(DType::F16, wf), x16 = quantized(DType::F16, xf);
            const auto* w16p = reinterpret_cast<const uint16_t*>(w16.data());
            const auto* x16p = reinterpret_cast<const uint16_t*>(x16.data());
            if (!near(k.dot_f16(n, w16p, x16p), dequantized(DType::F16, w16, n), dequantized(DType::F16, x16, n)))
                return fail(k.isa, "dot_f16", n);
            std::vector<uint8_t> xq(k.q8_activation_bytes(n));
            k.prepare_q8_activation(xf.data(), xq.data(), n);
            const auto xq_values = dequantized(DType::Q8_0, xq, n);
            for (DType t : {DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL}) {
                const auto w = quantized(t, wf);
                if (!near(dot_of(k, t)(n, w.data(), xq.data()), dequantized(t, w, n), xq_values)) return fail(k.isa, dtype_name(t), n);
            }
            for (DType t : {DType::Q4_0, DType::Q8_0}) {
                const auto w = quantized(t, wf);
                if (!near(dot_of(k, t)(n, w.data(), xq.data()), dequantized(t, w, n), xq_values)) return fail(k.isa, dtype_name(t), n);
                std::vector<float> y_k(xf), y_r(xf);
                (t == DType::Q4_0 ? k.axpy_q4_0 : k.axpy_q8_0)(n, -0.37f, w.data(), y_k.data());
                (t == DType::Q4_0 ? r.axpy_q4_0 : r.axpy_q8_0)(n, -0.37f, w.data(), y_r.data());
                if (y_k != y_r) return fail(k.isa, t == DType::Q4_0 ? "axpy_q4_0" : "axpy_q8_0", n);
            }
            if (n % 256 == 0) {
                std::vector<uint8_t> xk(row_bytes(DType::Q8_K, n));
                quantize_row_q8_k_ref(xf.data(), xk.data(), n);
                const auto xk_values = dequantized(DType::Q8_K, xk, n);
                for (DType t : {DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_XS}) {
                    const auto w = quantized(t, wf);
                    if (!near(dot_of(k, t)(n, w.data(), xk.data()), dequantized(t, w, n), xk_values)) return fail(k.isa, dtype_name(t), n);
                }
            }
            std::vector<float> y_k(xf), y_r(xf);
            k.axpy_f16(n, 0.75f, w16p, y_k.data());
            r.axpy_f16(n, 0.75f, w16p, y_r.data());
            if (y_k != y_r) return fail(k.isa, "axpy_f16", n);
        }
        std::printf("arm_kernels_check: the %s kernels agree with the scalar ones\n", k.isa);
    }
    if (available_kernel_count() == 1) std::printf("arm_kernels_check: only the scalar kernels on this CPU\n");
    return 0;
}
