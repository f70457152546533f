#pragma once
// GGUF v2/v3 reader over a read-only mmap. Every count, string length, offset and size
// is checked against the file size before it is touched; any problem throws EngineError
// naming the file and the field.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gguf/ggml_type.h"
#include "gguf/gguf_value.h"
#include "gguf/mapped_file.h"

namespace ember::gguf {

struct TensorInfo {
    std::string name;
    std::vector<int64_t> ne;   // ne[0] is the contiguous dimension
    uint32_t type = 0;         // raw GGML type id (see tensor/dtype.h)
    uint64_t offset = 0;       // relative to the data section
    const uint8_t* data = nullptr;
    size_t nbytes = 0;
    int64_t nelements() const;
};

class File {
public:
    static std::unique_ptr<File> open(const std::string& path, MappedFile::Mode mode = MappedFile::Mode::Map,
                                      const MappedFile::Progress& progress = {}, TypeIds ids = TypeIds::Upstream);
    // The metadata and tensor table only, from a file holding the first bytes of a GGUF whose
    // full size is `full_size` (e.g. fetched with an HTTP Range request): tensors are checked
    // against full_size and have no data. Fails like open() when the header does not fit.
    static std::unique_ptr<File> open_header(const std::string& path, uint64_t full_size);

    const std::string& path() const { return path_; }
    const std::string& magic() const { return magic_; }   // "GGUF" or "PWRI"
    uint32_t version() const { return version_; }
    uint32_t alignment() const { return alignment_; }
    uint64_t data_offset() const { return data_offset_; }
    size_t file_size() const { return map_.size(); }

    // Metadata in file order.
    const std::vector<std::pair<std::string, Value>>& metadata() const { return kv_; }
    const Value* find(const std::string& key) const;

    // Typed getters: nullopt when absent; EngineError naming the key when present with a type
    // that cannot represent the request (integers convert when the value fits).
    std::optional<uint64_t> get_uint(const std::string& key) const;
    std::optional<int64_t> get_int(const std::string& key) const;
    std::optional<double> get_float(const std::string& key) const;
    std::optional<bool> get_bool(const std::string& key) const;
    std::optional<std::string> get_string(const std::string& key) const;
    const Array* get_array(const std::string& key) const;

    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo* find_tensor(const std::string& name) const;

    // A tensor's bytes to re-lay in place while the model is being set up: for a file opened as
    // a copy, or a map's tensor made resident, not yet sealed; null otherwise.
    uint8_t* writable_bytes(const TensorInfo& t) const {
        return t.data ? map_.writable_range(uint64_t(t.data - map_.data()), t.nbytes) : nullptr;
    }
    // A map opened for a mixture of experts kept partly on disk: reads the pages of [p, p + n),
    // bytes of this file, into memory now (MappedFile::make_resident). Const: the bytes stay the
    // same, only where they live changes.
    void make_resident(const void* p, size_t n) const {
        map_.make_resident(uint64_t(static_cast<const uint8_t*>(p) - map_.data()), n);
    }
    void seal() { map_.seal(); }

private:
    File() = default;
    void parse(uint64_t full_size);

    std::string path_;
    mutable MappedFile map_;  // mutable for make_resident()
    std::string magic_;
    uint32_t version_ = 0;
    uint32_t alignment_ = 32;
    uint64_t data_offset_ = 0;
    TypeIds type_ids_ = TypeIds::Upstream;
    std::vector<std::pair<std::string, Value>> kv_;
    std::map<std::string, size_t> kv_index_;
    std::vector<TensorInfo> tensors_;
    std::map<std::string, size_t> tensor_index_;
};

}  // namespace ember::gguf
