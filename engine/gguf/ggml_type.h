#pragma once
// GGML tensor type ids as stored in GGUF tensor infos, with their block geometry.
// The reader needs these to size every tensor; kernels exist for a subset (tensor/dtype.h).

#include <cstdint>
#include <string>

namespace ember::gguf {

struct GgmlTypeInfo {
    const char* name;
    uint32_t block;        // elements per block
    uint32_t block_bytes;  // bytes per block
};

// nullptr for an id this engine does not know (the caller names the tensor and id).
const GgmlTypeInfo* ggml_type_info(uint32_t type);
std::string ggml_type_name(uint32_t type);  // "Q4_0", or "type 99" when unknown

}  // namespace ember::gguf
