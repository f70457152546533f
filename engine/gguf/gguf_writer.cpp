#include "gguf/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#if defined(_WIN32)
#include <io.h>
#else
#include <unistd.h>
#endif

#include "common/error.h"
#include "common/utf8_path.h"
#include "gguf/ggml_type.h"

namespace ember::gguf {
namespace {

int sync_to_disk(std::FILE* f) {
#if defined(_WIN32)
    return _commit(_fileno(f));
#else
    return ::fsync(fileno(f));
#endif
}

class Out {
public:
    explicit Out(const std::string& path) : path_(path) {
#if defined(_WIN32)
        f_ = _wfopen(utf8_path(path).c_str(), L"wb");
#else
        f_ = std::fopen(path.c_str(), "wb");
#endif
        if (!f_) fail(path + ": cannot create: " + std::strerror(errno));
    }
    ~Out() {
        if (f_) std::fclose(f_);
    }
    void bytes(const void* p, size_t n) {
        if (n && std::fwrite(p, 1, n, f_) != n)
            fail(path_ + ": write failed: " + std::strerror(errno) + (errno == ENOSPC ? " (disk full)" : ""));
        pos_ += n;
    }
    template <class T>
    void pod(T v) { bytes(&v, sizeof v); }
    void str(const std::string& s) {
        pod<uint64_t>(s.size());
        bytes(s.data(), s.size());
    }
    void pad_to(uint64_t alignment) {
        static const uint8_t zeros[64] = {};
        while (pos_ % alignment) bytes(zeros, std::min<uint64_t>(sizeof zeros, alignment - pos_ % alignment));
    }
    void close() {
        if (std::fflush(f_) != 0 || sync_to_disk(f_) != 0)
            fail(path_ + ": flush failed: " + std::strerror(errno) + (errno == ENOSPC ? " (disk full)" : ""));
        int rc = std::fclose(f_);
        f_ = nullptr;
        if (rc != 0) fail(path_ + ": close failed: " + std::strerror(errno));
    }
    uint64_t pos() const { return pos_; }

private:
    std::string path_;
    std::FILE* f_ = nullptr;
    uint64_t pos_ = 0;
};

void write_scalar(Out& o, ValueType t, const std::variant<int64_t, double, bool, std::string, Array>& d) {
    auto as_int = [&]() -> int64_t {
        if (std::holds_alternative<int64_t>(d)) return std::get<int64_t>(d);
        if (std::holds_alternative<bool>(d)) return std::get<bool>(d);
        return int64_t(std::get<double>(d));
    };
    auto as_float = [&]() -> double {
        return std::holds_alternative<double>(d) ? std::get<double>(d) : double(as_int());
    };
    switch (t) {
        case ValueType::U8: o.pod(uint8_t(as_int())); break;
        case ValueType::I8: o.pod(int8_t(as_int())); break;
        case ValueType::U16: o.pod(uint16_t(as_int())); break;
        case ValueType::I16: o.pod(int16_t(as_int())); break;
        case ValueType::U32: o.pod(uint32_t(as_int())); break;
        case ValueType::I32: o.pod(int32_t(as_int())); break;
        case ValueType::U64: o.pod(uint64_t(as_int())); break;
        case ValueType::I64: o.pod(int64_t(as_int())); break;
        case ValueType::Bool: o.pod(uint8_t(as_int() != 0)); break;
        case ValueType::F32: o.pod(float(as_float())); break;
        case ValueType::F64: o.pod(as_float()); break;
        case ValueType::String: o.str(std::get<std::string>(d)); break;
        case ValueType::Array: break;
    }
}

void write_value(Out& o, const Value& v) {
    o.pod(uint32_t(v.type));
    if (v.type != ValueType::Array) {
        write_scalar(o, v.type, v.data);
        return;
    }
    const Array& a = std::get<Array>(v.data);
    o.pod(uint32_t(a.elem));
    o.pod(uint64_t(a.size()));
    if (a.elem == ValueType::String) {
        for (const auto& s : a.strings) o.str(s);
    } else if (a.elem == ValueType::F32 || a.elem == ValueType::F64) {
        for (double f : a.floats) write_scalar(o, a.elem, f);
    } else {
        for (int64_t i : a.ints) write_scalar(o, a.elem, i);
    }
}

size_t expected_bytes(const std::string& name, const std::vector<int64_t>& ne, uint32_t type, TypeIds ids) {
    const GgmlTypeInfo* info = ggml_type_info(type, ids);
    if (!info) fail("GGUF writer: tensor '" + name + "' has unknown type id " + std::to_string(type));
    if (ne.empty() || ne.size() > 4) fail("GGUF writer: tensor '" + name + "' must have 1 to 4 dimensions");
    if (ne[0] % info->block) fail("GGUF writer: tensor '" + name + "' row length is not a multiple of the block");
    size_t n = 1;
    for (int64_t d : ne) {
        if (d < 0) fail("GGUF writer: tensor '" + name + "' has a negative dimension");
        n *= size_t(d);
    }
    return n / info->block * info->block_bytes;
}

}  // namespace

void Writer::set(const std::string& key, Value value) {
    for (auto& [k, v] : kv_)
        if (k == key) {
            v = std::move(value);
            return;
        }
    kv_.emplace_back(key, std::move(value));
}

void Writer::remove(const std::string& key) {
    std::erase_if(kv_, [&](const auto& kv) { return kv.first == key; });
}

void Writer::add_tensor(const std::string& name, std::vector<int64_t> ne, uint32_t type,
                        std::span<const uint8_t> data) {
    if (expected_bytes(name, ne, type, type_ids_) != data.size())
        fail("GGUF writer: tensor '" + name + "' has " + std::to_string(data.size()) + " bytes, its shape needs " +
             std::to_string(expected_bytes(name, ne, type, type_ids_)));
    tensors_.push_back({name, std::move(ne), type, data});
}

void Writer::add_tensor(const std::string& name, std::vector<int64_t> ne, uint32_t type, std::vector<uint8_t> data) {
    owned_.push_back(std::move(data));
    add_tensor(name, std::move(ne), type, std::span<const uint8_t>(owned_.back()));
}

void Writer::write(const std::string& path, const std::string& magic) const {
    if (magic != "GGUF" && magic != "PWRI") fail("GGUF writer: magic must be GGUF or PWRI, not '" + magic + "'");
    uint64_t alignment = 32;
    for (const auto& [k, v] : kv_)
        if (k == "general.alignment" && std::holds_alternative<int64_t>(v.data))
            alignment = uint64_t(std::get<int64_t>(v.data));

    const std::string tmp = path + ".tmp";
    // A failed write (full disk, bad tensor) leaves no partial file behind.
    try {
        Out o(tmp);
        o.bytes(magic.data(), 4);
        o.pod<uint32_t>(3);
        o.pod<uint64_t>(tensors_.size());
        o.pod<uint64_t>(kv_.size());
        for (const auto& [k, v] : kv_) {
            o.str(k);
            write_value(o, v);
        }
        uint64_t offset = 0;
        for (const auto& t : tensors_) {
            o.str(t.name);
            o.pod<uint32_t>(uint32_t(t.ne.size()));
            for (int64_t d : t.ne) o.pod<uint64_t>(uint64_t(d));
            o.pod<uint32_t>(t.type);
            o.pod<uint64_t>(offset);
            offset += (t.data.size() + alignment - 1) / alignment * alignment;
        }
        o.pad_to(alignment);
        for (const auto& t : tensors_) {
            o.bytes(t.data.data(), t.data.size());
            o.pad_to(alignment);
        }
        o.close();
    } catch (...) {
        std::remove(tmp.c_str());
        throw;
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        int err = errno;
        std::remove(tmp.c_str());
        fail(path + ": cannot rename temporary file into place: " + std::strerror(err));
    }
}

}  // namespace ember::gguf
