#pragma once
// GPT-2's pre-tokenizer, written out by hand instead of run through a regex engine:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// Character classes as in char_class.h. An ill-formed UTF-8 subpart counts as one Other
// character, so bytes are never dropped.

#include <cstddef>
#include <string_view>

namespace ember::tokenizer {

// End (byte offset) of the chunk that starts at `pos`; `pos` must be < text.size().
size_t gpt2_chunk_end(std::string_view text, size_t pos);

}  // namespace ember::tokenizer
