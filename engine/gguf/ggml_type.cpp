#include "gguf/ggml_type.h"

#include <array>

namespace ember::gguf {
namespace {

struct Entry {
    uint32_t id;
    GgmlTypeInfo info;
};

// Every type upstream GGUF defines (ggml.h's enum), so that a file of any of them opens and a
// tensor Ember cannot compute with is named by its type.
constexpr std::array<Entry, 35> kTypes{{
    {0, {"F32", 1, 4}},          {1, {"F16", 1, 2}},         {2, {"Q4_0", 32, 18}},
    {3, {"Q4_1", 32, 20}},       {6, {"Q5_0", 32, 22}},      {7, {"Q5_1", 32, 24}},
    {8, {"Q8_0", 32, 34}},       {9, {"Q8_1", 32, 36}},      {10, {"Q2_K", 256, 84}},
    {11, {"Q3_K", 256, 110}},    {12, {"Q4_K", 256, 144}},   {13, {"Q5_K", 256, 176}},
    {14, {"Q6_K", 256, 210}},    {15, {"Q8_K", 256, 292}},   {16, {"IQ2_XXS", 256, 66}},
    {17, {"IQ2_XS", 256, 74}},   {18, {"IQ3_XXS", 256, 98}}, {19, {"IQ1_S", 256, 50}},
    {20, {"IQ4_NL", 32, 18}},    {21, {"IQ3_S", 256, 110}},  {22, {"IQ2_S", 256, 82}},
    {23, {"IQ4_XS", 256, 136}},  {24, {"I8", 1, 1}},         {25, {"I16", 1, 2}},
    {26, {"I32", 1, 4}},         {27, {"I64", 1, 8}},        {28, {"F64", 1, 8}},
    {29, {"IQ1_M", 256, 56}},    {30, {"BF16", 1, 2}},       {34, {"TQ1_0", 256, 54}},
    {35, {"TQ2_0", 256, 66}},    {39, {"MXFP4", 32, 17}},    {40, {"NVFP4", 64, 36}},
    {41, {"Q1_0", 128, 18}},     {42, {"Q2_0", 64, 18}},
}};

constexpr std::array<Entry, 3> kPowerInferIntegers{{
    {16, {"I8", 1, 1}}, {17, {"I16", 1, 2}}, {18, {"I32", 1, 4}},
}};

}  // namespace

const GgmlTypeInfo* ggml_type_info(uint32_t type, TypeIds ids) {
    if (ids == TypeIds::PowerInfer) {
        for (const auto& e : kPowerInferIntegers)
            if (e.id == type) return &e.info;
        if (type > 18) return nullptr;
    }
    for (const auto& e : kTypes)
        if (e.id == type) return &e.info;
    return nullptr;
}

std::string ggml_type_name(uint32_t type, TypeIds ids) {
    const GgmlTypeInfo* info = ggml_type_info(type, ids);
    return info ? std::string(info->name) : "type " + std::to_string(type);
}

}  // namespace ember::gguf
