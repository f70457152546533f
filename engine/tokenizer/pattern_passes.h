#pragma once
// The pre-tokenizers llama.cpp writes as a list of patterns run one after another (DeepSeek's,
// Falcon's and its own default rules): each pattern cuts every piece the ones before it left into its matches and the
// text between them, so a later pattern only ever cuts finer and never looks past a piece's end.

#include <cstddef>
#include <string_view>
#include <vector>

#include "tokenizer/pretokenizer.h"

namespace ember::tokenizer {

bool runs_in_passes(PreTokenizer pre);

// Appends the end (byte offset) of each piece of `text`; `pre` is one that runs_in_passes.
void split_in_passes(PreTokenizer pre, std::string_view text, std::vector<size_t>& ends);

}  // namespace ember::tokenizer
