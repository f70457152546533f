#pragma once
// A Hugging Face BPE tokenizer (tokenizer.json and tokenizer_config.json in one folder) as GGUF
// tokenizer keys. Byte-level BPE (GPT-2 bytes, as Llama 3 and Qwen ship it) becomes a `gpt2`
// vocabulary the way llama.cpp's converter writes one: the vocabulary by id, added tokens as
// control (special) or user-defined ones, the merges and the pre-tokenizer's name. BPE with byte
// fallback (a SentencePiece model converted, as Gemma ships it) becomes the `llama` vocabulary
// its tokenizer.model would have given: SentencePiece merges the best-scored pair first, and the
// converted merges are listed best first, so a piece scores minus the rank of the first merge
// that makes it. For synthetic models with real vocabularies.

#include <cstdint>
#include <string>

#include "gguf/gguf_writer.h"

namespace ember::tools {

// Sets the tokenizer.ggml.* keys; returns the vocabulary size. Throws EngineError naming the
// file and field on anything it cannot read.
int64_t write_hf_vocab(gguf::Writer& w, const std::string& dir, const std::string& pre);

}  // namespace ember::tools
