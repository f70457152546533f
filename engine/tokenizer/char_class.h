#pragma once
// Character classes for the pre-tokenizers' patterns (docs/FORMATS.md §2.3):
//   \p{L} \p{N} \p{M} \p{P} \p{S}  general categories L*, N*, M*, P*, S*
//   \s  the Unicode White_Space property (the 25 code points listed in char_class.cpp); a
//       white-space character is Space whatever its category, as in llama.cpp.
// Limits: the table is generated from Unicode 14.0 (char_class_table.cpp); characters assigned
// later are Other. Invalid UTF-8 bytes are classified by the caller.

#include <cstddef>
#include <cstdint>

namespace ember::tokenizer {

enum class Category : uint8_t { Other, Letter, Number, Space, Mark, Punctuation, Symbol };

Category char_category(uint32_t cp);

// The three classes of GPT-2's pattern and its descendants: marks, punctuation and symbols are
// all Other there ([^\s\p{L}\p{N}]), so a decomposed "e\u0301" splits after the "e".
enum class CharClass : uint8_t { Other, Letter, Number, Space };

CharClass char_class(uint32_t cp);

namespace detail {
struct CategoryRange {
    uint32_t first;
    uint32_t last;
    Category category;
};
extern const CategoryRange kCategoryRanges[];
extern const size_t kCategoryRangeCount;
}  // namespace detail

}  // namespace ember::tokenizer
