#include "tensor/dtype.h"

#include "tensor/quant_blocks.h"

namespace ember::tensor {

std::optional<DType> dtype_from_ggml(uint32_t ggml_type) {
    switch (ggml_type) {
        case 0: return DType::F32;
        case 1: return DType::F16;
        case 2: return DType::Q4_0;
        case 3: return DType::Q4_1;
        case 6: return DType::Q5_0;
        case 7: return DType::Q5_1;
        case 8: return DType::Q8_0;
        case 10: return DType::Q2_K;
        case 11: return DType::Q3_K;
        case 12: return DType::Q4_K;
        case 13: return DType::Q5_K;
        case 14: return DType::Q6_K;
        case 20: return DType::IQ4_NL;
        case 23: return DType::IQ4_XS;
        case 30: return DType::BF16;
        default: return std::nullopt;
    }
}

const char* dtype_name(DType t) {
    switch (t) {
        case DType::F32: return "F32";
        case DType::F16: return "F16";
        case DType::Q4_0: return "Q4_0";
        case DType::Q4_1: return "Q4_1";
        case DType::Q5_0: return "Q5_0";
        case DType::Q5_1: return "Q5_1";
        case DType::Q8_0: return "Q8_0";
        case DType::Q2_K: return "Q2_K";
        case DType::Q3_K: return "Q3_K";
        case DType::Q4_K: return "Q4_K";
        case DType::Q5_K: return "Q5_K";
        case DType::Q6_K: return "Q6_K";
        case DType::Q8_K: return "Q8_K";
        case DType::IQ4_NL: return "IQ4_NL";
        case DType::IQ4_XS: return "IQ4_XS";
        case DType::BF16: return "BF16";
        case DType::Q4_0_X16: return "Q4_0 (interleaved)";
        case DType::Q4_0_R8: return "Q4_0 (grouped rows)";
        case DType::Q8_0_R8: return "Q8_0 (grouped rows)";
        case DType::Q4_K_R8: return "Q4_K (grouped rows)";
        case DType::Q5_K_R8: return "Q5_K (grouped rows)";
        case DType::Q6_K_R8: return "Q6_K (grouped rows)";
    }
    return "?";
}

std::optional<DType> dtype_from_name(std::string_view name) {
    for (uint32_t id = 0; id < 64; ++id) {
        const std::optional<DType> t = dtype_from_ggml(id);
        if (t && name == dtype_name(*t)) return t;
    }
    return std::nullopt;
}

int64_t block_size(DType t) {
    switch (t) {
        case DType::F32: case DType::F16: case DType::BF16: return 1;
        case DType::Q4_0: case DType::Q4_0_X16: case DType::Q4_0_R8: case DType::Q4_1: case DType::Q5_0: case DType::Q5_1:
        case DType::Q8_0: case DType::Q8_0_R8: case DType::IQ4_NL:
            return kQK;
        case DType::Q2_K: case DType::Q3_K: case DType::Q4_K: case DType::Q4_K_R8: case DType::Q5_K:
        case DType::Q5_K_R8: case DType::Q6_K: case DType::Q6_K_R8: case DType::Q8_K: case DType::IQ4_XS:
            return kQK_K;
    }
    return 1;
}

size_t block_bytes(DType t) {
    switch (t) {
        case DType::F32: return 4;
        case DType::F16: case DType::BF16: return 2;
        case DType::Q4_0: case DType::Q4_0_X16: case DType::Q4_0_R8: return sizeof(BlockQ4_0);
        case DType::Q4_1: return sizeof(BlockQ4_1);
        case DType::Q5_0: return sizeof(BlockQ5_0);
        case DType::Q5_1: return sizeof(BlockQ5_1);
        case DType::Q8_0: case DType::Q8_0_R8: return sizeof(BlockQ8_0);
        case DType::Q2_K: return sizeof(BlockQ2_K);
        case DType::Q3_K: return sizeof(BlockQ3_K);
        case DType::Q4_K: case DType::Q4_K_R8: return sizeof(BlockQ4_K);
        case DType::Q5_K: case DType::Q5_K_R8: return sizeof(BlockQ5_K);
        case DType::Q6_K: case DType::Q6_K_R8: return sizeof(BlockQ6_K);
        case DType::Q8_K: return sizeof(BlockQ8_K);
        case DType::IQ4_NL: return sizeof(BlockIQ4_NL);
        case DType::IQ4_XS: return sizeof(BlockIQ4_XS);
    }
    return 0;
}

size_t row_bytes(DType t, int64_t n) { return size_t(n / block_size(t)) * block_bytes(t); }

DType activation_type(DType weight) {
    switch (weight) {
        case DType::Q4_0: case DType::Q4_0_X16: case DType::Q4_0_R8: case DType::Q4_1: case DType::Q5_0: case DType::Q5_1:
        case DType::Q8_0: case DType::Q8_0_R8: case DType::IQ4_NL:
            return DType::Q8_0;
        case DType::Q2_K: case DType::Q3_K: case DType::Q4_K: case DType::Q4_K_R8: case DType::Q5_K:
        case DType::Q5_K_R8: case DType::Q6_K: case DType::Q6_K_R8: case DType::IQ4_XS:
            return DType::Q8_K;
        case DType::F16: return DType::F16;
        case DType::BF16: return DType::BF16;
        default: return DType::F32;
    }
}

}  // namespace ember::tensor
