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

// Which numbering a file's type ids follow. PowerInfer's ggml forked before the i-quants took
// ids 16-18 and numbers its integer types I8 = 16, I16 = 17, I32 = 18 (its GPU index files
// store I32 as 18); upstream GGUF has them at 24-26.
enum class TypeIds { Upstream, PowerInfer };

// nullptr for an id this engine does not know (the caller names the tensor and id).
const GgmlTypeInfo* ggml_type_info(uint32_t type, TypeIds ids = TypeIds::Upstream);
std::string ggml_type_name(uint32_t type, TypeIds ids = TypeIds::Upstream);  // "Q4_0", or "type 99" when unknown

}  // namespace ember::gguf
