#include "sparse/zip_reader.h"

#include <array>
#include <cstdio>
#include <unordered_set>

#include "common/error.h"

namespace ember::sparse {
namespace {

// Record signatures and fixed sizes from PKWARE's APPNOTE.
constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kZip64EocdSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr size_t kLocalSize = 30;
constexpr size_t kCentralSize = 46;
constexpr size_t kEocdSize = 22;
constexpr size_t kZip64EocdSize = 56;
constexpr size_t kZip64LocatorSize = 20;
constexpr size_t kMaxComment = 0xFFFF;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint32_t kSat32 = 0xFFFFFFFFu;
constexpr uint16_t kSat16 = 0xFFFFu;

uint16_t rd16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
uint32_t rd32(const uint8_t* p) { return uint32_t(rd16(p)) | (uint32_t(rd16(p + 2)) << 16); }
uint64_t rd64(const uint8_t* p) { return uint64_t(rd32(p)) | (uint64_t(rd32(p + 4)) << 32); }

std::string hex32(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

std::string num(uint64_t v) { return std::to_string(v); }

constexpr std::array<uint32_t, 256> make_crc_table() {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        t[i] = c;
    }
    return t;
}
constexpr std::array<uint32_t, 256> kCrcTable = make_crc_table();

// Where the central directory lies, from the end-of-central-directory record(s).
struct Directory {
    uint64_t entries = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
    uint64_t limit = 0;  // the directory must end at or before this offset
};

}  // namespace

uint32_t crc32(std::span<const uint8_t> bytes) {
    uint32_t c = 0xFFFFFFFFu;
    for (uint8_t b : bytes) c = kCrcTable[(c ^ b) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

StoredZip::StoredZip(std::span<const uint8_t> bytes, std::string path) : bytes_(bytes), path_(std::move(path)) {
    parse();
}

const ZipMember* StoredZip::find(std::string_view name) const {
    for (const ZipMember& m : members_)
        if (m.name == name) return &m;
    return nullptr;
}

std::span<const uint8_t> StoredZip::read(const ZipMember& m) const {
    // parse() checked data_offset + size against the archive.
    const auto payload = bytes_.subspan(size_t(m.data_offset), size_t(m.size));
    const uint32_t actual = crc32(payload);
    if (actual != m.crc32)
        fail(path_ + ": member '" + m.name + "': CRC-32 mismatch: central directory says " + hex32(m.crc32) +
             ", the " + num(m.size) + " bytes at offset " + num(m.data_offset) + " give " + hex32(actual));
    return payload;
}

void StoredZip::parse() {
    const uint8_t* p = bytes_.data();
    const uint64_t size = bytes_.size();
    if (size < kEocdSize)
        fail(path_ + ": " + num(size) + " bytes is too small for a zip archive (a torch.save file is one)");

    // The end-of-central-directory record is the last 22 bytes unless an archive comment
    // follows it; take the last signature whose comment length reaches exactly the end.
    const uint64_t last = size - kEocdSize;
    const uint64_t lowest = last > kMaxComment ? last - kMaxComment : 0;
    uint64_t eocd = size;
    for (uint64_t pos = last + 1; pos-- > lowest;) {
        if (rd32(p + pos) == kEocdSig && pos + kEocdSize + rd16(p + pos + 20) == size) {
            eocd = pos;
            break;
        }
    }
    if (eocd == size)
        fail(path_ + ": no zip end-of-central-directory record in the last " + num(size - lowest) +
             " bytes (not a torch.save zip archive, or truncated)");

    const uint8_t* e = p + eocd;
    uint32_t disk = rd16(e + 4), cd_disk = rd16(e + 6);
    Directory dir{rd16(e + 10), rd32(e + 16), rd32(e + 12), eocd};
    uint64_t entries_here = rd16(e + 8);
    const bool saturated = disk == kSat16 || cd_disk == kSat16 || entries_here == kSat16 ||
                           dir.entries == kSat16 || dir.size == kSat32 || dir.offset == kSat32;
    if (saturated) {
        // Zip64: the locator sits right before the plain record and points at the zip64 record.
        if (eocd < kZip64LocatorSize || rd32(p + eocd - kZip64LocatorSize) != kZip64LocatorSig)
            fail(path_ + ": end-of-central-directory record at offset " + num(eocd) +
                 " has saturated fields but no zip64 locator precedes it");
        const uint64_t loc = eocd - kZip64LocatorSize;
        const uint64_t z = rd64(p + loc + 8);
        const uint32_t n_disks = rd32(p + loc + 16);
        if (n_disks > 1) fail(path_ + ": zip64 locator says " + num(n_disks) + " disks; multi-disk archives are not supported");
        if (z > loc || kZip64EocdSize > loc - z)
            fail(path_ + ": zip64 end-of-central-directory offset " + num(z) + " (from the locator at offset " + num(loc) +
                 ") is outside the archive");
        const uint8_t* r = p + z;
        if (rd32(r) != kZip64EocdSig)
            fail(path_ + ": bad signature " + hex32(rd32(r)) + " for the zip64 end-of-central-directory record at offset " + num(z));
        disk = rd32(r + 16);
        cd_disk = rd32(r + 20);
        entries_here = rd64(r + 24);
        dir = Directory{rd64(r + 32), rd64(r + 48), rd64(r + 40), z};
    }
    if (disk != 0 || cd_disk != 0 || entries_here != dir.entries)
        fail(path_ + ": multi-disk zip archives are not supported (disk " + num(disk) + ", directory disk " + num(cd_disk) +
             ", " + num(entries_here) + " of " + num(dir.entries) + " entries here)");
    if (dir.entries > kMaxMembers)
        fail(path_ + ": central directory claims " + num(dir.entries) + " members; the limit is " + num(kMaxMembers));
    if (dir.offset > dir.limit || dir.size > dir.limit - dir.offset)
        fail(path_ + ": central directory (offset " + num(dir.offset) + ", " + num(dir.size) +
             " bytes) runs past the end-of-central-directory record at offset " + num(dir.limit) + " (file is " + num(size) +
             " bytes)");

    // Member payloads lie before the central directory.
    const uint64_t data_end = dir.offset;
    const uint64_t end = dir.offset + dir.size;
    uint64_t pos = dir.offset;
    std::unordered_set<std::string> seen;
    members_.reserve(size_t(dir.entries));
    for (uint64_t i = 0; i < dir.entries; ++i) {
        const std::string where = "central directory entry " + num(i) + " at offset " + num(pos);
        if (end - pos < kCentralSize) fail(path_ + ": " + where + ": truncated (the directory ends at offset " + num(end) + ")");
        const uint8_t* c = p + pos;
        if (rd32(c) != kCentralSig) fail(path_ + ": " + where + ": bad signature " + hex32(rd32(c)));
        const uint16_t flags = rd16(c + 8), method = rd16(c + 10);
        const uint32_t crc = rd32(c + 16);
        uint64_t csize = rd32(c + 20), usize = rd32(c + 24);
        const uint64_t name_len = rd16(c + 28), extra_len = rd16(c + 30), comment_len = rd16(c + 32);
        uint64_t disk_start = rd16(c + 34);
        uint64_t local = rd32(c + 42);
        const uint64_t record = kCentralSize + name_len + extra_len + comment_len;
        if (record > end - pos) fail(path_ + ": " + where + ": name, extra field and comment run past the directory's end");
        std::string name(reinterpret_cast<const char*>(c + kCentralSize), size_t(name_len));
        if (name.empty()) fail(path_ + ": " + where + ": empty member name");
        const std::string member = "member '" + name + "'";

        // Zip64 extra field: 8-byte values for exactly the saturated fields, in this order.
        const bool need_u = usize == kSat32, need_c = csize == kSat32, need_o = local == kSat32, need_d = disk_start == kSat16;
        if (need_u || need_c || need_o || need_d) {
            const uint8_t* x = c + kCentralSize + name_len;
            bool found = false;
            for (uint64_t q = 0; q + 4 <= extra_len && !found;) {
                const uint16_t id = rd16(x + q), len = rd16(x + q + 2);
                if (q + 4 + len > extra_len) fail(path_ + ": " + member + ": extra field " + hex32(id) + " overruns its record");
                if (id == kZip64ExtraId) {
                    const uint8_t* v = x + q + 4;
                    uint64_t left = len;
                    auto take = [&](uint64_t& field, uint64_t bytes, const char* what) {
                        if (left < bytes) fail(path_ + ": " + member + ": zip64 extra field lacks the " + what);
                        field = bytes == 8 ? rd64(v) : rd32(v);
                        v += bytes;
                        left -= bytes;
                    };
                    if (need_u) take(usize, 8, "uncompressed size");
                    if (need_c) take(csize, 8, "compressed size");
                    if (need_o) take(local, 8, "local header offset");
                    if (need_d) take(disk_start, 4, "disk number");
                    found = true;
                }
                q += 4 + uint64_t(len);
            }
            if (!found)
                fail(path_ + ": " + member + ": sizes or offset are saturated (0xffffffff) but there is no zip64 extra field");
        }

        if (flags & 1) fail(path_ + ": " + member + " is encrypted (flags " + hex32(flags) + ")");
        if (method != 0)
            fail(path_ + ": " + member + " uses compression method " + num(method) + (method == 8 ? " (deflate)" : "") +
                 "; torch.save writes stored (method 0) members only");
        if (csize != usize)
            fail(path_ + ": " + member + " is stored but its compressed size " + num(csize) + " differs from its size " + num(usize));
        if (disk_start != 0) fail(path_ + ": " + member + " starts on disk " + num(disk_start) + "; multi-disk archives are not supported");

        // Local header: its own name and extra lengths (torch pads there for alignment) place the payload.
        if (local > data_end || kLocalSize > data_end - local)
            fail(path_ + ": " + member + ": local header offset " + num(local) +
                 " is outside the member data (the central directory starts at offset " + num(data_end) + ")");
        const uint8_t* l = p + local;
        if (rd32(l) != kLocalSig)
            fail(path_ + ": " + member + ": bad local header signature " + hex32(rd32(l)) + " at offset " + num(local));
        const uint16_t local_method = rd16(l + 8);
        const uint64_t local_name_len = rd16(l + 26), local_extra_len = rd16(l + 28);
        if (local_method != method)
            fail(path_ + ": " + member + ": local header says compression method " + num(local_method) +
                 ", the central directory says " + num(method));
        if (kLocalSize + local_name_len + local_extra_len > data_end - local)
            fail(path_ + ": " + member + ": local header at offset " + num(local) + " runs into the central directory");
        if (std::string_view(reinterpret_cast<const char*>(l + kLocalSize), size_t(local_name_len)) != name)
            fail(path_ + ": " + member + ": local header at offset " + num(local) + " names a different member");
        const uint64_t data = local + kLocalSize + local_name_len + local_extra_len;
        if (usize > data_end - data)
            fail(path_ + ": " + member + ": " + num(usize) + " bytes at offset " + num(data) +
                 " run past the member data (the central directory starts at offset " + num(data_end) + ")");
        if (!seen.insert(name).second) fail(path_ + ": " + member + " appears twice in the central directory");
        members_.push_back(ZipMember{std::move(name), data, usize, crc});
        pos += record;
    }
    if (pos != end)
        fail(path_ + ": central directory is " + num(dir.size) + " bytes but its " + num(dir.entries) + " entries use " +
             num(pos - dir.offset));
}

}  // namespace ember::sparse
