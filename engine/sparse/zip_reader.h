#pragma once
// The directory of a zip archive held in memory whose members are all STORED, as torch.save
// writes them (docs/FORMATS.md §6.2). Nothing is decompressed: a member is a span of the
// input bytes. Every offset and size read from the archive is checked against the bytes it
// points into before it is used; any problem throws EngineError naming the file, the record
// (member name, offset) and the bad value.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ember::sparse {

struct ZipMember {
    std::string name;
    uint64_t data_offset = 0;  // first payload byte in the archive
    uint64_t size = 0;         // payload bytes (stored: compressed size == uncompressed size)
    uint32_t crc32 = 0;        // from the central directory
};

class StoredZip {
public:
    static constexpr size_t kMaxMembers = 4096;

    // Parses the end-of-central-directory record (zip64 when the plain one is saturated), the
    // central directory and every member's local header. `bytes` must outlive this object;
    // `path` only names the archive in error messages.
    StoredZip(std::span<const uint8_t> bytes, std::string path);

    const std::string& path() const { return path_; }
    const std::vector<ZipMember>& members() const { return members_; }
    const ZipMember* find(std::string_view name) const;  // nullptr when absent

    // The member's payload, after checking its CRC-32 against the central directory.
    std::span<const uint8_t> read(const ZipMember& member) const;

private:
    void parse();

    std::span<const uint8_t> bytes_;
    std::string path_;
    std::vector<ZipMember> members_;
};

// CRC-32 (ISO-HDLC, as zip uses it) of `bytes`.
uint32_t crc32(std::span<const uint8_t> bytes);

}  // namespace ember::sparse
