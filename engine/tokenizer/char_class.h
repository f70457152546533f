#pragma once
// Character classes for the GPT-2 pre-tokenizer regex:
//   \p{L}  general category L* (Lu Ll Lt Lm Lo)
//   \p{N}  general category N* (Nd Nl No)
//   \s     the Unicode White_Space property (the 25 code points listed in char_class.cpp)
// Limits: the L/N table is generated from Unicode 14.0 (char_class_table.cpp); characters
// assigned later are Other. Marks (M*) are Other, as in the regex, so a decomposed "e\u0301"
// splits after the "e". Invalid UTF-8 bytes are classified by the caller as Other.

#include <cstddef>
#include <cstdint>

namespace ember::tokenizer {

enum class CharClass : uint8_t { Other, Letter, Number, Space };

CharClass char_class(uint32_t cp);

namespace detail {
struct CharRange {
    uint32_t first;
    uint32_t last;
    CharClass cls;
};
extern const CharRange kCharRanges[];
extern const size_t kCharRangeCount;
}  // namespace detail

}  // namespace ember::tokenizer
