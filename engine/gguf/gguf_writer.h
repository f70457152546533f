#pragma once
// GGUF v3 writer: metadata in insertion order, tensors aligned to `general.alignment`
// (default 32). Used by ember-quantize, the fixture tools and the tests.

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "gguf/ggml_type.h"
#include "gguf/gguf_value.h"

namespace ember::gguf {

class Writer {
public:
    explicit Writer(TypeIds ids = TypeIds::Upstream) : type_ids_(ids) {}

    // Replaces an existing key in place, so copied metadata keeps its order.
    void set(const std::string& key, Value value);
    void remove(const std::string& key);

    // `data` must stay alive until write(); its size must match ne and type.
    void add_tensor(const std::string& name, std::vector<int64_t> ne, uint32_t type,
                    std::span<const uint8_t> data);
    // Same, but the writer keeps the bytes.
    void add_tensor(const std::string& name, std::vector<int64_t> ne, uint32_t type,
                    std::vector<uint8_t> data);

    // Writes to `path` through a temporary file renamed into place; magic is "GGUF" or "PWRI".
    void write(const std::string& path, const std::string& magic = "GGUF") const;

private:
    struct Tensor {
        std::string name;
        std::vector<int64_t> ne;
        uint32_t type;
        std::span<const uint8_t> data;
    };
    TypeIds type_ids_;
    std::vector<std::pair<std::string, Value>> kv_;
    std::vector<Tensor> tensors_;
    std::deque<std::vector<uint8_t>> owned_;  // a deque never moves its elements, so spans stay valid
};

}  // namespace ember::gguf
