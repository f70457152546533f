// The tokenizer on arbitrary bytes (a user can paste anything): encode never fails, every id is in
// the vocabulary, and decoding gives back valid UTF-8 text exactly; encode_markup's ids are valid too. Vocabularies: the SentencePiece
// and GPT-2 BPE fixtures of tests/data/tokenizer. Every pre-tokenizer cuts the text into
// non-empty chunks that cover it.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.h"
#include "gguf/gguf_reader.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace {

std::unique_ptr<ember::tokenizer::Tokenizer> load(const char* path) {
    return ember::tokenizer::Tokenizer::from_gguf(*ember::gguf::File::open(path));
}

bool valid_utf8(std::string_view text) {
    for (size_t pos = 0; pos < text.size();) {
        const auto step = ember::tokenizer::utf8_next(text, pos);
        if (step.status != ember::tokenizer::Utf8Step::Ok) return false;
        pos += step.len;
    }
    return true;
}

const ember::tokenizer::Tokenizer& tokenizer(int which) {
    static const auto spm = load(EMBER_FUZZ_DATA "/tokenizer/spm-4096.gguf");
    static const auto bpe = load(EMBER_FUZZ_DATA "/tokenizer/bpe-500.gguf");
    return which == 0 ? *spm : *bpe;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const auto& tok = tokenizer(data[0] % 2);
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    std::vector<size_t> ends;
    const auto pre = ember::tokenizer::PreTokenizer(data[0] % (int(ember::tokenizer::PreTokenizer::Default) + 1));
    ember::tokenizer::pre_tokenize(pre, text, ends);
    for (size_t i = 0; i < ends.size(); ++i)
        if (ends[i] <= (i ? ends[i - 1] : 0)) ember::fuzz::fail("a pre-tokenizer gave an empty or backward chunk");
    if ((ends.empty() ? 0 : ends.back()) != text.size()) ember::fuzz::fail("a pre-tokenizer's chunks do not cover the text");
    const auto ids = tok.encode(text, /*add_bos=*/false);
    std::string decoded;
    for (int32_t id : ids) {
        if (id < 0 || id >= tok.n_vocab()) ember::fuzz::fail("encode gave an id outside the vocabulary");
        decoded += tok.token_text(id);
    }
    if (tok.adds_dummy_prefix() && !decoded.empty() && decoded[0] == ' ') decoded.erase(0, 1);
    // U+2581 is SentencePiece's space: it decodes as ' ', so such text cannot round-trip.
    if (valid_utf8(text) && text.find("\xe2\x96\x81") == std::string_view::npos &&
        decoded != text)
        ember::fuzz::fail("decode(encode(text)) != text for valid UTF-8");
    // The same text as a rendered chat prompt: control tokens may appear, every id stays valid.
    for (int32_t id : tok.encode_markup(text, /*add_bos=*/true))
        if (id < 0 || id >= tok.n_vocab()) ember::fuzz::fail("encode_markup gave an id outside the vocabulary");
    return 0;
}
