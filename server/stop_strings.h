#pragma once
// The `stop` sequences of a completion request, applied to streamed text: text is let out only
// once no stop sequence can begin in it, and generation ends where one is complete, without it.

#include <string>
#include <string_view>
#include <vector>

namespace ember::server {

class StopStrings {
public:
    explicit StopStrings(std::vector<std::string> stops);

    // Takes the next piece of generated text; returns what may be sent now.
    std::string feed(std::string_view text);
    // True once a stop sequence was seen; nothing after it is ever returned.
    bool stopped() const { return stopped_; }
    // At the end of generation: the text held back as a possible start of a stop sequence.
    std::string flush();

private:
    std::vector<std::string> stops_;
    std::string held_;
    bool stopped_ = false;
};

}  // namespace ember::server
