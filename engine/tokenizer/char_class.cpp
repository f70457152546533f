#include "tokenizer/char_class.h"

#include <algorithm>

namespace ember::tokenizer {

namespace {

bool is_white_space(uint32_t cp) {
    if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
    switch (cp) {
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F:
    case 0x3000:
        return true;
    default:
        return cp >= 0x2000 && cp <= 0x200A;
    }
}

Category table_category(uint32_t cp) {
    const detail::CategoryRange* begin = detail::kCategoryRanges;
    const detail::CategoryRange* end = begin + detail::kCategoryRangeCount;
    const detail::CategoryRange* it = std::upper_bound(
        begin, end, cp, [](uint32_t c, const detail::CategoryRange& r) { return c < r.first; });
    if (it == begin) return Category::Other;
    --it;
    return cp <= it->last ? it->category : Category::Other;
}

}  // namespace

Category char_category(uint32_t cp) {
    if (is_white_space(cp)) return Category::Space;
    return table_category(cp);
}

CharClass char_class(uint32_t cp) {
    // ASCII dominates real text; keep it off the binary search.
    if (cp < 0x80) {
        if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') return CharClass::Letter;
        if (cp >= '0' && cp <= '9') return CharClass::Number;
        return is_white_space(cp) ? CharClass::Space : CharClass::Other;
    }
    switch (char_category(cp)) {
        case Category::Letter: return CharClass::Letter;
        case Category::Number: return CharClass::Number;
        case Category::Space: return CharClass::Space;
        default: return CharClass::Other;
    }
}

}  // namespace ember::tokenizer
