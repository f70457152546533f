// CPU kernels: every SIMD table this CPU runs against the scalar reference, the block
// formats against hand-computed values, and multithreaded matmul against one thread.
#include <QtTest>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include "tensor/cpu_features.h"
#include "tensor/fp16.h"
#include "tensor/grouped_rows.h"
#include "tensor/kernels.h"
#include "tensor/matmul.h"
#include "tensor/q4_0_x16.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"
#include "tensor/random_blocks.h"

using namespace ember::tensor;

namespace {

std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

std::vector<uint8_t> quantized(DType t, const std::vector<float>& x) {
    std::vector<uint8_t> out(row_bytes(t, int64_t(x.size())));
    quantize_row(t, x.data(), out.data(), int64_t(x.size()));
    return out;
}

// The exact dot product of the dequantized operands, and the sum of |w_i * x_i|: the scale
// of a dot product's rounding error.
struct Exact {
    double dot = 0, magnitude = 0;
};

Exact exact_dot(DType wt, const std::vector<uint8_t>& w, DType xt, const std::vector<uint8_t>& x, int64_t n) {
    std::vector<float> wf(static_cast<size_t>(n)), xf(static_cast<size_t>(n));
    dequantize_row(wt, w.data(), wf.data(), n);
    dequantize_row(xt, x.data(), xf.data(), n);
    Exact e;
    for (size_t i = 0; i < wf.size(); ++i) {
        e.dot += double(wf[i]) * xf[i];
        e.magnitude += std::fabs(double(wf[i]) * xf[i]);
    }
    return e;
}

using DotFn = float (*)(int64_t, const void*, const void*);

// The table's kernel for a weight type that meets Q8_0 or Q8_K activations.
DotFn quantized_dot(const KernelTable& k, DType t) {
    switch (t) {
        case DType::Q4_0: return k.dot_q4_0_q8_0;
        case DType::Q4_1: return k.dot_q4_1_q8_0;
        case DType::Q5_0: return k.dot_q5_0_q8_0;
        case DType::Q5_1: return k.dot_q5_1_q8_0;
        case DType::Q8_0: return k.dot_q8_0_q8_0;
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

using DotTokens4Fn = void (*)(int64_t, const void*, const void* const*, float*);

// The table's kernel for one row of a type against four tokens.
DotTokens4Fn four_token_kernel(const KernelTable& k, DType t) {
    switch (t) {
        case DType::Q4_1: return k.dot_q4_1_q8_0_x4;
        case DType::Q5_0: return k.dot_q5_0_q8_0_x4;
        case DType::Q5_1: return k.dot_q5_1_q8_0_x4;
        case DType::IQ4_NL: return k.dot_iq4_nl_q8_0_x4;
        case DType::Q2_K: return k.dot_q2_k_q8_k_x4;
        case DType::Q3_K: return k.dot_q3_k_q8_k_x4;
        case DType::Q4_K: return k.dot_q4_k_q8_k_x4;
        case DType::Q5_K: return k.dot_q5_k_q8_k_x4;
        case DType::Q6_K: return k.dot_q6_k_q8_k_x4;
        case DType::IQ4_XS: return k.dot_iq4_xs_q8_k_x4;
        default: return nullptr;
    }
}

constexpr DType kQuantizedTypes[] = {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::IQ4_NL,
                                     DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_XS};

// A matrix's products in two layouts agree up to rounding (tolerance relative to 1 + |y|), and
// the re-laid layout's are the same on one thread and two.
void check_layouts_agree(const WeightView& a, const WeightView& b, std::initializer_list<int64_t> token_counts,
                         uint32_t seed, float tolerance) {
    ThreadPool one(1), two(2);
    for (int64_t n_tokens : token_counts) {
        const auto x = random_floats(size_t(a.n_cols * n_tokens), seed);
        std::vector<float> ya(size_t(a.n_rows * n_tokens)), yb(ya.size()), yb2(ya.size());
        PreparedActivations sa, sb, sb2;
        matmul(one, a, x.data(), n_tokens, ya.data(), sa);
        matmul(one, b, x.data(), n_tokens, yb.data(), sb);
        matmul(two, b, x.data(), n_tokens, yb2.data(), sb2);
        QCOMPARE(yb, yb2);
        for (size_t i = 0; i < ya.size(); ++i)
            QVERIFY2(std::fabs(ya[i] - yb[i]) <= tolerance * (1 + std::fabs(ya[i])),
                     qPrintable(QString("%1 tokens, output %2: stored %3, re-laid %4").arg(n_tokens).arg(i).arg(ya[i]).arg(yb[i])));
    }
}

// The table entry that multiplies a stored type's groups.
}  // namespace

// Tokens' activations as table k prepares them for its own kernels (Q8_0 blocks and the table's
// extras, or Q8_K), one token every `stride` bytes.
struct Activations {
    std::vector<uint8_t> bytes;
    size_t stride;
};
Activations prepared_tokens(const KernelTable& k, DType xt, const std::vector<std::vector<float>>& xf, int64_t n) {
    const size_t stride = xt == DType::Q8_K ? row_bytes(xt, n) : k.q8_activation_bytes(n);
    Activations a{std::vector<uint8_t>(stride * xf.size()), stride};
    for (size_t j = 0; j < xf.size(); ++j) {
        uint8_t* dst = a.bytes.data() + j * stride;
        if (xt == DType::Q8_K)
            quantize_row_q8_k_ref(xf[j].data(), dst, n);
        else
            k.prepare_q8_activation(xf[j].data(), dst, n);
    }
    return a;
}

class TestKernels : public QObject {
    Q_OBJECT

private slots:
    // The dispatcher reads CPUID itself (MSVC has no __builtin_cpu_supports); it must see what
    // GCC's own detection sees, and pick the tables that follow from it.
    void cpu_features_agree_with_the_compiler() {
#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
        __builtin_cpu_init();
        const X86Features f = x86_features();
        QCOMPARE(f.avx2, bool(__builtin_cpu_supports("avx2")));
        QCOMPARE(f.fma, bool(__builtin_cpu_supports("fma")));
        QCOMPARE(f.avx512f, bool(__builtin_cpu_supports("avx512f")));
        QCOMPARE(f.avx512bw, bool(__builtin_cpu_supports("avx512bw")));
        QCOMPARE(f.avx512vl, bool(__builtin_cpu_supports("avx512vl")));
        QCOMPARE(f.avx512vnni, bool(__builtin_cpu_supports("avx512vnni")));
        QCOMPARE(f.avx512vbmi, bool(__builtin_cpu_supports("avx512vbmi")));
        QCOMPARE(f.amx_tile, bool(__builtin_cpu_supports("amx-tile")));
        QCOMPARE(f.amx_int8, bool(__builtin_cpu_supports("amx-int8")));
        const bool avx512 = f.avx2 && f.fma && f.f16c && f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni && f.avx512vbmi;
        const int expected = 1 + (f.avx2 && f.fma && f.f16c) + avx512 + (avx512 && f.amx_tile && f.amx_int8 && amx_permitted());
        if (const char* cap = std::getenv("EMBER_ISA")) QSKIP(qPrintable(QString("EMBER_ISA=%1 caps the tables").arg(cap)));
        QCOMPARE(available_kernel_count(), expected);
#else
        QSKIP("GCC's __builtin_cpu_supports on x86 is the reference here");
#endif
    }

    void fp16_round_trips_every_half() {
        for (uint32_t h = 0; h < 65536; ++h) {
            const float f = fp16_to_f32(uint16_t(h));
            if (std::isnan(f)) continue;
            QCOMPARE(f32_to_fp16(f), uint16_t(h));
        }
    }

    void fp16_rounds_to_nearest_even() {
        QCOMPARE(f32_to_fp16(1.0f), uint16_t(0x3C00));
        QCOMPARE(f32_to_fp16(1.0f + 1.0f / 2048.0f), uint16_t(0x3C00));  // tie -> even
        QCOMPARE(f32_to_fp16(1.0f + 3.0f / 2048.0f), uint16_t(0x3C02));  // tie -> even
        QCOMPARE(f32_to_fp16(65520.0f), uint16_t(0x7C00));               // rounds to infinity
        QCOMPARE(f32_to_fp16(5.9604645e-08f), uint16_t(0x0001));         // smallest subnormal
        QCOMPARE(f32_to_fp16(-2.0f), uint16_t(0xC000));
        QCOMPARE(f32_to_bf16(1.00390625f), uint16_t(0x3F80));  // tie -> even
        QCOMPARE(bf16_to_f32(0x3F81), 1.0078125f);
    }

    void q4_0_known_block() {
        // The largest magnitude is +4, so d = 4 / -8 = -0.5 and every value (q - 8) * d is exact.
        std::vector<float> x(32);
        for (int i = 0; i < 32; ++i) x[size_t(i)] = float((i % 16) - 8) * -0.5f;
        auto q = quantized(DType::Q4_0, x);
        auto* b = reinterpret_cast<const BlockQ4_0*>(q.data());
        QCOMPARE(fp16_to_f32(b->d), -0.5f);
        QCOMPARE(int(b->qs[0] & 0x0F), 0);   // x[0] = 4 -> 4 / -0.5 + 8 = 0
        QCOMPARE(int(b->qs[15] >> 4), 15);   // x[31] = -3.5 -> 7 + 8 = 15, in the high nibble
        std::vector<float> back(32);
        dequantize_row(DType::Q4_0, q.data(), back.data(), 32);
        QCOMPARE(back, x);
    }

    void q8_0_known_block() {
        std::vector<float> x(32);
        for (int i = 0; i < 32; ++i) x[size_t(i)] = float(i - 16) / 16.0f * 1.27f;
        auto q = quantized(DType::Q8_0, x);
        auto* b = reinterpret_cast<const BlockQ8_0*>(q.data());
        QCOMPARE(b->qs[0], int8_t(-127));
        QCOMPARE(b->qs[16], int8_t(0));
        QCOMPARE(b->qs[24], int8_t(std::lround(8.0f / 16.0f * 127.0f)));
    }

    void simd_matches_reference_data() {
        QTest::addColumn<int>("table");
        for (int i = 1; i < available_kernel_count(); ++i)
            QTest::newRow(available_kernels(i).isa) << i;
        if (available_kernel_count() == 1) QTest::newRow("scalar only") << 0;
    }

    // K-quant activations are quantized by each table's own code; the blocks must be the
    // reference's bit for bit (upstream's outputs and PowerInfer's depend on them), for both
    // scales, with the largest magnitude met twice with opposite signs (the first one sets the
    // sign of the scale), a block of zeros and values that round half-way.
    void q8_k_quantization_is_the_reference() {
        const int64_t n = 4 * 256;
        auto x = random_floats(size_t(n), 33, 3.0f);
        x[7] = 9.5f;
        x[300] = -9.5f;
        std::fill(x.begin() + 512, x.begin() + 768, 0.0f);
        for (int j = 0; j < 256; ++j) x[size_t(768 + j)] = float(j % 7 - 3) * 0.5f;  // ties: halves of the scale step
        x[768 + 255] = 127.0f;
        for (const Q8KScale scale : {Q8KScale::Upstream, Q8KScale::PowerInfer}) {
            std::vector<uint8_t> expected(row_bytes(DType::Q8_K, n));
            quantize_row_q8_k_ref(x.data(), expected.data(), n, scale);
            for (int i = 0; i < available_kernel_count(); ++i) {
                const KernelTable& k = available_kernels(i);
                std::vector<uint8_t> got(expected.size(), 0xAB);
                k.quantize_q8_k(x.data(), got.data(), n, scale);
                QVERIFY2(got == expected, k.isa);
            }
        }
    }

    void simd_matches_reference() {
        QFETCH(int, table);
        const KernelTable& k = available_kernels(table);
        const KernelTable& r = reference_kernels();
        for (int64_t n : {32, 64, 96, 128, 160, 256, 512, 544, 1024, 4096 + 256, 11008}) {
            const auto wf = random_floats(size_t(n), uint32_t(n));
            const auto xf = random_floats(size_t(n), uint32_t(n) + 1);
            // The Q8_0 blocks of a prepared activation must be bit-identical in every table; each
            // table's dot products read its own preparation.
            std::vector<uint8_t> xq_k(k.q8_activation_bytes(n)), xq_r(r.q8_activation_bytes(n));
            QVERIFY(xq_k.size() >= row_bytes(DType::Q8_0, n));
            QCOMPARE(xq_r.size(), row_bytes(DType::Q8_0, n));
            k.prepare_q8_activation(xf.data(), xq_k.data(), n);
            r.prepare_q8_activation(xf.data(), xq_r.data(), n);
            QVERIFY2(std::equal(xq_r.begin(), xq_r.end(), xq_k.begin()),
                     qPrintable(QString("Q8_0 activation differs at n=%1").arg(n)));

            struct Case {
                const char* name;
                DType wt, xt;
                float (*kf)(int64_t, const void*, const void*);
                float (*rf)(int64_t, const void*, const void*);
            };
            const Case cases[] = {
                {"q4_0", DType::Q4_0, DType::Q8_0, k.dot_q4_0_q8_0, r.dot_q4_0_q8_0},
                {"q8_0", DType::Q8_0, DType::Q8_0, k.dot_q8_0_q8_0, r.dot_q8_0_q8_0},
            };
            for (const Case& c : cases) {
                const auto w = quantized(c.wt, wf);
                const float a = c.kf(n, w.data(), xq_k.data());
                const float b = c.rf(n, w.data(), xq_r.data());
                const Exact e = exact_dot(c.wt, w, c.xt, xq_r, n);
                const double exact = e.dot, tol = 1e-5 * e.magnitude;
                QVERIFY2(std::fabs(a - exact) <= tol && std::fabs(b - exact) <= tol,
                         qPrintable(QString("%1 n=%2: simd %3 ref %4 exact %5").arg(c.name).arg(n).arg(a).arg(b).arg(exact)));
            }
            // Row axpy (the sparse down projection) is bit-identical: one FMA per element everywhere.
            for (DType t : {DType::Q4_0, DType::Q8_0}) {
                const auto w = quantized(t, wf);
                std::vector<float> y_k(xf), y_r(xf);
                auto kf = t == DType::Q4_0 ? k.axpy_q4_0 : k.axpy_q8_0;
                auto rf = t == DType::Q4_0 ? r.axpy_q4_0 : r.axpy_q8_0;
                kf(n, -0.37f, w.data(), y_k.data());
                rf(n, -0.37f, w.data(), y_r.data());
                QVERIFY2(y_k == y_r, qPrintable(QString("axpy %1 differs at n=%2").arg(dtype_name(t)).arg(n)));
                std::vector<float> deq(static_cast<size_t>(n));
                dequantize_row(t, w.data(), deq.data(), n);
                for (int64_t i = 0; i < n; ++i)
                    QVERIFY(std::fabs(y_r[size_t(i)] - (xf[size_t(i)] - 0.37f * deq[size_t(i)])) <= 1e-5f);
            }
            // The K-quant row axpys (PowerInfer's down rows in a K-quant file) too.
            if (n % kQK_K == 0) {
                for (DType t : {DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
                    const auto w = quantized(t, wf);
                    std::vector<float> y_k(xf), y_r(xf);
                    const auto pick = [t](const KernelTable& table) {
                        return t == DType::Q4_K ? table.axpy_q4_k : t == DType::Q5_K ? table.axpy_q5_k : table.axpy_q6_k;
                    };
                    pick(k)(n, -0.37f, w.data(), y_k.data());
                    pick(r)(n, -0.37f, w.data(), y_r.data());
                    QVERIFY2(y_k == y_r, qPrintable(QString("axpy %1 differs at n=%2").arg(dtype_name(t)).arg(n)));
                }
            }
            for (DType t : {DType::Q4_0, DType::Q8_0}) {
                // Several rows at once equal single-row calls, bit for bit (eight for axpy, four
                // for the Q4_0 dot).
                const bool q4 = t == DType::Q4_0;
                const auto axpy8 = q4 ? k.axpy8_q4_0 : k.axpy8_q8_0;
                const auto axpy_tokens = q4 ? k.axpy_tokens_q4_0 : k.axpy_tokens_q8_0;
                const auto axpy = q4 ? r.axpy_q4_0 : r.axpy_q8_0;
                std::vector<std::vector<uint8_t>> rows;
                for (int64_t i = 0; i < 8; ++i) {
                    std::vector<float> wr(wf);
                    std::rotate(wr.begin(), wr.begin() + i * 7 % n, wr.end());
                    rows.push_back(quantized(t, wr));
                }
                const float a[8] = {-0.37f, 1.5f, 0.0f, 2.25e-3f, -7.0f, 0.8125f, -1e-4f, 3.0f};
                const void* ptrs[8];
                for (int i = 0; i < 8; ++i) ptrs[i] = rows[size_t(i)].data();
                std::vector<float> y8(xf), y1(xf);
                axpy8(n, a, ptrs, y8.data());
                for (int i = 0; i < 8; ++i) axpy(n, a[i], ptrs[i], y1.data());
                QVERIFY2(y8 == y1, qPrintable(QString("axpy8 %1 differs at n=%2").arg(dtype_name(t)).arg(n)));
                // Several tokens' sums of rows read once: each token's sum is a zeroed buffer,
                // one single-row axpy per row in order, added to its output (the rows a subset,
                // some coefficients zero, fewer tokens than eight).
                const int32_t ids[] = {0, 2, 3, 5, 7};
                for (int m : {8, 5, 1}) {
                    std::vector<float> c(size_t(8 * m));
                    for (size_t i = 0; i < c.size(); ++i) c[i] = i % 3 == 1 ? 0.0f : a[i % 8] * float(i % 5 + 1);
                    std::vector<std::vector<float>> got(size_t(m), xf), want(size_t(m), xf);
                    float* outs[8];
                    for (int tok = 0; tok < m; ++tok) outs[tok] = got[size_t(tok)].data();
                    // Rows of one matrix: the eight rows laid end to end.
                    std::vector<uint8_t> matrix;
                    for (const auto& row : rows) matrix.insert(matrix.end(), row.begin(), row.end());
                    axpy_tokens(n, matrix.data(), rows[0].size(), ids, 5, c.data(), m, outs);
                    for (int tok = 0; tok < m; ++tok) {
                        std::vector<float> sum(size_t(n), 0.0f);
                        for (int32_t i : ids) axpy(n, c[size_t(i * m + tok)], rows[size_t(i)].data(), sum.data());
                        for (int64_t e = 0; e < n; ++e) want[size_t(tok)][size_t(e)] += sum[size_t(e)];
                    }
                    QVERIFY2(got == want, qPrintable(QString("axpy_tokens %1 differs at n=%2, %3 tokens")
                                                         .arg(dtype_name(t)).arg(n).arg(m)));
                }
                if (!q4) continue;
                float dots[4];
                k.dot4_q4_0_q8_0(n, ptrs, xq_k.data(), dots);
                for (int i = 0; i < 4; ++i)
                    QVERIFY2(dots[i] == k.dot_q4_0_q8_0(n, ptrs[i], xq_k.data()),
                             qPrintable(QString("dot4 Q4_0 row %1 differs at n=%2").arg(i).arg(n)));
            }
            {
                // Q4_0_X16 (the re-laid Q4_0 rows), with whole and partial runs of 16 blocks: the
                // stored row comes back bit for bit, the scalar kernel equals the stored row's
                // bit for bit (same block order), this table's kernel is within the usual bound
                // of the exact dot product, and four rows equal four single ones with or without
                // prefetching.
                const auto w = quantized(DType::Q4_0, wf);
                std::vector<uint8_t> x16(w);
                interleave_q4_0_row(x16.data(), n);
                if (n >= 64) QVERIFY(x16 != w);
                std::vector<uint8_t> back(w.size());
                q4_0_row_from_x16(x16.data(), n, back.data());
                QVERIFY2(back == w, qPrintable(QString("Q4_0_X16 round trip differs at n=%1").arg(n)));
                QCOMPARE(r.dot_q4_0x16_q8_0(n, x16.data(), xq_r.data()), r.dot_q4_0_q8_0(n, w.data(), xq_r.data()));
                const Exact e = exact_dot(DType::Q4_0, w, DType::Q8_0, xq_r, n);
                const float a = k.dot_q4_0x16_q8_0(n, x16.data(), xq_k.data());
                QVERIFY2(std::fabs(a - e.dot) <= 1e-5 * e.magnitude,
                         qPrintable(QString("q4_0_x16 n=%1: simd %2 exact %3").arg(n).arg(a).arg(e.dot)));
                std::vector<std::vector<uint8_t>> rows;
                for (int64_t i = 0; i < 4; ++i) {
                    std::vector<float> wr(wf);
                    std::rotate(wr.begin(), wr.begin() + i * 5 % n, wr.end());
                    rows.push_back(quantized(DType::Q4_0, wr));
                    interleave_q4_0_row(rows.back().data(), n);
                }
                const void* ptrs[4] = {rows[0].data(), rows[1].data(), rows[2].data(), rows[3].data()};
                for (size_t prefetch : {size_t(0), size_t(2048)}) {
                    float dots[4];
                    k.dot4_q4_0x16_q8_0(n, ptrs, xq_k.data(), dots, prefetch);
                    for (int i = 0; i < 4; ++i)
                        QVERIFY2(dots[i] == k.dot_q4_0x16_q8_0(n, ptrs[i], xq_k.data()),
                                 qPrintable(QString("dot4 Q4_0_X16 row %1 differs at n=%2").arg(i).arg(n)));
                }
                std::vector<float> deq_x16(static_cast<size_t>(n)), deq(static_cast<size_t>(n));
                dequantize_row(DType::Q4_0_X16, x16.data(), deq_x16.data(), n);
                dequantize_row(DType::Q4_0, w.data(), deq.data(), n);
                QCOMPARE(deq_x16, deq);
            }
            if (n % 256 == 0) {
                std::vector<uint8_t> x8k(row_bytes(DType::Q8_K, n));
                quantize_row_q8_k_ref(xf.data(), x8k.data(), n);
                std::vector<uint8_t> w6k(row_bytes(DType::Q6_K, n));
                // Q6_K weights are only read; build a valid block from random bytes.
                std::mt19937 rng(7);
                for (auto& byte : w6k) byte = uint8_t(rng());
                for (int64_t b = 0; b < n / 256; ++b) {
                    auto* blk = reinterpret_cast<BlockQ6_K*>(w6k.data()) + b;
                    blk->d = f32_to_fp16(0.01f);
                }
                const Exact e = exact_dot(DType::Q6_K, w6k, DType::Q8_K, x8k, n);
                const double exact = e.dot, tol = 1e-5 * e.magnitude;
                QVERIFY(std::fabs(k.dot_q6_k_q8_k(n, w6k.data(), x8k.data()) - exact) <= tol);
                QVERIFY(std::fabs(r.dot_q6_k_q8_k(n, w6k.data(), x8k.data()) - exact) <= tol);
            }
        }
        // Float kernels at lengths that are not multiples of the vector width.
        for (int64_t n : {1, 7, 8, 33, 100, 1000}) {
            const auto wf = random_floats(size_t(n), 11);
            const auto xf = random_floats(size_t(n), 12);
            for (DType t : {DType::F32, DType::F16, DType::BF16}) {
                const auto w = quantized(t, wf);
                const auto x = quantized(t, xf);
                float a = 0, b = 0;
                if (t == DType::F32) {
                    a = k.dot_f32(n, wf.data(), xf.data());
                    b = r.dot_f32(n, wf.data(), xf.data());
                } else if (t == DType::F16) {
                    a = k.dot_f16(n, reinterpret_cast<const uint16_t*>(w.data()), reinterpret_cast<const uint16_t*>(x.data()));
                    b = r.dot_f16(n, reinterpret_cast<const uint16_t*>(w.data()), reinterpret_cast<const uint16_t*>(x.data()));
                } else {
                    a = k.dot_bf16(n, reinterpret_cast<const uint16_t*>(w.data()), reinterpret_cast<const uint16_t*>(x.data()));
                    b = r.dot_bf16(n, reinterpret_cast<const uint16_t*>(w.data()), reinterpret_cast<const uint16_t*>(x.data()));
                }
                const Exact e = exact_dot(t, w, t, x, n);
                const double exact = e.dot, tol = 1e-5 * e.magnitude + 1e-7;
                QVERIFY2(std::fabs(a - exact) <= tol && std::fabs(b - exact) <= tol,
                         qPrintable(QString("%1 n=%2: simd %3 ref %4 exact %5").arg(dtype_name(t)).arg(n).arg(a).arg(b).arg(exact)));
            }
            std::vector<uint16_t> h_k(static_cast<size_t>(n)), h_r(static_cast<size_t>(n));
            k.f32_to_f16(xf.data(), h_k.data(), n);
            r.f32_to_f16(xf.data(), h_r.data(), n);
            QCOMPARE(h_k, h_r);
            std::vector<float> y_k(xf), y_r(xf);
            k.axpy_f16(n, 0.75f, h_r.data(), y_k.data());
            r.axpy_f16(n, 0.75f, h_r.data(), y_r.data());
            for (int64_t i = 0; i < n; ++i) {
                const float want = xf[size_t(i)] + 0.75f * fp16_to_f32(h_r[size_t(i)]);
                QVERIFY(std::fabs(y_k[size_t(i)] - want) <= 1e-6f * (1 + std::fabs(want)));
                QVERIFY(std::fabs(y_r[size_t(i)] - want) <= 1e-6f * (1 + std::fabs(want)));
            }
            {
                // Eight F16 rows at once equal the table's own single-row calls, bit for bit,
                // over whole registers and the tails alike.
                std::vector<std::vector<uint16_t>> rows;
                for (int64_t i = 0; i < 8; ++i) {
                    std::vector<uint16_t>& row = rows.emplace_back(size_t(n));
                    for (int64_t j = 0; j < n; ++j) row[size_t(j)] = f32_to_fp16(wf[size_t((j + i * 7) % n)]);
                }
                const float a[8] = {-0.37f, 1.5f, 0.0f, 2.25e-3f, -7.0f, 0.8125f, -1e-4f, 3.0f};
                const void* ptrs[8];
                for (int i = 0; i < 8; ++i) ptrs[i] = rows[size_t(i)].data();
                std::vector<float> y8(xf), y1(xf);
                k.axpy8_f16(n, a, ptrs, y8.data());
                for (int i = 0; i < 8; ++i) k.axpy_f16(n, a[i], rows[size_t(i)].data(), y1.data());
                QVERIFY2(y8 == y1, qPrintable(QString("axpy8 F16 differs at n=%1").arg(n)));
            }
            std::vector<float> f_k(static_cast<size_t>(n)), f_r(static_cast<size_t>(n));
            k.f16_to_f32(h_r.data(), f_k.data(), n);
            r.f16_to_f32(h_r.data(), f_r.data(), n);
            QCOMPARE(f_k, f_r);
        }
    }

    // Every GGUF weight type Ember reads, in every table this CPU runs: the dot product of a row
    // of random blocks with a quantized activation equals the dot product of the two
    // dequantized rows, to the rounding of a float sum.
    void every_weight_type_dots_as_its_dequantized_values() {
        for (DType t : kQuantizedTypes) {
            QCOMPARE(dtype_from_name(dtype_name(t)), std::optional<DType>(t));
            QCOMPARE(dtype_from_ggml(uint32_t(t)), std::optional<DType>(t));
            const DType xt = activation_type(t);
            for (int64_t n : {256, 512, 4096, 11008 / 256 * 256}) {
                std::mt19937_64 rng(uint64_t(n) * 31 + uint64_t(t));
                std::vector<uint8_t> w(row_bytes(t, n));
                random_row(t, n, 0.05f, rng, w.data());
                const auto xf = random_floats(size_t(n), uint32_t(n) + 5);
                std::vector<uint8_t> x(row_bytes(xt, n));
                if (xt == DType::Q8_0) reference_kernels().prepare_q8_activation(xf.data(), x.data(), n);
                else quantize_row_q8_k_ref(xf.data(), x.data(), n);
                const Exact e = exact_dot(t, w, xt, x, n);
                QVERIFY2(e.magnitude > 0, dtype_name(t));
                for (int i = 0; i < available_kernel_count(); ++i) {
                    const KernelTable& k = available_kernels(i);
                    // A table may lay extra data after the Q8_0 blocks, which its kernels read.
                    std::vector<uint8_t> prepared = x;
                    if (xt == DType::Q8_0) {
                        prepared.resize(k.q8_activation_bytes(n));
                        k.prepare_q8_activation(xf.data(), prepared.data(), n);
                        QVERIFY(std::equal(x.begin(), x.end(), prepared.begin()));
                    }
                    const double got = quantized_dot(k, t)(n, w.data(), prepared.data());
                    QVERIFY2(std::fabs(got - e.dot) <= 1e-5 * e.magnitude,
                             qPrintable(QString("%1 × %2, n=%3, %4: %5 vs %6")
                                            .arg(dtype_name(t), dtype_name(xt)).arg(n).arg(k.isa).arg(got).arg(e.dot)));
                }
            }
        }
    }

    // PowerInfer's transposed down rows may be of any type (a K-quant mix, say): a row added
    // into an accumulator, whole or from a block-aligned column on, is its dequantized values
    // times the coefficient.
    void every_weight_type_adds_as_its_dequantized_values() {
        for (DType t : kQuantizedTypes) {
            const int64_t n = 1024, block = block_size(t);
            std::mt19937_64 rng(uint64_t(t) + 7);
            std::vector<uint8_t> w(row_bytes(t, n));
            random_row(t, n, 0.05f, rng, w.data());
            std::vector<float> values(static_cast<size_t>(n));
            dequantize_row(t, w.data(), values.data(), n);
            const auto start = random_floats(size_t(n), 11);
            const float a = -0.75f;
            for (int64_t col0 : {int64_t(0), n / 2 / block * block}) {
                std::vector<float> y(start.begin() + col0, start.end());
                axpy_row(t, n - col0, a, w.data() + row_bytes(t, col0), y.data());
                for (int64_t i = col0; i < n; ++i) {
                    const double want = double(start[size_t(i)]) + double(a) * double(values[size_t(i)]);
                    QVERIFY2(std::fabs(y[size_t(i - col0)] - want) <= 1e-6 * (1 + std::fabs(want)),
                             qPrintable(QString("%1, element %2").arg(dtype_name(t)).arg(i)));
                }
            }
        }
    }

    // The four-token kernels give each token what the one-token kernel gives it.
    void four_token_kernels_match_one_token() {
        const int64_t n = 4096;
        for (DType t : {DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL,
                        DType::Q2_K, DType::Q3_K, DType::IQ4_XS}) {
            std::mt19937_64 rng{uint64_t(t)};
            std::vector<uint8_t> w(row_bytes(t, n));
            random_row(t, n, 0.05f, rng, w.data());
            const DType xt = activation_type(t);
            for (int i = 0; i < available_kernel_count(); ++i) {
                const KernelTable& k = available_kernels(i);
                // Each table's own activation layout (Q8_0 blocks and its extras, or Q8_K).
                std::vector<std::vector<uint8_t>> xs;
                for (uint32_t j = 0; j < 4; ++j) {
                    const auto xf = random_floats(size_t(n), 40 + j);
                    if (xt == DType::Q8_0) {
                        xs.emplace_back(k.q8_activation_bytes(n));
                        k.prepare_q8_activation(xf.data(), xs.back().data(), n);
                    } else {
                        xs.emplace_back(row_bytes(DType::Q8_K, n));
                        quantize_row_q8_k_ref(xf.data(), xs.back().data(), n);
                    }
                }
                const void* ptrs[4] = {xs[0].data(), xs[1].data(), xs[2].data(), xs[3].data()};
                float out[4];
                four_token_kernel(k, t)(n, w.data(), ptrs, out);
                for (int j = 0; j < 4; ++j) {
                    std::vector<uint8_t> x_blocks(static_cast<const uint8_t*>(ptrs[j]),
                                                  static_cast<const uint8_t*>(ptrs[j]) + row_bytes(xt, n));
                    const Exact e = exact_dot(t, w, xt, x_blocks, n);
                    QVERIFY2(std::fabs(out[j] - e.dot) <= 1e-5 * e.magnitude,
                             qPrintable(QString("%1 x4, %2, token %3").arg(dtype_name(t), k.isa).arg(j)));
                }
            }
        }
    }

    // Every table's grouped-row kernels give each of a group's eight rows, for each token of a
    // batch, its exact dot product up to float rounding: batches of whole tiles (4 or 8 tokens)
    // and batches ending in partial ones. The group's bytes go back to the stored rows unchanged.
    void grouped_kernels_match_exact_dots_data() {
        QTest::addColumn<int>("type");
        QTest::newRow("Q4_0") << int(DType::Q4_0);
        QTest::newRow("Q8_0") << int(DType::Q8_0);
        QTest::newRow("Q4_K") << int(DType::Q4_K);
        QTest::newRow("Q5_K") << int(DType::Q5_K);
        QTest::newRow("Q6_K") << int(DType::Q6_K);
    }
    void grouped_kernels_match_exact_dots() {
        QFETCH(int, type);
        const DType t = DType(type);
        const Grouping grouped = *grouping(t);
        const int64_t n = 2048;
        const size_t rb = row_bytes(t, n);
        std::mt19937_64 rng{77};
        std::vector<uint8_t> stored(rb * kR8Rows);
        for (int r = 0; r < kR8Rows; ++r) random_row(t, n, 0.05f, rng, stored.data() + size_t(r) * rb);
        std::vector<uint8_t> group(stored);
        grouped.group(group.data(), n);
        QVERIFY(group != stored);
        std::vector<uint8_t> row(rb);
        for (int r = 0; r < kR8Rows; ++r) {
            grouped.row_from(group.data(), n, r, row.data());
            QVERIFY2(std::equal(row.begin(), row.end(), stored.begin() + std::ptrdiff_t(size_t(r) * rb)), qPrintable(QString("row %1").arg(r)));
        }
        const int64_t n_tokens = 13;
        const DType xt = activation_type(t);
        std::vector<std::vector<float>> xf;
        for (int64_t j = 0; j < n_tokens; ++j) xf.push_back(random_floats(size_t(n), 60 + uint32_t(j)));
        for (int i = 0; i < available_kernel_count(); ++i) {
            const KernelTable& k = available_kernels(i);
            const auto [x, x_stride] = prepared_tokens(k, xt, xf, n);
            const auto gemm = grouped_entries(k, t).gemm;
            for (int64_t nt : {1, 2, 3, 4, 5, 7, 8, 13}) {
                std::vector<float> y(size_t(nt * kR8Rows), NAN);
                gemm(n, group.data(), x.data(), x_stride, nt, y.data(), kR8Rows);
                for (int64_t j = 0; j < nt; ++j)
                    for (int r = 0; r < kR8Rows; ++r) {
                        const std::vector<uint8_t> w(stored.begin() + std::ptrdiff_t(size_t(r) * rb), stored.begin() + std::ptrdiff_t(size_t(r + 1) * rb));
                        const std::vector<uint8_t> xj(x.begin() + std::ptrdiff_t(size_t(j) * x_stride),
                                                      x.begin() + std::ptrdiff_t(size_t(j) * x_stride + row_bytes(xt, n)));
                        const Exact e = exact_dot(t, w, xt, xj, n);
                        const float got = y[size_t(j * kR8Rows + r)];
                        QVERIFY2(std::fabs(got - e.dot) <= 1e-5 * e.magnitude,
                                 qPrintable(QString("%1, %2 tokens: token %3 row %4: %5, exact %6").arg(k.isa).arg(nt).arg(j).arg(r).arg(got).arg(e.dot)));
                    }
            }
        }
    }

    // A table with a matrix unit (AMX) takes many groups and a whole batch at once: pairs of
    // groups sixteen tokens at a time, the rest (an odd group, the tokens after the last full
    // sixteen) by its gemm entry. Every row and token must be the exact dot product.
    void batch_kernel_over_groups_matches_exact_dots_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("n");
        QTest::newRow("Q4_0") << int(DType::Q4_0) << 352;  // 11 blocks: an odd last one
        QTest::newRow("Q8_0") << int(DType::Q8_0) << 352;
        QTest::newRow("Q4_K") << int(DType::Q4_K) << 768;  // 3 super-blocks: an odd last one
        QTest::newRow("Q5_K") << int(DType::Q5_K) << 768;
    }
    void batch_kernel_over_groups_matches_exact_dots() {
        QFETCH(int, type);
        QFETCH(int, n);
        const DType t = DType(type);
        const DType xt = activation_type(t);
        const Grouping grouped = *grouping(t);
        const int64_t n_groups = 5, n_rows = n_groups * kR8Rows;
        const size_t rb = row_bytes(t, n);
        std::mt19937_64 rng{79};
        std::vector<uint8_t> stored(rb * size_t(n_rows));
        for (int64_t r = 0; r < n_rows; ++r) random_row(t, n, 0.05f, rng, stored.data() + size_t(r) * rb);
        std::vector<uint8_t> groups(stored);
        for (int64_t g = 0; g < n_groups; ++g) grouped.group(groups.data() + size_t(g * kR8Rows) * rb, n);
        const int64_t n_tokens = 35;
        std::vector<std::vector<float>> xf;
        for (int64_t j = 0; j < n_tokens; ++j) xf.push_back(random_floats(size_t(n), 90 + uint32_t(j)));
        int tested = 0;
        for (int i = 0; i < available_kernel_count(); ++i) {
            const KernelTable& k = available_kernels(i);
            const auto gemm_groups = grouped_entries(k, t).gemm_groups;
            if (!gemm_groups) continue;
            ++tested;
            const auto [x, x_stride] = prepared_tokens(k, xt, xf, n);
            for (int64_t nt : {16, 32, 35, 19, 13, 1}) {
                for (int64_t ng : {n_groups, int64_t(2), int64_t(1)}) {
                    std::vector<float> y(size_t(nt * n_rows), NAN);
                    gemm_groups(n, groups.data(), ng, x.data(), x_stride, nt, y.data(), size_t(n_rows));
                    for (int64_t j = 0; j < nt; ++j)
                        for (int64_t r = 0; r < ng * kR8Rows; ++r) {
                            const std::vector<uint8_t> w(stored.begin() + std::ptrdiff_t(size_t(r) * rb), stored.begin() + std::ptrdiff_t(size_t(r + 1) * rb));
                            const std::vector<uint8_t> xj(x.begin() + std::ptrdiff_t(size_t(j) * x_stride),
                                                          x.begin() + std::ptrdiff_t(size_t(j) * x_stride + row_bytes(xt, n)));
                            const Exact e = exact_dot(t, w, xt, xj, n);
                            const float got = y[size_t(j * n_rows + r)];
                            QVERIFY2(std::fabs(got - e.dot) <= 1e-5 * e.magnitude,
                                     qPrintable(QString("%1, %2 groups, %3 tokens: token %4 row %5: %6, exact %7").arg(k.isa).arg(ng).arg(nt).arg(j).arg(r).arg(got).arg(e.dot)));
                        }
                }
            }
        }
        if (tested == 0) QSKIP("no kernel table with a matrix unit on this CPU");
    }

    // Attention's weighted sum of values is bit for bit one axpy_f16 per row, in order, in
    // every table: the CPU and the simulated device must keep giving the same bits.
    void weighted_sum_is_axpy_per_row() {
        const int64_t n_rows = 37;
        const size_t stride = 300;
        const auto xf = random_floats(size_t(n_rows) * stride, 11);
        const auto wf = random_floats(size_t(n_rows), 12, 0.1f);
        std::vector<uint16_t> x(xf.size()), w(wf.size());
        for (size_t i = 0; i < x.size(); ++i) x[i] = f32_to_fp16(xf[i]);
        for (size_t i = 0; i < w.size(); ++i) w[i] = f32_to_fp16(wf[i]);
        for (int i = 0; i < available_kernel_count(); ++i) {
            const KernelTable& k = available_kernels(i);
            for (int64_t n : {64, 128, 200, 13}) {
                std::vector<float> expected(size_t(n), 0.0f), got(size_t(n), NAN);
                for (int64_t p = 0; p < n_rows; ++p) k.axpy_f16(n, fp16_to_f32(w[size_t(p)]), x.data() + size_t(p) * stride, expected.data());
                k.weighted_sum_f16(n_rows, w.data(), x.data(), stride, n, got.data());
                QVERIFY2(got == expected, qPrintable(QString("%1, n %2").arg(k.isa).arg(n)));
            }
        }
    }

    // The values random blocks decode to have about the asked spread and no large offset, so a
    // synthetic model of any type keeps its activations in range.
    void random_blocks_have_the_asked_spread() {
        for (DType t : kQuantizedTypes) {
            const int64_t n = 256 * 64;
            std::mt19937_64 rng(9);
            std::vector<uint8_t> w(row_bytes(t, n));
            random_row(t, n, 0.1f, rng, w.data());
            std::vector<float> v(static_cast<size_t>(n));
            dequantize_row(t, w.data(), v.data(), n);
            double sum = 0, sq = 0;
            for (float f : v) {
                sum += f;
                sq += double(f) * f;
            }
            const double mean = sum / double(n), sd = std::sqrt(sq / double(n) - mean * mean);
            QVERIFY2(sd > 0.05 && sd < 0.2, qPrintable(QString("%1: sd %2").arg(dtype_name(t)).arg(sd)));
            QVERIFY2(std::fabs(mean) < 0.05, qPrintable(QString("%1: mean %2").arg(dtype_name(t)).arg(mean)));
        }
    }

    void quantize_round_trip_error_is_bounded() {
        const auto x = random_floats(4096, 3);
        // The 10 % slack covers the scale's rounding to F16.
        for (auto [t, bound] : {std::pair{DType::Q4_0, 0.5f / 8.0f * 1.1f}, std::pair{DType::Q8_0, 0.5f / 127.0f * 1.1f}}) {
            auto q = quantized(t, x);
            std::vector<float> back(x.size());
            dequantize_row(t, q.data(), back.data(), int64_t(x.size()));
            for (size_t b = 0; b < x.size() / 32; ++b) {
                float amax = 0;
                for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + size_t(j)]));
                for (int j = 0; j < 32; ++j) {
                    const size_t i = b * 32 + size_t(j);
                    // Q4_0's top code is clamped, so its extreme opposite value may miss by one step.
                    const float step = t == DType::Q4_0 ? 2.0f : 1.0f;
                    QVERIFY(std::fabs(back[i] - x[i]) <= step * bound * amax + 1e-6f);
                }
            }
        }
    }

    void matmul_is_deterministic_across_thread_counts() {
        const int64_t n_cols = 256, n_rows = 300, n_tokens = 5;
        const auto wf = random_floats(size_t(n_cols * n_rows), 5);
        const auto x = random_floats(size_t(n_cols * n_tokens), 6);
        std::vector<uint8_t> w(row_bytes(DType::Q4_0, n_cols) * size_t(n_rows));
        for (int64_t r = 0; r < n_rows; ++r)
            quantize_row(DType::Q4_0, wf.data() + r * n_cols, w.data() + size_t(r) * row_bytes(DType::Q4_0, n_cols), n_cols);
        WeightView view{DType::Q4_0, n_cols, n_rows, w.data(), row_bytes(DType::Q4_0, n_cols)};
        std::vector<float> y1(size_t(n_rows * n_tokens)), y2(y1.size());
        PreparedActivations s1, s2;
        ThreadPool one(1), two(2);
        matmul(one, view, x.data(), n_tokens, y1.data(), s1);
        matmul(two, view, x.data(), n_tokens, y2.data(), s2);
        QCOMPARE(y1, y2);
        // And each output is the dot product of its row with its token's activation.
        std::vector<uint8_t> xq(row_bytes(DType::Q8_0, n_cols));
        quantize_row(DType::Q8_0, x.data() + 2 * n_cols, xq.data(), n_cols);
        QCOMPARE(y1[size_t(2 * n_rows + 17)], reference_kernels().dot_q4_0_q8_0(n_cols, view.row(17), xq.data()));
    }

    void matmul_over_relaid_rows_matches_stored_rows() {
        // A Q4_0 matrix re-laid as Q4_0_X16 (as models are at load on AVX-512 CPUs) gives the
        // stored matrix's products up to rounding, for one token and a batch, with a partial
        // run of blocks at each row's end, on one thread and two alike.
        const int64_t n_cols = 544, n_rows = 203;
        const auto wf = random_floats(size_t(n_cols * n_rows), 8);
        const size_t rb = row_bytes(DType::Q4_0, n_cols);
        std::vector<uint8_t> stored(rb * size_t(n_rows));
        for (int64_t r = 0; r < n_rows; ++r) quantize_row(DType::Q4_0, wf.data() + r * n_cols, stored.data() + size_t(r) * rb, n_cols);
        std::vector<uint8_t> relaid(stored);
        for (int64_t r = 0; r < n_rows; ++r) interleave_q4_0_row(relaid.data() + size_t(r) * rb, n_cols);
        const WeightView a{DType::Q4_0, n_cols, n_rows, stored.data(), rb};
        const WeightView b{DType::Q4_0_X16, n_cols, n_rows, relaid.data(), rb};
        std::vector<uint8_t> row(rb);
        row_as_stored(b, 57, row.data());
        QVERIFY(std::equal(row.begin(), row.end(), a.row(57)));
        check_layouts_agree(a, b, {1, 3}, 9, 1e-5f);
    }

    // The four-stream single-token kernel gives each group the single-token kernel's bits, for
    // every grouped type in every table.
    void four_group_kernel_matches_one_group_data() { grouped_kernels_match_exact_dots_data(); }
    void four_group_kernel_matches_one_group() {
        QFETCH(int, type);
        const DType t = DType(type);
        const bool k_quant = activation_type(t) == DType::Q8_K;
        const int64_t n = 1024;
        const size_t rb = row_bytes(t, n);
        std::mt19937_64 rng{79};
        std::vector<uint8_t> groups(rb * kR8Rows * 4);
        for (int r = 0; r < kR8Rows * 4; ++r) random_row(t, n, 0.05f, rng, groups.data() + size_t(r) * rb);
        for (int g = 0; g < 4; ++g) grouping(t)->group(groups.data() + size_t(g) * kR8Rows * rb, n);
        const auto xf = random_floats(size_t(n), 13);
        for (int i = 0; i < available_kernel_count(); ++i) {
            const KernelTable& k = available_kernels(i);
            std::vector<uint8_t> x(k_quant ? row_bytes(DType::Q8_K, n) : k.q8_activation_bytes(n));
            if (k_quant)
                quantize_row_q8_k_ref(xf.data(), x.data(), n);
            else
                k.prepare_q8_activation(xf.data(), x.data(), n);
            const void* gs[4];
            float four[4][kR8Rows], one[4][kR8Rows];
            float* ys[4];
            for (int g = 0; g < 4; ++g) {
                gs[g] = groups.data() + size_t(g) * kR8Rows * rb;
                ys[g] = four[g];
                grouped_entries(k, t).gemm(n, gs[g], x.data(), 0, 1, one[g], 0);
            }
            grouped_entries(k, t).gemv4(n, gs, x.data(), ys, 2048);
            QVERIFY2(std::memcmp(four, one, sizeof four) == 0, k.isa);
        }
    }

    void matmul_over_grouped_rows_matches_stored_rows_data() { grouped_kernels_match_exact_dots_data(); }
    void matmul_over_grouped_rows_matches_stored_rows() {
        // A matrix grouped by eight rows (as models are at load when the CPU's table has a
        // grouped kernel) gives the stored matrix's products up to rounding: one token (tasks
        // long enough for the four-stream kernel, with groups left over), batches that end in
        // partial tiles and one past the 64-token block, on one thread and two alike.
        QFETCH(int, type);
        const DType t = DType(type);
        const Grouping how = *grouping(t);
        const int64_t n_cols = 512, n_rows = 520;
        const size_t rb = row_bytes(t, n_cols);
        std::mt19937_64 rng{78};
        std::vector<uint8_t> stored(rb * size_t(n_rows));
        for (int64_t r = 0; r < n_rows; ++r) random_row(t, n_cols, 0.05f, rng, stored.data() + size_t(r) * rb);
        std::vector<uint8_t> grouped(stored);
        for (int64_t g = 0; g < n_rows / kR8Rows; ++g)
            how.group(grouped.data() + size_t(g * kR8Rows) * rb, n_cols);
        const WeightView a{t, n_cols, n_rows, stored.data(), rb};
        const WeightView b{how.grouped, n_cols, n_rows, grouped.data(), rb};
        std::vector<uint8_t> row(rb);
        row_as_stored(b, 157, row.data());
        QVERIFY(std::equal(row.begin(), row.end(), a.row(157)));
        QCOMPARE(b.rows(16, 24).row(0), b.row(16));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, b.rows(4, 8));
        check_layouts_agree(a, b, {1, 6, 67}, 10, 1e-4f);
    }
};

QTEST_GUILESS_MAIN(TestKernels)
#include "tst_kernels.moc"
