#include "tokenizer/stream_decoder.h"

#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace ember::tokenizer {

namespace {

// Appends the complete characters of `bytes` to `out` and returns how many bytes were used;
// an unfinished character at the end is left unless `final`.
size_t drain(std::string_view bytes, bool final, std::string& out) {
    size_t pos = 0;
    while (pos < bytes.size()) {
        const Utf8Step step = utf8_next(bytes, pos);
        if (step.status == Utf8Step::Truncated && !final) break;
        if (step.status == Utf8Step::Ok) out.append(bytes.substr(pos, step.len));
        else out.append(kReplacementChar);
        pos += step.len;
    }
    return pos;
}

}  // namespace

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer) : tokenizer_(&tokenizer) {}

std::string StreamDecoder::push(int32_t id) {
    const std::string_view bytes = tokenizer_->token_bytes(id);
    std::string out;
    if (pending_.empty()) {
        const size_t used = drain(bytes, false, out);
        pending_.assign(bytes.substr(used));
    } else {
        pending_.append(bytes);
        const size_t used = drain(pending_, false, out);
        pending_.erase(0, used);
    }
    return out;
}

std::string StreamDecoder::flush() {
    std::string out;
    drain(pending_, true, out);
    pending_.clear();
    return out;
}

void StreamDecoder::reset() { pending_.clear(); }

}  // namespace ember::tokenizer
