#include "tokenizer/gpt2_bytes.h"

#include <array>

namespace ember::tokenizer {

namespace {

constexpr bool stands_for_itself(uint32_t b) {
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

constexpr std::array<uint16_t, 256> make_byte_to_unicode() {
    std::array<uint16_t, 256> map{};
    uint16_t next = 0x100;
    for (uint32_t b = 0; b < 256; ++b) map[b] = stands_for_itself(b) ? uint16_t(b) : next++;
    return map;
}

constexpr std::array<uint16_t, 256> kByteToUnicode = make_byte_to_unicode();

// The alphabet ends at U+0143 (0x100 + 68 - 1).
constexpr uint32_t kAlphabetEnd = 0x144;

constexpr std::array<int16_t, kAlphabetEnd> make_unicode_to_byte() {
    std::array<int16_t, kAlphabetEnd> map{};
    for (auto& v : map) v = -1;
    for (uint32_t b = 0; b < 256; ++b) map[kByteToUnicode[b]] = int16_t(b);
    return map;
}

constexpr std::array<int16_t, kAlphabetEnd> kUnicodeToByte = make_unicode_to_byte();

static_assert(kByteToUnicode[' '] == 0x120 && kByteToUnicode['\n'] == 0x10A);

}  // namespace

uint32_t byte_to_unicode(uint8_t byte) { return kByteToUnicode[byte]; }

int unicode_to_byte(uint32_t cp) { return cp < kAlphabetEnd ? kUnicodeToByte[cp] : -1; }

}  // namespace ember::tokenizer
