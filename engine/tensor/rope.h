#pragma once
// Rotary position embeddings: the angles of a position, computed once on the host and shared by
// every layer (and any device), and the rotation of a row of heads by them.

#include <cstdint>

namespace ember::tensor {

enum class RopePairs {
    Adjacent,  // (2j, 2j+1): GGML rope mode 0, LLaMA files with Q/K rows permuted at conversion
    NeoX,      // (j, j + head_dim/2): GGML NeoX mode, HF rotate-half (Falcon)
};

// angles[0, head_dim/2) = cos θ_j and angles[head_dim/2, head_dim) = sin θ_j, where
// θ_j = pos · freq_scale · freq_base^(-2j/head_dim) / factors[j] (Llama 3.1's long-context
// scaling stores the factors as `rope_freqs.weight`; null: all 1).
void rope_angles(int32_t pos, int32_t head_dim, float freq_base, float freq_scale, const float* factors, float* angles);

// Rotates each of the n_heads heads of x in place by rope_angles' angles.
void rope_rotate(float* x, int32_t n_heads, int32_t head_dim, const float* angles, RopePairs pairs);

}  // namespace ember::tensor
