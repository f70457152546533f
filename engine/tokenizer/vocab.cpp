#include "tokenizer/vocab.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/error.h"
#include "gguf/gguf_reader.h"

namespace ember::tokenizer {

namespace {

constexpr const char* kModelKey = "tokenizer.ggml.model";
constexpr const char* kPreKey = "tokenizer.ggml.pre";
constexpr const char* kTokensKey = "tokenizer.ggml.tokens";
constexpr const char* kScoresKey = "tokenizer.ggml.scores";
constexpr const char* kTypesKey = "tokenizer.ggml.token_type";
constexpr const char* kMergesKey = "tokenizer.ggml.merges";
constexpr const char* kBosKey = "tokenizer.ggml.bos_token_id";
constexpr const char* kEosKey = "tokenizer.ggml.eos_token_id";
constexpr const char* kUnkKey = "tokenizer.ggml.unknown_token_id";
constexpr const char* kPadKey = "tokenizer.ggml.padding_token_id";
constexpr const char* kAddBosKey = "tokenizer.ggml.add_bos_token";

// Shortens a piece for an error message; pieces can be long or contain newlines.
std::string quoted(std::string_view s) {
    std::string out = "'";
    for (char c : s.substr(0, 40)) {
        if (c == '\n') out += "\\n";
        else if (c == '\'') out += "\\'";
        else out += c;
    }
    if (s.size() > 40) out += "...";
    return out + "'";
}

class Reader {
public:
    explicit Reader(const gguf::File& file) : file_(file) {}

    [[noreturn]] void fail_key(const char* key, const std::string& what) const {
        fail(file_.path() + ": metadata key '" + key + "' " + what);
    }

    const gguf::Array& required_array(const char* key, gguf::ValueType want) const {
        const gguf::Array* a = file_.get_array(key);
        if (!a) fail_key(key, "is missing");
        check_elements(key, *a, want);
        return *a;
    }

    const gguf::Array* optional_array(const char* key, gguf::ValueType want) const {
        const gguf::Array* a = file_.get_array(key);
        if (a) check_elements(key, *a, want);
        return a;
    }

    void check_length(const char* key, const gguf::Array& a, size_t n_vocab) const {
        if (a.size() != n_vocab)
            fail_key(key, "has " + std::to_string(a.size()) + " entries, but " + kTokensKey + " has " +
                              std::to_string(n_vocab));
    }

    // Explicit ids must name a token; absent keys take the default (dropped if out of range).
    int32_t token_id(const char* key, int32_t fallback, size_t n_vocab) const {
        const std::optional<int64_t> v = file_.get_int(key);
        if (!v) return fallback >= 0 && size_t(fallback) < n_vocab ? fallback : -1;
        if (*v < 0 || uint64_t(*v) >= n_vocab)
            fail_key(key, "= " + std::to_string(*v) + " is outside the vocabulary of " + std::to_string(n_vocab) +
                              " tokens");
        return int32_t(*v);
    }

    // The reference reader ignores unusable optional ids, so a file with a stale padding id
    // still loads.
    int32_t optional_token_id(const char* key, size_t n_vocab) const {
        const std::optional<int64_t> v = file_.get_int(key);
        return v && *v >= 0 && uint64_t(*v) < n_vocab ? int32_t(*v) : -1;
    }

private:
    void check_elements(const char* key, const gguf::Array& a, gguf::ValueType want) const {
        using T = gguf::ValueType;
        const bool ok = want == T::String ? a.elem == T::String
                        : want == T::F32  ? a.elem == T::F32 || a.elem == T::F64
                                          : is_integer(a.elem);
        if (!ok)
            fail_key(key, std::string("is an array of ") + gguf::value_type_name(a.elem) + ", expected " +
                              (want == T::String ? "strings" : want == T::F32 ? "floats" : "integers"));
    }

    static bool is_integer(gguf::ValueType t) {
        using T = gguf::ValueType;
        return t == T::U8 || t == T::I8 || t == T::U16 || t == T::I16 || t == T::U32 || t == T::I32 ||
               t == T::U64 || t == T::I64;
    }

