#include "sparse/activation_file.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <span>

#include "common/error.h"
#include "common/utf8_path.h"
#include "gguf/mapped_file.h"
#include "sparse/pickle_vm.h"
#include "sparse/zip_reader.h"

namespace ember::sparse {
namespace {

// torch.save writes format version 3; newer serializers are not expected to change what a
// plain tensor looks like, but a number far past it means a format this reader does not know.
constexpr int64_t kMaxFormatVersion = 10;

std::string num(uint64_t v) { return std::to_string(v); }

std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

std::string shown(std::span<const uint8_t> bytes) {
    std::string out;
    for (size_t k = 0; k < bytes.size() && k < 32; ++k) out += (bytes[k] >= 0x20 && bytes[k] < 0x7f) ? char(bytes[k]) : '?';
    if (bytes.size() > 32) out += "...";
    return out;
}

std::string shape_text(const std::vector<int64_t>& v) {
    std::string s = "(";
    for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
    return s + (v.size() == 1 ? ",)" : ")");
}

// `<prefix>version` (or `<prefix>.data/version`): a decimal number and an optional newline.
void check_version(const StoredZip& zip, const std::string& prefix) {
    const ZipMember* m = zip.find(prefix + "version");
    if (!m) m = zip.find(prefix + ".data/version");
    if (!m) return;
    const auto text = zip.read(*m);
    int64_t v = 0;
    size_t k = 0;
    for (; k < text.size() && k < 4 && text[k] >= '0' && text[k] <= '9'; ++k) v = v * 10 + (text[k] - '0');
    const bool tail_ok = k == text.size() || (k + 1 == text.size() && text[k] == '\n');
    if (k == 0 || !tail_ok || v < 1 || v > kMaxFormatVersion)
        fail(zip.path() + ": member '" + m->name + "' holds '" + shown(text) + "'; expected a format version from 1 to " +
             num(kMaxFormatVersion) + " (torch.save writes 3)");
}

// `<prefix>byteorder`: "little" or "big"; absent means little. True for big.
bool big_endian(const StoredZip& zip, const std::string& prefix) {
    const ZipMember* m = zip.find(prefix + "byteorder");
    if (!m) return false;
    auto text = zip.read(*m);
    std::string_view s(reinterpret_cast<const char*>(text.data()), text.size());
    if (s.ends_with('\n')) s.remove_suffix(1);
    if (s == "little") return false;
    if (s == "big") return true;
    fail(zip.path() + ": member '" + m->name + "' holds '" + shown(text) + "'; expected 'little' or 'big'");
}

// A storage key names a member; torch uses decimal numbers.
void check_key(const std::string& path, const std::string& key) {
    bool ok = !key.empty() && key.size() <= 64;
    for (char ch : key) ok = ok && ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_');
    if (!ok) fail(path + ": storage key '" + shown({reinterpret_cast<const uint8_t*>(key.data()), key.size()}) +
                  "' is not a short alphanumeric name");
}

double half_to_double(uint16_t h) {
    const int exp = (h >> 10) & 0x1f;
    const int mant = h & 0x3ff;
    double v;
    if (exp == 0) v = std::ldexp(double(mant), -24);  // zero, subnormal
    else if (exp == 31) v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else v = std::ldexp(double(mant + 1024), exp - 25);
    return (h & 0x8000) ? -v : v;
}

// Element `e` (esize bytes, in the file's byte order) as raw bits in host order.
uint64_t load_bits(const uint8_t* e, size_t esize, bool big) {
    uint64_t v = 0;
    for (size_t k = 0; k < esize; ++k) v |= uint64_t(e[big ? esize - 1 - k : k]) << (8 * k);
    return v;
}

template <class S, class U>
double as_signed(uint64_t bits) {
    return double(std::bit_cast<S>(U(bits)));
}

}  // namespace

std::vector<double> read_torch_vector(const std::string& path) {
    const gguf::MappedFile file(path);
    return parse_torch_vector({file.data(), file.size()}, path);
}

std::vector<double> parse_torch_vector(std::span<const uint8_t> bytes, const std::string& path) {
    const StoredZip zip(bytes, path);

    // The pickle is `<prefix>data.pkl`; torch derives the prefix from the file name (or
    // writes "archive/"), so it is taken from the member, never assumed.
    const ZipMember* pkl = nullptr;
    for (const ZipMember& m : zip.members()) {
        if (m.name == "data.pkl" || m.name.ends_with("/data.pkl")) {
            if (pkl) fail(path + ": two pickles, '" + pkl->name + "' and '" + m.name + "'; a torch.save file has one");
            pkl = &m;
        }
    }
    if (!pkl) fail(path + ": no member named '<prefix>/data.pkl' (not a torch.save file)");
    const std::string prefix = pkl->name.substr(0, pkl->name.size() - std::strlen("data.pkl"));
    check_version(zip, prefix);
    const bool big = big_endian(zip, prefix);
    const TensorRecord t = run_tensor_pickle(zip.read(*pkl), path + ": member '" + pkl->name + "'");

    // The tensor: 1-D, contiguous, inside its storage.
    const char* type = storage_type_name(t.storage_type);
    if (t.shape.size() != 1)
        fail(path + ": holds a " + num(t.shape.size()) + "-D tensor of shape " + shape_text(t.shape) + "; expected a 1-D vector");
    const int64_t n = t.shape[0];
    if (n > 1 && t.stride[0] != 1)
        fail(path + ": the vector is not contiguous (stride " + std::to_string(t.stride[0]) + ", expected 1)");
    if (n > kMaxTorchVectorElements)
        fail(path + ": the vector claims " + std::to_string(n) + " elements; the limit is " + std::to_string(kMaxTorchVectorElements));
    if (t.storage_offset > t.storage_numel || n > t.storage_numel - t.storage_offset)
        fail(path + ": storage offset " + std::to_string(t.storage_offset) + " + " + std::to_string(n) +
             " elements runs past the " + std::to_string(t.storage_numel) + " elements of " + type + " '" + t.storage_key + "'");

    // The storage member holds exactly storage_numel elements.
    check_key(path, t.storage_key);
    const std::string member_name = prefix + "data/" + t.storage_key;
    const ZipMember* member = zip.find(member_name);
    if (!member) fail(path + ": no member '" + member_name + "' for " + type + " '" + t.storage_key + "'");
    const size_t esize = storage_element_size(t.storage_type);
    const uint64_t numel = uint64_t(t.storage_numel);
    if (numel > member->size / esize || numel * esize != member->size)
        fail(path + ": member '" + member_name + "' holds " + num(member->size) + " bytes; " + type + " of " + num(numel) +
             " elements needs " + num(numel) + " x " + num(esize) + " bytes");
    const auto payload = zip.read(*member);

    std::vector<double> out(static_cast<size_t>(n));
    const uint8_t* base = payload.data() + size_t(t.storage_offset) * esize;
    for (size_t i = 0; i < out.size(); ++i) {
        const uint64_t b = load_bits(base + i * esize, esize, big);
        double v = 0;
        switch (t.storage_type) {
        case StorageType::Float: v = std::bit_cast<float>(uint32_t(b)); break;
        case StorageType::Double: v = std::bit_cast<double>(b); break;
        case StorageType::Half: v = half_to_double(uint16_t(b)); break;
        case StorageType::BFloat16: v = std::bit_cast<float>(uint32_t(b) << 16); break;
        case StorageType::Long: v = as_signed<int64_t, uint64_t>(b); break;
        case StorageType::Int: v = as_signed<int32_t, uint32_t>(b); break;
        case StorageType::Short: v = as_signed<int16_t, uint16_t>(b); break;
        case StorageType::Char: v = as_signed<int8_t, uint8_t>(b); break;
        case StorageType::Byte: v = double(b); break;
        case StorageType::Bool:
            if (b > 1) fail(path + ": element " + num(i) + " of the BoolStorage vector is byte " + num(b) + ", not 0 or 1");
            v = double(b);
            break;
        }
        out[i] = v;
    }
    return out;
}

std::vector<std::vector<double>> read_activation_dir(const std::string& dir, int32_t n_layer, int64_t n_ff) {
    namespace fs = std::filesystem;
    if (n_layer < 1 || n_layer > kMaxActivationLayers)
        fail(dir + ": n_layer " + std::to_string(n_layer) + " is out of range (1.." + std::to_string(kMaxActivationLayers) + ")");
    if (n_ff < 1 || n_ff > kMaxTorchVectorElements)
        fail(dir + ": n_ff " + std::to_string(n_ff) + " is out of range (1.." + std::to_string(kMaxTorchVectorElements) + ")");
    std::error_code ec;
    if (!fs::is_directory(utf8_path(dir), ec)) fail(dir + ": not a directory (expected the model's activation/ folder)");

    std::vector<std::vector<double>> layers;
    layers.reserve(size_t(n_layer));
    for (int32_t il = 0; il < n_layer; ++il) {
        // By index, never by listing: activation_10.pt is layer 10 (docs/FORMATS.md §6.1).
        const std::string path = utf8_string(utf8_path(dir) / ("activation_" + std::to_string(il) + ".pt"));
        if (!fs::is_regular_file(utf8_path(path), ec))
            fail(path + ": missing; no activation statistics for layer " + std::to_string(il) + " of " + std::to_string(n_layer));
        std::vector<double> v = read_torch_vector(path);
        if (int64_t(v.size()) != n_ff)
            fail(path + ": holds " + num(v.size()) + " values; layer " + std::to_string(il) + " needs n_ff = " + std::to_string(n_ff));
        for (size_t j = 0; j < v.size(); ++j)
            if (!std::isfinite(v[j]) || v[j] < 0)
                fail(path + ": value " + num(j) + " is " + fmt(v[j]) + "; activation statistics must be finite and non-negative");
        layers.push_back(std::move(v));
    }
    return layers;
}

}  // namespace ember::sparse
