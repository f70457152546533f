#pragma once
// The weight types the engine computes with, their GGUF ids, and row sizes.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ember::tensor {

enum class DType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,  // activations only (the partner of K-quant and IQ4_XS weights)
    IQ4_NL = 20,
    IQ4_XS = 23,
    BF16 = 30,
    // Q4_0 re-laid in memory for the AVX-512 kernels (tensor/q4_0_x16.h): the same values and
    // row size as Q4_0; made at load, never read from or written to a file.
    Q4_0_X16 = 0x10002,
    // Q4_0, Q8_0, Q4_K, Q5_K and Q6_K matrices re-laid in groups of eight rows
    // (tensor/grouped_rows.h): the same values and bytes per row as stored, but a row is no
    // longer contiguous, so only whole-matrix products read them. Made at load, never read from
    // or written to a file.
    Q4_0_R8 = 0x10102,
    Q8_0_R8 = 0x10108,
    Q4_K_R8 = 0x1010C,
    Q5_K_R8 = 0x1010D,
    Q6_K_R8 = 0x1010E,
};

// Whether a matrix of this type is grouped by eight rows (only whole-matrix products read it).
inline bool is_grouped(DType t) {
    return t == DType::Q4_0_R8 || t == DType::Q8_0_R8 || t == DType::Q4_K_R8 || t == DType::Q5_K_R8 ||
           t == DType::Q6_K_R8;
}

// The type a weight has in its file (Q4_0 for Q4_0_X16 and Q4_0_R8, Q4_K for Q4_K_R8, …).
inline DType stored_type(DType t) {
    switch (t) {
        case DType::Q4_0_X16: case DType::Q4_0_R8: return DType::Q4_0;
        case DType::Q8_0_R8: return DType::Q8_0;
        case DType::Q4_K_R8: return DType::Q4_K;
        case DType::Q5_K_R8: return DType::Q5_K;
        case DType::Q6_K_R8: return DType::Q6_K;
        default: return t;
    }
}

// nullopt when the engine has no kernels for the GGUF type id.
std::optional<DType> dtype_from_ggml(uint32_t ggml_type);
const char* dtype_name(DType t);
// The stored type dtype_name() names ("Q4_K"), or nullopt.
std::optional<DType> dtype_from_name(std::string_view name);
int64_t block_size(DType t);
size_t block_bytes(DType t);
size_t row_bytes(DType t, int64_t n);  // n must be a multiple of block_size(t)

// The type a weight's dot products take their activation in (llama.cpp's vec_dot_type):
// quantized weights meet an int8-quantized activation, F16 weights an F16 one.
DType activation_type(DType weight);

}  // namespace ember::tensor