    const gguf::File& file_;
};

}  // namespace

bool is_byte_piece(std::string_view piece) {
    auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f'); };
    return piece.size() == 6 && piece.substr(0, 3) == "<0x" && hex(piece[3]) && hex(piece[4]) && piece[5] == '>';
}

std::optional<VocabKind> vocab_kind_from_model(std::string_view model) {
    if (model == "llama") return VocabKind::Spm;
    if (model == "gpt2") return VocabKind::Bpe;
    return std::nullopt;
}

Vocab vocab_from_gguf(const gguf::File& file) {
    const Reader r(file);
    Vocab v;

    const std::optional<std::string> model = file.get_string(kModelKey);
    if (!model) r.fail_key(kModelKey, "is missing");
    const std::optional<VocabKind> kind = vocab_kind_from_model(*model);
    if (!kind) r.fail_key(kModelKey, "= " + quoted(*model) + " is not a supported tokenizer ('llama' or 'gpt2')");
    v.kind = *kind;
    const bool spm = v.kind == VocabKind::Spm;
    if (const std::optional<std::string> pre = file.get_string(kPreKey); pre && !spm) {
        const std::optional<PreTokenizer> known = pre_tokenizer_from_name(*pre);
        if (!known) r.fail_key(kPreKey, "= " + quoted(*pre) + " names a pre-tokenizer Ember does not have");
        v.pre = *known;
    }

    const gguf::Array& tokens = r.required_array(kTokensKey, gguf::ValueType::String);
    const size_t n_vocab = tokens.size();
    if (n_vocab == 0) r.fail_key(kTokensKey, "is empty");
    if (n_vocab > size_t(INT32_MAX)) r.fail_key(kTokensKey, "has more than 2^31 entries");
    v.tokens = tokens.strings;

    // SPM merges by score, so scores are required there; BPE files normally have none.
    const gguf::Array* scores = spm ? &r.required_array(kScoresKey, gguf::ValueType::F32)
                                    : r.optional_array(kScoresKey, gguf::ValueType::F32);
    if (scores) {
        r.check_length(kScoresKey, *scores, n_vocab);
        v.scores.reserve(n_vocab);
        for (size_t i = 0; i < n_vocab; ++i) {
            const double s = scores->floats[i];
            if (std::isnan(s))
                r.fail_key(kScoresKey, "entry " + std::to_string(i) + " (" + quoted(v.tokens[i]) + ") is NaN");
            v.scores.push_back(float(s));
        }
    }

    const gguf::Array* types = r.optional_array(kTypesKey, gguf::ValueType::I32);
    v.types.assign(n_vocab, TokenType::Normal);
    if (types) {
        r.check_length(kTypesKey, *types, n_vocab);
        for (size_t i = 0; i < n_vocab; ++i) {
            const int64_t t = types->ints[i];
            if (t < 0 || t > int64_t(TokenType::Byte))
                r.fail_key(kTypesKey, "entry " + std::to_string(i) + " (" + quoted(v.tokens[i]) + ") = " +
                                          std::to_string(t) + " is not a token type (0..6)");
            v.types[i] = TokenType(t);
            if (spm && v.types[i] == TokenType::Byte && !is_byte_piece(v.tokens[i]))
                r.fail_key(kTypesKey, "entry " + std::to_string(i) + " marks " + quoted(v.tokens[i]) +
                                          " as a byte token, but it is not of the form <0xXX>");
        }
    }

    if (!spm) {
        const gguf::Array& merges = r.required_array(kMergesKey, gguf::ValueType::String);
        for (size_t i = 0; i < merges.strings.size(); ++i) {
            const std::string& m = merges.strings[i];
            // Split at the first space after the first character, as the reference does.
            const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
            if (space == std::string::npos || space + 1 >= m.size())
                r.fail_key(kMergesKey, "entry " + std::to_string(i) + " = " + quoted(m) + " is not 'left right'");
        }
        v.merges = merges.strings;
    }

    v.bos_id = r.token_id(kBosKey, spm ? 1 : 11, n_vocab);
    v.eos_id = r.token_id(kEosKey, spm ? 2 : 11, n_vocab);
    v.unk_id = r.token_id(kUnkKey, spm ? 0 : -1, n_vocab);
    v.pad_id = r.optional_token_id(kPadKey, n_vocab);
    // Without the key: SPM adds BOS, BPE does not, except Tekken's (llama.cpp's defaults).
    v.add_bos = file.get_bool(kAddBosKey).value_or(spm || v.pre == PreTokenizer::Tekken);
    v.add_space_prefix = spm && file.get_bool("tokenizer.ggml.add_space_prefix").value_or(true);
    return v;
}

void check_vocab(const Vocab& v, const std::string& source) {
    const size_t n = v.tokens.size();
    if (n == 0 || n > size_t(INT32_MAX)) fail(source + ": the vocabulary has " + std::to_string(n) + " tokens");
    if (v.types.size() != n)
        fail(source + ": " + std::to_string(v.types.size()) + " token types for " + std::to_string(n) +
             " tokens");
    if (!v.scores.empty() && v.scores.size() != n)
        fail(source + ": " + std::to_string(v.scores.size()) + " scores for " + std::to_string(n) + " tokens");
    if (v.kind == VocabKind::Spm && v.scores.empty()) fail(source + ": a SentencePiece vocabulary needs scores");
    for (const auto& [name, id] : {std::pair{"bos", v.bos_id}, {"eos", v.eos_id}, {"unk", v.unk_id},
                                   {"pad", v.pad_id}}) {
        if (id < -1 || id >= int32_t(n))
            fail(source + ": " + name + " id " + std::to_string(id) + " is outside the vocabulary of " +
                 std::to_string(n) + " tokens");
    }
}

}  // namespace ember::tokenizer
