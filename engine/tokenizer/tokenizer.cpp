#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "common/error.h"
#include "ember/markup.h"
#include "gguf/gguf_reader.h"
#include "tokenizer/bpe.h"
#include "tokenizer/gpt2_bytes.h"
#include "tokenizer/known_pieces.h"
#include "tokenizer/spm.h"
#include "tokenizer/utf8.h"

namespace ember::tokenizer {

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581
// llama.cpp shows an unknown SPM token as U+2585; keeping it makes our output match the
// reference's on the same ids.
constexpr std::string_view kUnknownText = "\xE2\x96\x85";

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

void append_spm_text(std::string& out, std::string_view piece, TokenType type) {
    if (type == TokenType::Byte && piece.size() == 6 && hex_digit(piece[3]) >= 0 && hex_digit(piece[4]) >= 0) {
        out += static_cast<char>(hex_digit(piece[3]) * 16 + hex_digit(piece[4]));
        return;
    }
    if (type == TokenType::Unknown) {
        out += kUnknownText;
        return;
    }
    for (size_t pos = 0; pos < piece.size();) {
        if (piece.substr(pos, kSpaceMark.size()) == kSpaceMark) {
            out += ' ';
            pos += kSpaceMark.size();
        } else {
            out += piece[pos++];
        }
    }
}

void append_bpe_text(std::string& out, std::string_view piece, TokenType type) {
    // Added tokens are stored as plain text, not in the byte alphabet.
    if (type == TokenType::UserDefined) {
        out += piece;
        return;
    }
    for (size_t pos = 0; pos < piece.size();) {
        const Utf8Step step = utf8_next(piece, pos);
        const int byte = step.status == Utf8Step::Ok ? unicode_to_byte(step.cp) : -1;
        if (byte >= 0) out += static_cast<char>(byte);
        else out += piece.substr(pos, step.len);  // not in the alphabet: keep it as written
        pos += step.len;
    }
}

}  // namespace

struct Tokenizer::Impl {
    Vocab vocab;
    std::string text;                // every token's decoded bytes, back to back
    std::vector<uint32_t> text_end;  // [n_vocab] end of token i in `text`; it starts at text_end[i - 1]
    std::vector<int32_t> end_of_turn;
    // Control and user-defined tokens by the first byte of their piece, longest piece first:
    // where encode_markup looks for them.
    std::array<std::vector<int32_t>, 256> markers;
    std::optional<SpmEncoder> spm;   // both hold views into `vocab`, so Impl never moves
    std::optional<BpeEncoder> bpe;

    // The marker token whose piece starts `text` at `at`, the longest first; -1 if none.
    // User-defined pieces always count (llama.cpp and Hugging Face match them in any text),
    // control ones when `control`.
    int32_t marker_at(std::string_view text, size_t at, bool control) const {
        for (int32_t id : markers[uint8_t(text[at])]) {
            const std::string& piece = vocab.tokens[size_t(id)];
            if ((control || vocab.types[size_t(id)] == TokenType::UserDefined) && text.substr(at, piece.size()) == piece)
                return id;
        }
        return -1;
    }

    // Appends the ids of `text`: marker tokens where marker_at finds them, and the text between
    // them through `plain`.
    template <class Plain>
    void split_at_markers(std::string_view text, bool control, std::vector<int32_t>& ids, Plain plain) const {
        size_t plain_start = 0;
        for (size_t i = 0; i < text.size();) {
            const int32_t hit = marker_at(text, i, control);
            if (hit < 0) {
                ++i;
                continue;
            }
            if (i > plain_start) plain(text.substr(plain_start, i - plain_start));
            ids.push_back(hit);
            i += vocab.tokens[size_t(hit)].size();
            plain_start = i;
        }
        if (text.size() > plain_start) plain(text.substr(plain_start));
    }

    // Text with no marker in it, through the vocabulary's own encoder.
    void encode_run(std::string_view run, std::vector<int32_t>& ids) const {
        if (spm) spm->encode(run, ids);
        else bpe->encode(run, ids);
    }

    void check_id(int32_t id) const {
        if (id < 0 || size_t(id) >= vocab.tokens.size())
            fail("tokenizer: token id " + std::to_string(id) + " is outside the vocabulary of " +
                 std::to_string(vocab.tokens.size()) + " tokens");
    }
};

