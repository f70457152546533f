#pragma once
// One architecture = one file in engine/model/ that declares its tensors and runs its layers
// from the shared blocks. `load_architecture` maps `general.architecture` to that file.

#include <cstdint>
#include <memory>

#include "backend/device.h"
#include "ember/model.h"
#include "gguf/gguf_reader.h"
#include "model/blocks.h"
#include "model/hparams.h"
#include "model/kv_cache.h"
#include "sparse/placement.h"

namespace ember::model {

class Architecture {
public:
    virtual ~Architecture() = default;

    virtual const HParams& hparams() const = 0;
    virtual uint64_t weight_bytes() const = 0;      // every bound tensor
    virtual uint64_t bytes_per_token() const = 0;   // weights read to evaluate one token densely
    virtual uint64_t ffn_bytes() const = 0;         // FFN matrices, all layers
    virtual uint64_t predictor_bytes() const = 0;   // predictors, all layers (0 when dense)
    virtual uint64_t n_params() const = 0;
    virtual const char* weight_type() const = 0;    // type of the bulk of the weights

    // Sparse models only: one layer's FFN rows for a device, and the exact device byte costs
    // of every part for placement with a KV cache of n_ctx tokens.
    virtual backend::FfnRows ffn_rows(int32_t il) const = 0;
    virtual sparse::PlacementCosts placement_costs(int32_t n_ctx) const = 0;

    // Evaluates n tokens (n <= s.n_batch) at positions kv.n_past().., appends them to the cache
    // and writes logits: of every token ([n][n_vocab]) when logits_all, else of the last one.
    virtual void forward(const int32_t* tokens, int32_t n, KvCache& kv, Scratch& s, float* logits,
                         bool logits_all) const = 0;
};

// Throws EngineError naming the file and the architecture string when it is unknown.
std::unique_ptr<Architecture> load_architecture(const gguf::File& file, const ModelParams& params);

// Per-architecture constructors, each defined in its own file.
std::unique_ptr<Architecture> load_llama(const gguf::File& file, const ModelParams& params);
std::unique_ptr<Architecture> load_bamboo(const gguf::File& file, const ModelParams& params);
std::unique_ptr<Architecture> load_falcon(const gguf::File& file, const ModelParams& params);

}  // namespace ember::model
