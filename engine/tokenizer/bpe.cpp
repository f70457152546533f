#include "tokenizer/bpe.h"

#include <algorithm>
#include <string>

#include "tokenizer/gpt2_bytes.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/utf8.h"

namespace ember::tokenizer {

struct BpeEncoder::Symbol {
    int32_t id;  // -1: a byte with no token and no unk to stand for it
    int32_t prev;
    int32_t next;
    bool alive;
};

struct BpeEncoder::Pair {
    int32_t rank;
    int32_t left;
    int32_t right;
    int32_t left_id;  // the ids when queued; a change on either side makes the entry stale
    int32_t right_id;
    int32_t result;
};

BpeEncoder::BpeEncoder(const Vocab& vocab) : unk_id_(vocab.unk_id), pre_(vocab.pre) {
    std::unordered_map<std::string_view, int32_t> ids;
    ids.reserve(vocab.tokens.size());
    for (size_t i = 0; i < vocab.tokens.size(); ++i) ids.emplace(vocab.tokens[i], int32_t(i));
    const auto find = [&](std::string_view s) {
        const auto it = ids.find(s);
        return it == ids.end() ? -1 : it->second;
    };

    std::string piece;
    for (uint32_t b = 0; b < 256; ++b) {
        piece.clear();
        utf8_append(piece, byte_to_unicode(uint8_t(b)));
        byte_ids_[b] = find(piece);
    }

    merges_.reserve(vocab.merges.size());
    std::string joined;
    for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
        const std::string_view m = vocab.merges[rank];
        const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string_view::npos;
        if (space == std::string_view::npos) continue;
        const std::string_view left = m.substr(0, space);
        const std::string_view right = m.substr(space + 1);
        joined.assign(left);
        joined.append(right);
        const int32_t l = find(left);
        const int32_t r = find(right);
        const int32_t result = find(joined);
        // A rule whose halves or result are not tokens can never fire in a consistent vocab;
        // HF's loader rejects such files, the reference ignores the rule.
        if (l < 0 || r < 0 || result < 0) continue;
        merges_.emplace(key(l, r), Merge{int32_t(rank), result});  // a repeated rule keeps its first rank
    }
    // Llama 3's and Tekken's tokenizers take a chunk that is itself a token as that token, merges
    // or not (Hugging Face's ignore_merges; llama.cpp does the same for these pre-tokenizers).
    if (pre_ == PreTokenizer::Llama3 || pre_ == PreTokenizer::Tekken) whole_chunks_ = std::move(ids);
}

void BpeEncoder::encode(std::string_view text, std::vector<int32_t>& out) const {
    std::vector<Symbol> symbols;
    std::vector<Pair> queue;
    // Min-heap on rank; among equal ranks the leftmost pair wins.
    const auto later = [](const Pair& a, const Pair& b) {
        return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
    };
    const auto try_add = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const int32_t l = symbols[size_t(left)].id;
        const int32_t r = symbols[size_t(right)].id;
        if (l < 0 || r < 0) return;
        const auto it = merges_.find(key(l, r));
        if (it == merges_.end()) return;
        queue.push_back({it->second.rank, left, right, l, r, it->second.result});
        std::push_heap(queue.begin(), queue.end(), later);
    };

    std::string alphabet;
    std::vector<size_t> ends;
    pre_tokenize(pre_, text, ends);
    for (size_t pos = 0; const size_t end : ends) {
        if (!whole_chunks_.empty()) {
            alphabet.clear();
            for (size_t i = pos; i < end; ++i) utf8_append(alphabet, byte_to_unicode(uint8_t(text[i])));
            if (const auto it = whole_chunks_.find(alphabet); it != whole_chunks_.end()) {
                out.push_back(it->second);
                pos = end;
                continue;
            }
        }
        symbols.clear();
        queue.clear();
        for (size_t i = pos; i < end; ++i) {
            const int32_t byte_id = byte_ids_[static_cast<uint8_t>(text[i])];
            const auto index = int32_t(symbols.size());
            symbols.push_back({byte_id >= 0 ? byte_id : unk_id_, index - 1, -1, true});
            if (index > 0) symbols[size_t(index) - 1].next = index;
        }
        for (size_t i = 1; i < symbols.size(); ++i) try_add(int32_t(i - 1), int32_t(i));

        while (!queue.empty()) {
            std::pop_heap(queue.begin(), queue.end(), later);
            const Pair p = queue.back();
            queue.pop_back();
            Symbol& l = symbols[size_t(p.left)];
            Symbol& r = symbols[size_t(p.right)];
            if (!l.alive || !r.alive || l.next != p.right || l.id != p.left_id || r.id != p.right_id) continue;
            l.id = p.result;
            l.next = r.next;
            if (r.next >= 0) symbols[size_t(r.next)].prev = p.left;
            r.alive = false;
            try_add(l.prev, p.left);
            try_add(p.left, l.next);
        }

        for (int32_t i = 0; i >= 0; i = symbols[size_t(i)].next)
            if (symbols[size_t(i)].id >= 0) out.push_back(symbols[size_t(i)].id);
        pos = end;
    }
}

}  // namespace ember::tokenizer
