#pragma once
// Text <-> token ids for a model's vocabulary. Immutable after construction, so one instance
// can serve several sessions and threads.
//
// Dummy prefix: SentencePiece prepends one space (U+2581) to the text it encodes, and
// decoding gives that space back: token_text() and StreamDecoder keep it. Whoever decodes a
// sequence that starts right after BOS (e.g. echoing a prompt) strips one leading ' ' from
// the first token's text when adds_dummy_prefix() is true. Generated tokens continue earlier
// text, so their spaces are real and nothing is stripped.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/stream_decoder.h"
#include "tokenizer/vocab.h"

namespace ember::gguf {
class File;
}

namespace ember::tokenizer {

class Tokenizer {
public:
    // Throws EngineError if the vocabulary is inconsistent (see check_vocab).
    explicit Tokenizer(Vocab vocab);
    ~Tokenizer();
    Tokenizer(Tokenizer&&) noexcept;
    Tokenizer& operator=(Tokenizer&&) noexcept;

    static std::unique_ptr<Tokenizer> from_gguf(const gguf::File& file);

    // Text is plain: the pieces of control tokens ("<s>", "<|endoftext|>") in it are characters,
    // never those tokens. User-defined pieces (Qwen's "<think>", Gemma's "<div>" and newline
    // runs) become their tokens, the longest piece first, as llama.cpp and Hugging Face match
    // them in any text; the text between them is encoded run by run. SPM: spaces -> U+2581, one U+2581 prepended to non-empty text, bigram merges by score,
    // <0xXX> byte fallback. BPE: GPT-2 pre-tokenization, byte alphabet, merges by rank.
    std::vector<int32_t> encode(std::string_view text, bool add_bos) const;
    // For text a chat template rendered: the pieces of control and user-defined tokens in it
    // ("<s>", "<|im_start|>") become those tokens (the longest piece wins), the text between
    // them is encoded as by encode(), so SPM gives each run its leading space, as llama.cpp
    // and Hugging Face's Llama tokenizer do. A BOS the text starts with stands for add_bos's.
    // Every U+FDD0 is dropped from that text: ember/markup.h escapes pieces with it.
    std::vector<int32_t> encode_markup(std::string_view text, bool add_bos) const;

    // The bytes token `id` stands for: U+2581 -> ' ', <0x0A> -> "\n", GPT-2's byte alphabet
    // undone; "" for control tokens. May be part of a UTF-8 character. Throws EngineError for
    // an id outside the vocabulary.
    std::string token_text(int32_t id) const;
    // The same bytes without a copy; valid while the tokenizer lives.
    std::string_view token_bytes(int32_t id) const;
    // The piece as stored in the vocabulary.
    const std::string& piece(int32_t id) const;
    // As the file gives it, except that llama.cpp's control-looking pieces (known_pieces.h)
    // are Control.
    TokenType token_type(int32_t id) const;

    VocabKind kind() const;
    const Vocab& vocab() const;
    int32_t n_vocab() const;
    int32_t bos() const;  // -1 if none
    int32_t eos() const;  // -1 if none
    bool add_bos() const;
    bool adds_dummy_prefix() const;  // SPM, unless the vocabulary turns it off
    // eos, and the tokens llama.cpp ends generation on (<|im_end|>, <|eot_id|>, </s>, ...).
    bool is_end_of_generation(int32_t id) const;

private:
    struct Impl;
    std::unique_ptr<const Impl> impl_;
};

}  // namespace ember::tokenizer
