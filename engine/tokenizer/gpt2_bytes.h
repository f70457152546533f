#pragma once
// GPT-2's byte-level alphabet: each byte is written as a printable code point so that BPE
// tokens are ordinary text (a space is "Ġ" U+0120, a newline "Ċ" U+010A). Bytes that are
// printable Latin-1 stand for themselves; the other 68 take U+0100.. in byte order.

#include <cstdint>

namespace ember::tokenizer {

uint32_t byte_to_unicode(uint8_t byte);
// -1 when `cp` is not one of the 256 alphabet code points.
int unicode_to_byte(uint32_t cp);

}  // namespace ember::tokenizer
