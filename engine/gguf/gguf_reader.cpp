#include "gguf/gguf_reader.h"

#include <cstring>

#include "common/error.h"
#include "gguf/ggml_type.h"

namespace ember::gguf {
namespace {

constexpr uint64_t kMaxDims = 4;

// Bounds-checked little-endian cursor over the mapped bytes; every failure names the file
// and what was being read.
class Cursor {
public:
    Cursor(const std::string& path, const uint8_t* data, size_t size)
        : path_(path), data_(data), size_(size) {}

    size_t pos() const { return pos_; }
    size_t remaining() const { return size_ - pos_; }

    void need(uint64_t n, const std::string& what) const {
        if (n > remaining())
            fail(path_ + ": truncated while reading " + what + ": need " + std::to_string(n) +
                 " bytes at offset " + std::to_string(pos_) + ", file has " + std::to_string(size_));
    }

    template <class T>
    T read(const std::string& what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, data_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }

    std::string read_string(const std::string& what) {
        uint64_t n = read<uint64_t>(what + " length");
        need(n, what + " (length " + std::to_string(n) + ")");
        std::string s(reinterpret_cast<const char*>(data_ + pos_), size_t(n));
        pos_ += size_t(n);
        return s;
    }

private:
    const std::string& path_;
    const uint8_t* data_;
    size_t size_;
    size_t pos_ = 0;
};

int64_t read_int_scalar(Cursor& c, ValueType t, const std::string& what) {
    switch (t) {
        case ValueType::U8: return c.read<uint8_t>(what);
        case ValueType::I8: return c.read<int8_t>(what);
        case ValueType::U16: return c.read<uint16_t>(what);
        case ValueType::I16: return c.read<int16_t>(what);
        case ValueType::U32: return c.read<uint32_t>(what);
        case ValueType::I32: return c.read<int32_t>(what);
        case ValueType::U64: return int64_t(c.read<uint64_t>(what));
        case ValueType::I64: return c.read<int64_t>(what);
        case ValueType::Bool: return c.read<uint8_t>(what) != 0;
        default: return 0;
    }
}

bool is_float(ValueType t) { return t == ValueType::F32 || t == ValueType::F64; }

double read_float_scalar(Cursor& c, ValueType t, const std::string& what) {
    return t == ValueType::F32 ? double(c.read<float>(what)) : c.read<double>(what);
}

Value read_value(Cursor& c, const std::string& path, const std::string& key, uint32_t raw_type) {
    if (!is_known_value_type(raw_type))
        fail(path + ": metadata key '" + key + "' has unknown value type " + std::to_string(raw_type));
    auto type = ValueType(raw_type);
    const std::string what = "metadata key '" + key + "'";
    Value v;
    v.type = type;
    if (type == ValueType::String) {
        v.data = c.read_string(what);
    } else if (type == ValueType::Bool) {
        v.data = c.read<uint8_t>(what) != 0;
    } else if (is_float(type)) {
        v.data = read_float_scalar(c, type, what);
    } else if (type == ValueType::Array) {
        uint32_t raw_elem = c.read<uint32_t>(what + " element type");
        if (!is_known_value_type(raw_elem) || ValueType(raw_elem) == ValueType::Array)
            fail(path + ": metadata key '" + key + "' is an array of unsupported element type " +
                 std::to_string(raw_elem));
        Array a;
        a.elem = ValueType(raw_elem);
        uint64_t n = c.read<uint64_t>(what + " element count");
        // Every element takes at least one byte (a string at least eight), so a count the
        // remaining bytes cannot hold is rejected before any allocation.
        uint64_t min_bytes = a.elem == ValueType::String ? 8 : scalar_size(a.elem);
        if (n > c.remaining() / min_bytes)
            fail(path + ": metadata key '" + key + "' claims " + std::to_string(n) +
                 " elements, more than the file can hold");
        if (a.elem == ValueType::String) {
            a.strings.reserve(size_t(n));
            for (uint64_t i = 0; i < n; ++i) a.strings.push_back(c.read_string(what + " element"));
        } else if (is_float(a.elem)) {
            a.floats.reserve(size_t(n));
            for (uint64_t i = 0; i < n; ++i) a.floats.push_back(read_float_scalar(c, a.elem, what));
        } else {
            a.ints.reserve(size_t(n));
            for (uint64_t i = 0; i < n; ++i) a.ints.push_back(read_int_scalar(c, a.elem, what));
        }
        v.data = std::move(a);
    } else {
        v.data = read_int_scalar(c, type, what);
    }
    return v;
}

bool is_unsigned(ValueType t) {
    return t == ValueType::U8 || t == ValueType::U16 || t == ValueType::U32 || t == ValueType::U64;
}

}  // namespace

int64_t TensorInfo::nelements() const {
    int64_t n = 1;
    for (int64_t d : ne) n *= d;
    return n;
}

std::unique_ptr<File> File::open(const std::string& path, MappedFile::Mode mode, const MappedFile::Progress& progress,
                                 TypeIds ids) {
    std::unique_ptr<File> f(new File());
    f->path_ = path;
    f->type_ids_ = ids;
    f->map_ = MappedFile(path, mode, progress);
    f->parse(0);
    return f;
}

std::unique_ptr<File> File::open_header(const std::string& path, uint64_t full_size) {
    std::unique_ptr<File> f(new File());
    f->path_ = path;
    f->map_ = MappedFile(path, MappedFile::Mode::Map, {});
    f->parse(full_size);
    return f;
}

// full_size: 0 for a whole file, else the size of the file whose header this is.
void File::parse(uint64_t full_size) {
    Cursor c(path_, map_.data(), map_.size());
    c.need(4, "magic");
    magic_.assign(reinterpret_cast<const char*>(map_.data()), 4);
    c.read<uint32_t>("magic");
    if (magic_ != "GGUF" && magic_ != "PWRI") {
        std::string shown;
        for (char ch : magic_) shown += (ch >= 32 && ch < 127) ? ch : '?';
        fail(path_ + ": not a GGUF file (magic '" + shown + "', expected 'GGUF' or 'PWRI')");
    }
    version_ = c.read<uint32_t>("version");
    if (version_ != 2 && version_ != 3)
        fail(path_ + ": unsupported GGUF version " + std::to_string(version_) + " (supported: 2, 3)");
    uint64_t n_tensors = c.read<uint64_t>("tensor count");
    uint64_t n_kv = c.read<uint64_t>("metadata count");
    // A key/value pair takes at least 12 bytes and a tensor info at least 24.
    if (n_kv > c.remaining() / 12)
        fail(path_ + ": metadata count " + std::to_string(n_kv) + " exceeds what the file can hold");
    if (n_tensors > c.remaining() / 24)
        fail(path_ + ": tensor count " + std::to_string(n_tensors) + " exceeds what the file can hold");

    kv_.reserve(size_t(n_kv));
    for (uint64_t i = 0; i < n_kv; ++i) {
        std::string key = c.read_string("metadata key #" + std::to_string(i));
        uint32_t raw_type = c.read<uint32_t>("type of metadata key '" + key + "'");
        Value v = read_value(c, path_, key, raw_type);
        if (kv_index_.count(key)) fail(path_ + ": duplicate metadata key '" + key + "'");
        kv_index_[key] = kv_.size();
        kv_.emplace_back(std::move(key), std::move(v));
    }

    if (auto a = get_uint("general.alignment")) {
        if (*a == 0 || *a > (1u << 20) || (*a & (*a - 1)) != 0)
            fail(path_ + ": general.alignment " + std::to_string(*a) + " is not a power of two up to 1 MiB");
        alignment_ = uint32_t(*a);
    }

    tensors_.reserve(size_t(n_tensors));
    for (uint64_t i = 0; i < n_tensors; ++i) {
        TensorInfo t;
        t.name = c.read_string("tensor #" + std::to_string(i) + " name");
        const std::string what = "tensor '" + t.name + "'";
        uint32_t n_dims = c.read<uint32_t>(what + " dimension count");
        if (n_dims == 0 || n_dims > kMaxDims)
            fail(path_ + ": " + what + " has " + std::to_string(n_dims) + " dimensions (1 to 4 allowed)");
        uint64_t count = 1;
        for (uint32_t d = 0; d < n_dims; ++d) {
            uint64_t ne = c.read<uint64_t>(what + " dimension");
            // A dimension may be 0: PowerInfer's GPU index stores empty hot-neuron lists.
            if (ne > (uint64_t(1) << 40) || (ne != 0 && count > (uint64_t(1) << 50) / ne))
                fail(path_ + ": " + what + " has invalid dimension " + std::to_string(d) + " = " +
                     std::to_string(ne));
            count *= ne;
            t.ne.push_back(int64_t(ne));
        }
        t.type = c.read<uint32_t>(what + " type");
        const GgmlTypeInfo* info = ggml_type_info(t.type, type_ids_);
        if (!info) fail(path_ + ": " + what + " has unknown type id " + std::to_string(t.type));
        if (t.ne[0] % info->block != 0)
            fail(path_ + ": " + what + " row length " + std::to_string(t.ne[0]) +
                 " is not a multiple of the " + info->name + " block size " + std::to_string(info->block));
        t.nbytes = size_t(count / info->block * info->block_bytes);
        t.offset = c.read<uint64_t>(what + " offset");
        if (t.offset % alignment_ != 0)
            fail(path_ + ": " + what + " offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                 std::to_string(alignment_));
        if (tensor_index_.count(t.name)) fail(path_ + ": duplicate tensor '" + t.name + "'");
        tensor_index_[t.name] = tensors_.size();
        tensors_.push_back(std::move(t));
    }

    data_offset_ = (uint64_t(c.pos()) + alignment_ - 1) / alignment_ * alignment_;
    const uint64_t file_size = full_size ? full_size : map_.size();
    if (data_offset_ > file_size && !tensors_.empty())
        fail(path_ + ": data section starts at " + std::to_string(data_offset_) + " past the end of the file (" +
             std::to_string(file_size) + " bytes)");
    for (auto& t : tensors_) {
        uint64_t begin = data_offset_ + t.offset;
        if (t.offset > file_size || begin > file_size || t.nbytes > file_size - begin)
            fail(path_ + ": tensor '" + t.name + "' data [" + std::to_string(begin) + ", " +
                 std::to_string(begin + t.nbytes) + ") lies past the end of the file (" + std::to_string(file_size) +
                 " bytes); the file is truncated or corrupt");
        t.data = full_size ? nullptr : map_.data() + begin;
    }
}

const Value* File::find(const std::string& key) const {
    auto it = kv_index_.find(key);
    return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

std::optional<uint64_t> File::get_uint(const std::string& key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    if (!std::holds_alternative<int64_t>(v->data) || v->type == ValueType::Bool)
        fail(path_ + ": metadata key '" + key + "' has type " + value_type_name(v->type) + ", expected an integer");
    int64_t raw = std::get<int64_t>(v->data);
    if (!is_unsigned(v->type) && raw < 0)
        fail(path_ + ": metadata key '" + key + "' = " + std::to_string(raw) + " must not be negative");
    return uint64_t(raw);
}

std::optional<int64_t> File::get_int(const std::string& key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    if (!std::holds_alternative<int64_t>(v->data) || v->type == ValueType::Bool)
        fail(path_ + ": metadata key '" + key + "' has type " + value_type_name(v->type) + ", expected an integer");
    int64_t raw = std::get<int64_t>(v->data);
    if (v->type == ValueType::U64 && raw < 0)
        fail(path_ + ": metadata key '" + key + "' is too large");
    return raw;
}

std::optional<double> File::get_float(const std::string& key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    if (std::holds_alternative<double>(v->data)) return std::get<double>(v->data);
    if (std::holds_alternative<int64_t>(v->data) && v->type != ValueType::Bool)
        return double(std::get<int64_t>(v->data));
    fail(path_ + ": metadata key '" + key + "' has type " + value_type_name(v->type) + ", expected a number");
}

std::optional<bool> File::get_bool(const std::string& key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    if (!std::holds_alternative<bool>(v->data))
        fail(path_ + ": metadata key '" + key + "' has type " + value_type_name(v->type) + ", expected bool");
    return std::get<bool>(v->data);
}

std::optional<std::string> File::get_string(const std::string& key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    if (!std::holds_alternative<std::string>(v->data))
        fail(path_ + ": metadata key '" + key + "' has type " + value_type_name(v->type) + ", expected string");
    return std::get<std::string>(v->data);
}

const Array* File::get_array(const std::string& key) const {
    const Value* v = find(key);
    if (!v) return nullptr;
    if (!std::holds_alternative<Array>(v->data))
        fail(path_ + ": metadata key '" + key + "' has type " + value_type_name(v->type) + ", expected array");
    return &std::get<Array>(v->data);
}

const TensorInfo* File::find_tensor(const std::string& name) const {
    auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace ember::gguf
