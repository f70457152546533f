#include "tensor/dtype.h"

#include "tensor/quant_blocks.h"

namespace ember::tensor {

std::optional<DType> dtype_from_ggml(uint32_t ggml_type) {
    switch (ggml_type) {
        case 0: return DType::F32;
        case 1: return DType::F16;
        case 2: return DType::Q4_0;
        case 8: return DType::Q8_0;
        case 14: return DType::Q6_K;
        case 30: return DType::BF16;
        default: return std::nullopt;
    }
}

const char* dtype_name(DType t) {
    switch (t) {
        case DType::F32: return "F32";
        case DType::F16: return "F16";
        case DType::Q4_0: return "Q4_0";
        case DType::Q8_0: return "Q8_0";
        case DType::Q6_K: return "Q6_K";
        case DType::Q8_K: return "Q8_K";
        case DType::BF16: return "BF16";
        case DType::Q4_0_X16: return "Q4_0 (interleaved)";
    }
    return "?";
}

int64_t block_size(DType t) {
    switch (t) {
        case DType::Q4_0: case DType::Q4_0_X16: case DType::Q8_0: return kQK;
        case DType::Q6_K: case DType::Q8_K: return kQK_K;
        default: return 1;
    }
}

size_t block_bytes(DType t) {
    switch (t) {
        case DType::F32: return 4;
        case DType::F16: case DType::BF16: return 2;
        case DType::Q4_0: case DType::Q4_0_X16: return sizeof(BlockQ4_0);
        case DType::Q8_0: return sizeof(BlockQ8_0);
        case DType::Q6_K: return sizeof(BlockQ6_K);
        case DType::Q8_K: return sizeof(BlockQ8_K);
    }
    return 0;
}

size_t row_bytes(DType t, int64_t n) { return size_t(n / block_size(t)) * block_bytes(t); }

DType activation_type(DType weight) {
    switch (weight) {
        case DType::Q4_0: case DType::Q4_0_X16: case DType::Q8_0: return DType::Q8_0;
        case DType::Q6_K: return DType::Q8_K;
        case DType::F16: return DType::F16;
        case DType::BF16: return DType::BF16;
        default: return DType::F32;
    }
}

}  // namespace ember::tensor
