#pragma once
// File patterns for `--include`, with the meaning Hugging Face's own tools give them (Python's
// fnmatch, case-sensitive): `*` any run of characters, `/` included; `?` one character;
// `[abc]`, `[a-z]`, `[!abc]` one character from a set or outside it. No escapes.

#include <string_view>

namespace ember::hub {

bool glob_match(std::string_view pattern, std::string_view path);

}  // namespace ember::hub
