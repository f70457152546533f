#pragma once
// What the device tests share: random FFN layers and matrices, neuron picks, the error bound
// against the CPU kernels, and the devices this machine has.

#include <QString>
#include <QtGlobal>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "backend/device.h"
#include "backend/gpu.h"
#include "random_vectors.h"
#include "tensor/fp16.h"
#include "tensor/matmul.h"
#include "tensor/quantize.h"

namespace backend_test {

using ember::tensor::DType;
using ember::tensor::WeightView;

// A layer's FFN rows in one weight type, made from random floats.
struct Layer {
    DType type;
    int64_t n_embd, n_ff;
    bool gated;
    std::vector<uint8_t> gate, up, down_t;

    Layer(DType t, int64_t embd, int64_t ff, bool with_gate, uint32_t seed) : type(t), n_embd(embd), n_ff(ff), gated(with_gate) {
        std::mt19937 rng(seed);
        std::normal_distribution<float> dist(0.0f, 0.5f);
        auto fill = [&](std::vector<uint8_t>& m) {
            const size_t rb = ember::tensor::row_bytes(t, embd);
            m.resize(rb * size_t(ff));
            std::vector<float> row(static_cast<size_t>(embd));
            for (int64_t r = 0; r < ff; ++r) {
                for (auto& x : row) x = dist(rng);
                ember::tensor::quantize_row(t, row.data(), m.data() + size_t(r) * rb, embd);
            }
        };
        if (gated) fill(gate);
        fill(up);
        fill(down_t);
    }

    WeightView view(const std::vector<uint8_t>& m) const {
        if (m.empty()) return {};
        return {type, n_embd, n_ff, m.data(), ember::tensor::row_bytes(type, n_embd)};
    }
    ember::backend::FfnRows rows() const { return {view(gate), view(up), view(down_t)}; }
};

using test_helpers::random_vector;

// n random N(0, 1) values as F16: a KV cache's keys or values.
inline std::vector<uint16_t> random_half(size_t n, uint32_t seed) {
    const std::vector<float> f = random_vector(n, seed);
    std::vector<uint16_t> h(n);
    for (size_t i = 0; i < n; ++i) h[i] = ember::tensor::f32_to_fp16(f[i]);
    return h;
}

// `count` distinct neurons of n, ascending.
inline std::vector<int32_t> pick(int64_t n, int64_t count, uint32_t seed) {
    std::vector<int32_t> all(static_cast<size_t>(n));
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), std::mt19937(seed));
    all.resize(size_t(count));
    std::sort(all.begin(), all.end());
    return all;
}

// Each result may differ from the CPU's by float rounding in another summation order: the bound
// is relative to the sum of the magnitudes of the terms.
constexpr float kRelativeError = 2e-5f;

// got == row `id` of m · prepared row x, within kRelativeError of the terms' magnitudes.
inline bool close_to_cpu(const WeightView& m, int32_t id, const uint8_t* x, float got) {
    const int64_t n = m.n_cols;
    const float want = ember::tensor::dot_row(m.type, n, m.row(id), x);
    std::vector<float> w(static_cast<size_t>(n)), xs(static_cast<size_t>(n));
    ember::tensor::dequantize_row(m.type, m.row(id), w.data(), n);
    ember::tensor::dequantize_row(ember::tensor::activation_type(m.type), x, xs.data(), n);
    float magnitude = 0;
    for (int64_t i = 0; i < n; ++i) magnitude += std::fabs(w[size_t(i)] * xs[size_t(i)]);
    if (std::fabs(got - want) <= kRelativeError * magnitude + 1e-6f) return true;
    qWarning("neuron %d: %g, the CPU says %g (bound %g)", id, double(got), double(want), double(kRelativeError * magnitude));
    return false;
}

// A device holding its whole budget, as a session's placement would size it.
inline std::unique_ptr<ember::backend::Device> open_device(const QString& which, uint64_t budget) {
    auto dev = which == "sim" ? ember::backend::make_sim_device(budget)
                              : ember::backend::make_gpu_device(which.mid(4).toInt(), budget);
    dev->set_footprint(budget);
    return dev;
}

// What a test reserves for a device's compute scratch (a GPU takes it from the memory it holds),
// as a session reserves its margin.
constexpr uint64_t kScratch = 1 << 18;

// Devices to run on: sim, and gpu:N for each usable GPU.
inline void add_device_rows(const std::function<void(const QString&)>& rows) {
    rows(QStringLiteral("sim"));
    for (const ember::GpuInfo& g : ember::probe_gpus().gpus)
        if (g.unusable.empty()) rows(QStringLiteral("gpu:%1").arg(g.index));
}

const DType kTypes[] = {DType::F16, DType::Q4_0, DType::Q8_0};

// A dense matrix of n_rows rows of n_cols random values in one weight type.
struct Matrix {
    std::vector<uint8_t> data;
    WeightView view;

    Matrix(DType t, int64_t n_cols, int64_t n_rows, uint32_t seed) {
        const size_t rb = ember::tensor::row_bytes(t, n_cols);
        data.resize(rb * size_t(n_rows));
        for (int64_t r = 0; r < n_rows; ++r) {
            const std::vector<float> row = random_vector(size_t(n_cols), seed + uint32_t(r));
            ember::tensor::quantize_row(t, row.data(), data.data() + size_t(r) * rb, n_cols);
        }
        view = {t, n_cols, n_rows, data.data(), rb};
    }
    uint64_t bytes() const { return data.size(); }
};

}  // namespace backend_test
