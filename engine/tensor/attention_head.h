#pragma once
// One head of causal attention for one token over an F16 key/value cache, with GGML's
// roundings: the query meets the keys as F16, exp goes through F16, and the weights meet the
// values as F16. The CPU's attention and the sim device both run this, so their results are
// the same bits.

#include <cstddef>
#include <cstdint>

namespace ember::tensor {

// out[0, head_dim) = Σ_p softmax(s_p)_p · v_p over p < n_keys, s_p = scale · q·k_p, or with
// softcap > 0 (Gemma 2) softcap · tanh(scale · q·k_p / softcap). Key p of this head is at
// k + p * stride (F16), value p at v + p * stride. half: max(head_dim, n_keys) F16 values and
// scores: n_keys floats of scratch.
void attend_head(const float* q, const uint16_t* k, const uint16_t* v, size_t stride, int32_t n_keys, int32_t head_dim,
                 float scale, uint16_t* half, float* scores, float* out, float softcap = 0.0f);

}  // namespace ember::tensor
