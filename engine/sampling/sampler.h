#pragma once
// Token sampler: logits in, one token id out. The stages run in llama.cpp's classic order:
// repetition penalty -> (greedy if temperature <= 0) -> top-k -> top-p -> min-p ->
// temperature -> softmax -> draw. The seed is in the params, the RNG state in the sampler,
// so a fixed seed reproduces a run. Every buffer is allocated in the constructor; sample()
// and accept() never allocate. The sampler knows nothing of the model or the tokenizer.

#include <cstdint>
#include <span>
#include <vector>

#include "ember/sampling_params.h"
#include "sampling/history.h"
#include "sampling/rng.h"
#include "sampling/stages.h"

namespace ember::sampling {

// One definition of the parameters, shared with the public API.
using SamplerParams = ember::SamplingParams;

class Sampler {
public:
    // Throws EngineError naming the field and value for n_vocab <= 0, a NaN or infinite
    // temperature, a NaN top_p or min_p, a repeat_penalty that is not finite and > 0, or a
    // negative repeat_last_n.
    Sampler(const SamplerParams& params, int32_t n_vocab);

    // logits.size() must be n_vocab (EngineError otherwise). NaN logits count as -inf;
    // a -inf logit is never chosen unless every logit is -inf. Always returns an id in
    // [0, n_vocab).
    int32_t sample(std::span<const float> logits);

    // Records a token for the repetition penalty. Throws EngineError for an id outside
    // [0, n_vocab).
    void accept(int32_t token);

    // Clears the history and re-seeds the RNG from params().seed.
    void reset();

    const SamplerParams& params() const { return params_; }
    int32_t n_vocab() const { return n_vocab_; }

private:
    SamplerParams params_;
    int32_t n_vocab_;
    std::vector<Candidate> candidates_;  // [n_vocab] scratch, rebuilt by every sample()
    TokenHistory history_;
    Rng rng_;
};

}  // namespace ember::sampling
