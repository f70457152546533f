#include "ember/markup.h"

#include <array>

#include "tokenizer/utf8.h"

namespace ember {

std::string escape_markup(std::string_view text, const std::vector<std::string>& control_pieces) {
    std::array<std::vector<std::string_view>, 256> by_first_byte;
    for (const std::string& p : control_pieces)
        if (!p.empty()) by_first_byte[uint8_t(p[0])].push_back(p);
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const size_t len = tokenizer::utf8_next(text, i).len;
        out.append(text.substr(i, len));
        for (std::string_view p : by_first_byte[uint8_t(text[i])]) {
            if (p.size() > len && text.substr(i, p.size()) == p) {
                out.append(kMarkupEscape);
                break;
            }
        }
        i += len;
    }
    return out;
}

std::string unescape_markup(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t at = 0;;) {
        const size_t hit = text.find(kMarkupEscape, at);
        out.append(text.substr(at, hit - at));
        if (hit == std::string_view::npos) return out;
        at = hit + kMarkupEscape.size();
    }
}

}  // namespace ember
