#pragma once
// The one interface a forward pass computes through: each operation reads the session's
// execution plan and runs on the CPU or the device accordingly, the two versions side by side
// in executor.cpp. Architectures never ask a device anything themselves.

#include <cstdint>
#include <memory>

#include "backend/device_stream.h"
#include "ember/session.h"
#include "model/execution_plan.h"
#include "model/expert_ffn.h"
#include "model/hparams.h"
#include "model/kv_cache.h"
#include "model/scratch.h"
#include "model/sparse_lm_head.h"
#include "tensor/matmul.h"

namespace ember::model {

struct SparseFfnWeights;

// A dense FFN: out = down · act(gate · x, up · x).
struct DenseFfnWeights {
    tensor::WeightView gate;  // [n_embd] -> [n_ff]; n_rows == 0 without a gate (FfnGate::Relu)
    tensor::WeightView up;    // [n_embd] -> [n_ff]
    tensor::WeightView down;  // [n_ff] -> [n_embd]
};

// TEAL's input sparsity, per layer: the magnitude an input must exceed to be read, for a
// gate-first FFN's gate (HParams::sparse_ffn_input; with how many neurons then run) and for
// attention's Q, K, V and output products (HParams::sparse_attn_input). Empty where off.
struct InputSparsity {
    std::vector<float> ffn_in;
    std::vector<int32_t> neurons_kept;
    std::vector<float> attn_in;
    std::vector<float> attn_out;
};

class Executor {
public:
    // Starts with everything on the CPU.
    Executor(const HParams& hp, Scratch& s);

    // A new plan and the device stream it queues work on (null only for a CPU-only plan);
    // takes effect from the next operation. What the device holds is the placement's business.
    void set_plan(std::shared_ptr<const ExecutionPlan> plan, backend::DeviceStream* device);
    const ExecutionPlan& plan() const { return *plan_; }
    Scratch& scratch() { return s_; }
    // A gate-first FFN's per-layer thresholds (Architecture::gate_thresholds at the session's
    // activation sparsity): a neuron runs where |act(gate)| exceeds its layer's.
    void set_gate_thresholds(std::vector<float> thresholds);
    // With weights laid out by input (SparseFfnWeights::gate_t, HParams::sparse_attn_input):
    // Architecture::input_sparsity; for the gate, in place of the gate thresholds.
    void set_input_sparsity(InputSparsity s) { input_sparsity_ = std::move(s); }
    // A mixture of experts kept partly on disk: [n_layer][n_expert] 1 where an expert is read from
    // the file (ExpertResidency::on_demand, which must outlive the executor); null: none is.
    void set_experts_on_demand(const std::vector<std::vector<uint8_t>>* on_demand);

    // A batch of n tokens at positions kv.n_past()..: the RoPE angles every layer shares.
    void begin_batch(const KvCache& kv, int32_t n);

    // Named intermediates (ember/session.h, Intermediate) go to `callback` when it is set.
    void set_intermediate_callback(IntermediateCallback callback) { on_intermediate_ = std::move(callback); }
    // Hands rows [t0, t0 + n_tokens) of the batch (n_tokens -1: all of them), n_cols values each,
    // to the callback.
    void emit(const char* name, int32_t il, const float* data, int64_t n_cols, int32_t t0 = 0, int32_t n_tokens = -1) const {
        if (on_intermediate_) on_intermediate_({name, il, pos0_ + t0, n_tokens < 0 ? n_ : n_tokens, n_cols, data});
    }

    // out = [x +] wo · attention(rope(qkv · norm(x))) for the batch, K and V appended to the
    // cache (out may be x).
    void attention_sublayer(int32_t il, const backend::AttentionLayer& layer, KvCache& kv, const float* x, float* out);
    // out = the layer's FFN of the normalized input x.
    void dense_ffn(int32_t il, const DenseFfnWeights& w, const float* x, float* out);
    // Mixture of experts, in two steps: route() picks each token's experts from the router's
    // input (SmallThinker: the layer's input, before attention), moe_ffn() then computes the
    // picked experts on the FFN's normalized input x, each over the tokens routed to it, into
    // out (model/expert_ffn.h). The router runs on the CPU, each expert where the plan says.
    // Experts read from the file when routed (set_experts_on_demand) are asked for as soon as
    // route() has picked them.
    void route(int32_t il, const tensor::WeightView& router, const MoeFfnWeights& experts, const float* x);
    void moe_ffn(int32_t il, const MoeFfnWeights& w, const float* x, float* out);
    // out = the predictor-guided sparse FFN (sparse_ffn.h): u feeds the predictor, x the FFN.
    void sparse_ffn(int32_t il, const SparseFfnWeights& w, const float* u, const float* x, float* out);
    // logits = w · x for n normalized rows. With a sparse LM head set, one row on the CPU
    // computes only the rows its profiler picks (model/sparse_lm_head.h).
    void lm_head(const tensor::WeightView& w, const float* x, int32_t n, float* logits);
    // Null: the LM head is always dense (the default).
    void set_sparse_lm_head(const LmHeadProfiler* profiler);
    // LM head rows computed since the executor was made, and for how many tokens.
    int64_t lm_head_rows() const { return lm_head_rows_; }
    int64_t lm_head_tokens() const { return lm_head_tokens_; }

private:
    void linear(Where where, const tensor::WeightView& w, const float* x, int64_t n, float* y);
    void attention_product(int32_t il, Where where, const tensor::WeightView& w, const float* x, float threshold,
                           float* y);
    void cpu_attention(int32_t il, KvCache& kv);
    void predictor(int32_t il, const SparseFfnWeights& w, const float* u, float* scores);
    // Token t's neurons of a gate-first FFN from its scores in the sparse scratch (t indexes the
    // batch's kept-input counts: 0 for a token alone).
    void select_gate_first(int32_t il, const SparseFfnWeights& w, int32_t t, const uint8_t* hot);
    // A batch through a gate-first FFN with no neuron on a device.
    void gate_first_batch(int32_t il, const SparseFfnWeights& w, const float* x, float* out);
    void device_expert(const ExpertWeights& w, int32_t m);
    void list_routed(const MoeFfnWeights& w, SparseLayerStats& stats);
    // One token's routed experts, some resident whole on the device.
    void token_experts(int32_t il, const MoeFfnWeights& w, const float* x, float* out);
    void count_fires(SparseLayerStats& stats, int32_t first_row, const float* act, int32_t m) const;
    void ask_for_experts(int32_t il, const MoeFfnWeights& experts);

    const HParams& hp_;
    Scratch& s_;
    std::shared_ptr<const ExecutionPlan> plan_;
    std::vector<float> gate_thresholds_;  // [n_layer], gate-first models only
    InputSparsity input_sparsity_;
    const std::vector<std::vector<uint8_t>>* experts_on_demand_ = nullptr;
    std::vector<uint8_t> asked_;          // [n_expert] the experts route() has asked for in this batch
    backend::DeviceStream* device_ = nullptr;
    int32_t n_ = 0;     // tokens in the batch
    int32_t pos0_ = 0;  // the position of its first
    IntermediateCallback on_intermediate_;
    const LmHeadProfiler* profiler_ = nullptr;
    std::unique_ptr<SparseLmHeadScratch> lm_head_scratch_;
    int64_t lm_head_rows_ = 0;
    int64_t lm_head_tokens_ = 0;
};

}  // namespace ember::model
