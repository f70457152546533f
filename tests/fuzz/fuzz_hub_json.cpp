// The Hub's JSON answers and Link headers come from the network: every parser returns a value or
// an error naming the URL and field, and never throws (nlohmann's type errors included).
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "src/hub_json.h"
#include "src/url.h"

namespace {
const std::string kBase = "https://huggingface.co/api/models/PowerInfer/ReluLLaMA-7B-PowerInfer-GGUF/tree/main";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
    namespace json = ember::hub::json;
    switch (data[0] % 4) {
        case 0: (void)json::parse_search(body, kBase).ok(); break;
        case 1: (void)json::parse_info(body, kBase).ok(); break;
        case 2: (void)json::parse_tree_page(body, kBase).ok(); break;
        case 3: {
            // The client compares the next page's origin with the endpoint's before sending the
            // token there, so a next link must always be an absolute URL with an origin.
            namespace url = ember::hub::url;
            const auto next = url::next_link(body, kBase);
            if (next && !url::origin(*next)) ember::fuzz::fail("a next page link without an origin");
            break;
        }
    }
    return 0;
}
