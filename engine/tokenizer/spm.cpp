#include "tokenizer/spm.h"

#include <algorithm>

#include "tokenizer/utf8.h"

namespace ember::tokenizer {

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

}  // namespace

struct SpmEncoder::Symbol {
    uint32_t start;  // byte offset in the normalized text
    uint32_t len;    // 0 once merged into the symbol on its left
    int32_t prev;
    int32_t next;
};

struct SpmEncoder::Bigram {
    float score;
    int32_t left;
    int32_t right;
    uint32_t len;  // length of the merged piece; a mismatch means a side has changed since
};

SpmEncoder::SpmEncoder(const Vocab& vocab) : vocab_(vocab) {
    byte_ids_.fill(-1);
    ids_.reserve(vocab.tokens.size());
    for (size_t i = 0; i < vocab.tokens.size(); ++i) {
        const std::string& piece = vocab.tokens[i];
        ids_.emplace(piece, int32_t(i));  // a duplicate piece keeps its first id
        if (vocab.types[i] == TokenType::Byte && piece.size() == 6) {
            const int hi = hex_digit(piece[3]);
            const int lo = hex_digit(piece[4]);
            if (hi >= 0 && lo >= 0 && byte_ids_[size_t(hi * 16 + lo)] < 0) {
                byte_ids_[size_t(hi * 16 + lo)] = int32_t(i);
                byte_fallback_ = true;
            }
        }
    }
}

int32_t SpmEncoder::find(std::string_view piece) const {
    const auto it = ids_.find(piece);
    return it == ids_.end() ? -1 : it->second;
}

// Control, unknown and byte pieces are never produced by merging, so "<s>" in the text stays
// plain characters.
bool SpmEncoder::mergeable(int32_t id) const {
    const TokenType t = vocab_.types[size_t(id)];
    return t == TokenType::Normal || t == TokenType::UserDefined || t == TokenType::Unused ||
           t == TokenType::Undefined;
}

void SpmEncoder::encode(std::string_view text, std::vector<int32_t>& out) const {
    if (text.empty()) return;

    std::string norm;
    norm.reserve(text.size() + 2 * (1 + size_t(std::count(text.begin(), text.end(), ' '))));
    if (vocab_.add_space_prefix) norm += kSpaceMark;
    for (char c : text) {
        if (c == ' ') norm += kSpaceMark;
        else norm += c;
    }

    std::vector<Symbol> symbols;
    symbols.reserve(norm.size());
    for (size_t pos = 0; pos < norm.size();) {
        const uint32_t len = utf8_next(norm, pos).len;
        const auto index = int32_t(symbols.size());
        symbols.push_back({uint32_t(pos), len, index - 1, -1});
        if (index > 0) symbols[size_t(index) - 1].next = index;
        pos += len;
    }

    // Max-heap on score; among equal scores the leftmost pair wins.
    std::vector<Bigram> agenda;
    agenda.reserve(symbols.size());
    const auto lower = [](const Bigram& a, const Bigram& b) {
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    };
    // Merged UNUSED pieces are split back into their halves on output, as the library does.
    std::vector<std::pair<std::string_view, size_t>> unused_splits;

    const auto try_add = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const Symbol& l = symbols[size_t(left)];
        const std::string_view piece(norm.data() + l.start, l.len + symbols[size_t(right)].len);
        const int32_t id = find(piece);
        if (id < 0 || !mergeable(id)) return;
        agenda.push_back({vocab_.scores[size_t(id)], left, right, uint32_t(piece.size())});
        std::push_heap(agenda.begin(), agenda.end(), lower);
        if (vocab_.types[size_t(id)] == TokenType::Unused) unused_splits.emplace_back(piece, l.len);
    };

    for (size_t i = 1; i < symbols.size(); ++i) try_add(int32_t(i - 1), int32_t(i));

    while (!agenda.empty()) {
        std::pop_heap(agenda.begin(), agenda.end(), lower);
        const Bigram b = agenda.back();
        agenda.pop_back();
        Symbol& l = symbols[size_t(b.left)];
        Symbol& r = symbols[size_t(b.right)];
        if (l.len == 0 || r.len == 0 || l.len + r.len != b.len) continue;
        l.len += r.len;
        l.next = r.next;
        if (r.next >= 0) symbols[size_t(r.next)].prev = b.left;
        r.len = 0;
        try_add(l.prev, b.left);
        try_add(b.left, l.next);
    }

    for (int32_t i = 0; i >= 0; i = symbols[size_t(i)].next) {
        const Symbol& s = symbols[size_t(i)];
        emit(std::string_view(norm.data() + s.start, s.len), unused_splits, out);
    }
}

void SpmEncoder::emit(std::string_view piece,
                      const std::vector<std::pair<std::string_view, size_t>>& unused_splits,
                      std::vector<int32_t>& out) const {
    const int32_t id = find(piece);
    if (id >= 0 && vocab_.types[size_t(id)] == TokenType::Unused) {
        for (const auto& [merged, left_len] : unused_splits) {
            if (merged == piece) {
                emit(piece.substr(0, left_len), unused_splits, out);
                emit(piece.substr(left_len), unused_splits, out);
                return;
            }
        }
    }
    if (id >= 0) {
        out.push_back(id);
        return;
    }
    if (byte_fallback_) {
        for (char c : piece) {
            const int32_t byte_id = byte_ids_[static_cast<uint8_t>(c)];
            if (byte_id >= 0) out.push_back(byte_id);
            else if (vocab_.unk_id >= 0) out.push_back(vocab_.unk_id);
        }
    } else if (vocab_.unk_id >= 0) {
        out.push_back(vocab_.unk_id);
    }
}

}  // namespace ember::tokenizer