Tokenizer::Tokenizer(Vocab vocab) {
    check_vocab(vocab, "tokenizer");
    auto impl = std::make_unique<Impl>();
    impl->vocab = std::move(vocab);
    for (size_t i = 0; i < impl->vocab.tokens.size(); ++i)
        if (looks_like_control(impl->vocab.tokens[i])) impl->vocab.types[i] = TokenType::Control;
    const Vocab& v = impl->vocab;

    impl->text_end.reserve(v.tokens.size());
    for (size_t i = 0; i < v.tokens.size(); ++i) {
        const TokenType type = v.types[i];
        if (type != TokenType::Control) {
            if (v.kind == VocabKind::Spm) append_spm_text(impl->text, v.tokens[i], type);
            else append_bpe_text(impl->text, v.tokens[i], type);
        }
        if (impl->text.size() > UINT32_MAX) fail("tokenizer: the decoded vocabulary exceeds 4 GiB");
        impl->text_end.push_back(uint32_t(impl->text.size()));

        const bool marker = type == TokenType::Control || type == TokenType::UserDefined;
        if (ends_generation(v.tokens[i])) impl->end_of_turn.push_back(int32_t(i));
        if (marker && !v.tokens[i].empty()) impl->markers[uint8_t(v.tokens[i][0])].push_back(int32_t(i));
    }
    for (std::vector<int32_t>& m : impl->markers)
        std::stable_sort(m.begin(), m.end(), [&](int32_t a, int32_t b) { return v.tokens[size_t(a)].size() > v.tokens[size_t(b)].size(); });

    if (v.kind == VocabKind::Spm) impl->spm.emplace(v);
    else impl->bpe.emplace(v);
    impl_ = std::move(impl);
}

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const gguf::File& file) {
    return std::make_unique<Tokenizer>(vocab_from_gguf(file));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos) const {
    // Symbol offsets are 32-bit; SPM can triple the size of a text made of spaces.
    if (text.size() > INT32_MAX / 3)
        fail("tokenizer: text of " + std::to_string(text.size()) + " bytes is too long to encode");
    std::vector<int32_t> ids;
    ids.reserve(text.size() / 3 + 2);
    if (add_bos && impl_->vocab.bos_id >= 0) ids.push_back(impl_->vocab.bos_id);
    impl_->split_at_markers(text, false, ids, [&](std::string_view run) { impl_->encode_run(run, ids); });
    return ids;
}

std::vector<int32_t> Tokenizer::encode_markup(std::string_view text, bool add_bos) const {
    const Vocab& v = impl_->vocab;
    std::vector<int32_t> ids;
    impl_->split_at_markers(text, true, ids, [&](std::string_view run) {
        if (run.find(kMarkupEscape) == std::string_view::npos) return impl_->encode_run(run, ids);
        // The escapes kept control pieces apart; what they hid may hold user-defined ones.
        const std::string unescaped = unescape_markup(run);
        impl_->split_at_markers(unescaped, false, ids, [&](std::string_view r) { impl_->encode_run(r, ids); });
    });
    if (add_bos && v.bos_id >= 0 && (ids.empty() || ids.front() != v.bos_id)) ids.insert(ids.begin(), v.bos_id);
    return ids;
}

std::string_view Tokenizer::token_bytes(int32_t id) const {
    impl_->check_id(id);
    const uint32_t begin = id == 0 ? 0 : impl_->text_end[size_t(id) - 1];
    return std::string_view(impl_->text).substr(begin, impl_->text_end[size_t(id)] - begin);
}

std::string Tokenizer::token_text(int32_t id) const { return std::string(token_bytes(id)); }

const std::string& Tokenizer::piece(int32_t id) const {
    impl_->check_id(id);
    return impl_->vocab.tokens[size_t(id)];
}

TokenType Tokenizer::token_type(int32_t id) const {
    impl_->check_id(id);
    return impl_->vocab.types[size_t(id)];
}

VocabKind Tokenizer::kind() const { return impl_->vocab.kind; }
const Vocab& Tokenizer::vocab() const { return impl_->vocab; }
int32_t Tokenizer::n_vocab() const { return int32_t(impl_->vocab.tokens.size()); }
int32_t Tokenizer::bos() const { return impl_->vocab.bos_id; }
int32_t Tokenizer::eos() const { return impl_->vocab.eos_id; }
bool Tokenizer::add_bos() const { return impl_->vocab.add_bos; }
bool Tokenizer::adds_dummy_prefix() const { return impl_->vocab.kind == VocabKind::Spm && impl_->vocab.add_space_prefix; }

bool Tokenizer::is_end_of_generation(int32_t id) const {
    if (id < 0) return false;
    if (id == impl_->vocab.eos_id) return true;
    const auto& eot = impl_->end_of_turn;
    return std::find(eot.begin(), eot.end(), id) != eot.end();
}

}  // namespace ember::tokenizer
