#pragma once
// How the next token is drawn from the logits; the defaults are llama.cpp's `main`.

#include <cstdint>

namespace ember {

struct SamplingParams {
    float temperature = 0.8f;     // <= 0: greedy (argmax after penalties, lowest id on ties)
    int32_t top_k = 40;           // <= 0: off
    float top_p = 0.95f;          // >= 1: off
    float min_p = 0.05f;          // <= 0: off
    float repeat_penalty = 1.1f;  // 1: off; logit > 0 ? logit / p : logit * p, each distinct
                                  // token of the last repeat_last_n accepted ones once
    int32_t repeat_last_n = 64;   // 0: off
    uint64_t seed = 0xFFFFFFFF;   // a fixed seed reproduces a run
};

}  // namespace ember
