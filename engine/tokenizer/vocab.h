#pragma once
// The tokenizer vocabulary as stored in GGUF metadata (docs/FORMATS.md §2.2), plain data.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/pretokenizer.h"

namespace ember::gguf {
class File;
}

namespace ember::tokenizer {

// Values of `tokenizer.ggml.token_type`.
enum class TokenType : int32_t {
    Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6,
};

enum class VocabKind {
    Spm,  // tokenizer.ggml.model = "llama": SentencePiece with byte fallback
    Bpe,  // tokenizer.ggml.model = "gpt2": GPT-2 byte-level BPE
};

struct Vocab {
    VocabKind kind = VocabKind::Spm;
    std::vector<std::string> tokens;  // [n_vocab] pieces as stored (U+2581 for space; GPT-2 byte alphabet)
    std::vector<float> scores;        // [n_vocab] SPM merge priority; empty when the file has none
    std::vector<TokenType> types;     // [n_vocab]
    std::vector<std::string> merges;  // BPE only: "left right", rank = index
    // -1 = none. Defaults when the keys are absent: SPM bos 1, eos 2, unk 0; BPE bos 11, eos 11.
    int32_t bos_id = -1;
    int32_t eos_id = -1;
    int32_t unk_id = -1;
    int32_t pad_id = -1;
    bool add_bos = true;  // tokenizer.ggml.add_bos_token; default true for SPM, false for BPE
    // SPM only: tokenizer.ggml.add_space_prefix (default true): a space before the text, as
    // SentencePiece's dummy prefix. Gemma's vocabularies turn it off.
    bool add_space_prefix = true;
    // BPE only: tokenizer.ggml.pre. Files without the key (PowerInfer's Falcon among them) predate
    // it and were made for GPT-2's rules.
    PreTokenizer pre = PreTokenizer::Gpt2;
};

// Whether an SPM piece is a byte token's, "<0xXX>" with two hex digits.
bool is_byte_piece(std::string_view piece);

// The kind `tokenizer.ggml.model` names ("llama", "gpt2"), nullopt for one Ember does not have.
std::optional<VocabKind> vocab_kind_from_model(std::string_view model);

// Reads and validates the tokenizer keys: the model name is known, the arrays are present
// with the right element types and equal lengths, types are known, SPM byte tokens are
// "<0xXX>", merges are "left right", and bos/eos/unk ids are inside the vocabulary. Throws
// EngineError naming the file, the key and the bad value.
Vocab vocab_from_gguf(const gguf::File& file);

// Checks the invariants the encoders rely on for a Vocab built in memory; throws EngineError
// whose message starts with `source`.
void check_vocab(const Vocab& vocab, const std::string& source);

}  // namespace ember::tokenizer
