#include "gguf/ggml_type.h"

#include <array>

namespace ember::gguf {
namespace {

struct Entry {
    uint32_t id;
    GgmlTypeInfo info;
};

constexpr std::array<Entry, 20> kTypes{{
    {0, {"F32", 1, 4}},       {1, {"F16", 1, 2}},       {2, {"Q4_0", 32, 18}},
    {3, {"Q4_1", 32, 20}},    {6, {"Q5_0", 32, 22}},    {7, {"Q5_1", 32, 24}},
    {8, {"Q8_0", 32, 34}},    {9, {"Q8_1", 32, 36}},    {10, {"Q2_K", 256, 84}},
    {11, {"Q3_K", 256, 110}}, {12, {"Q4_K", 256, 144}}, {13, {"Q5_K", 256, 176}},
    {14, {"Q6_K", 256, 210}}, {15, {"Q8_K", 256, 292}}, {16, {"I8", 1, 1}},
    {17, {"I16", 1, 2}},      {18, {"I32", 1, 4}},      {27, {"I64", 1, 8}},
    {28, {"F64", 1, 8}},      {30, {"BF16", 1, 2}},
}};

}  // namespace

const GgmlTypeInfo* ggml_type_info(uint32_t type) {
    for (const auto& e : kTypes)
        if (e.id == type) return &e.info;
    return nullptr;
}

std::string ggml_type_name(uint32_t type) {
    const GgmlTypeInfo* info = ggml_type_info(type);
    return info ? std::string(info->name) : "type " + std::to_string(type);
}

}  // namespace ember::gguf
