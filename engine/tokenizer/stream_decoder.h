#pragma once
// Decoding on the per-token path. Included by tokenizer.h.

#include <cstdint>
#include <string>

namespace ember::tokenizer {

class Tokenizer;

// Turns a stream of token ids into text without ever cutting a UTF-8 character that is
// spread over several byte tokens: push() returns only complete characters and holds back
// an incomplete tail; flush() returns what is held back. Ill-formed bytes become U+FFFD (one
// per maximal ill-formed subpart), as soon as they are known to be ill-formed.
class StreamDecoder {
public:
    explicit StreamDecoder(const Tokenizer& tokenizer);

    std::string push(int32_t id);
    std::string flush();
    void reset();

private:
    const Tokenizer* tokenizer_;  // a pointer, so a decoder can be reassigned
    std::string pending_;  // at most 3 bytes between calls: the start of an unfinished character
};

}  // namespace ember::tokenizer
