#include "model/blocks.h"

#include <string>

#include "common/error.h"
#include "tensor/quantize.h"

namespace ember::model {

void ffn_activation(FfnGate gate_kind, const float* gate, const float* up, float* act, int64_t n) {
    if (gate_kind == FfnGate::Relu) {
        for (int64_t i = 0; i < n; ++i) act[i] = ffn_activation_value(gate_kind, 0.0f, up[i]);
    } else {
        for (int64_t i = 0; i < n; ++i) act[i] = ffn_activation_value(gate_kind, gate[i], up[i]);
    }
}

void add_in_place(float* x, const float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void embed_tokens(const tensor::WeightView& table, const int32_t* tokens, int32_t n, float* out) {
    for (int32_t t = 0; t < n; ++t) {
        if (tokens[t] < 0 || tokens[t] >= table.n_rows)
            fail("token id " + std::to_string(tokens[t]) + " is outside the vocabulary (0.." +
                 std::to_string(table.n_rows - 1) + ")");
        tensor::dequantize_row(table.type, table.row(tokens[t]), out + size_t(t) * table.n_cols, table.n_cols);
    }
}

}  // namespace ember::model
