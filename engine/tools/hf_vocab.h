#pragma once
// A Hugging Face byte-level BPE tokenizer (tokenizer.json and tokenizer_config.json in one
// folder) as GGUF tokenizer keys, the way llama.cpp's converter writes them: the vocabulary by
// id, added tokens as control (special) or user-defined ones, the merges, bos/eos, whether BOS
// is added, and the pre-tokenizer's name. For synthetic models with real vocabularies.

#include <cstdint>
#include <string>

#include "gguf/gguf_writer.h"

namespace ember::tools {

// Sets the tokenizer.ggml.* keys; returns the vocabulary size. Throws EngineError naming the
// file and field on anything it cannot read.
int64_t write_hf_vocab(gguf::Writer& w, const std::string& dir, const std::string& pre);

}  // namespace ember::tools
