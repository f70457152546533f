#pragma once
// Whole-file byte I/O for tests that corrupt fixtures on purpose.

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace test_files {

inline std::vector<uint8_t> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

inline void write_all(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

}  // namespace test_files
