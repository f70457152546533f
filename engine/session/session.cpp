#include "ember/session.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <optional>
#include <string>

#include "backend/gpu.h"
#include "common/error.h"
#include "model/model_impl.h"
#include "session/device_placement.h"
#include "sampling/sampler.h"
#include "tensor/thread_pool.h"
#include "tokenizer/stream_decoder.h"

namespace ember {
namespace {

// What a device keeps free of its budget: room for its own work (a GPU's scratch and norms for
// this model, context and batch), and never less than the host's scratch for the same batch.
uint64_t device_margin_bytes(const model::HParams& hp, int32_t n_ctx, const model::Scratch& scratch) {
    backend::WorkShape w;
    w.n_embd = hp.n_embd;
    w.n_q = hp.n_embd_q();
    w.n_gqa = hp.n_embd_gqa();
    w.n_ff = int64_t(hp.n_ff) * std::max(hp.n_expert_used, 1);
    w.n_vocab = hp.n_vocab;
    w.n_layer = hp.n_layer;
    w.n_head = hp.n_head;
    w.head_dim = hp.head_dim();
    w.n_ctx = n_ctx;
    w.n_batch = scratch.n_batch;
    return std::max(scratch.bytes(), backend::device_work_bytes(w));
}

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// "gpu" is the first usable GPU, "gpu:N" the runtime's device N; nullopt for anything else.
std::optional<int> gpu_index(const std::string& device) {
    if (device == "gpu") {
        const GpuProbe probe = probe_gpus();
        const GpuInfo* g = probe.first_usable();
        return g ? g->index : 0;  // make_gpu_device then says why GPU 0 cannot be used
    }
    if (device.size() < 5 || device.compare(0, 4, "gpu:") != 0) return std::nullopt;
    int n = 0;
    for (size_t i = 4; i < device.size(); ++i) {
        if (device[i] < '0' || device[i] > '9' || n > 1000) return std::nullopt;
        n = n * 10 + (device[i] - '0');
    }
    return n;
}

}  // namespace

const char* stop_reason_name(StopReason reason) {
    switch (reason) {
        case StopReason::EndOfGeneration: return "end of generation";
        case StopReason::MaxTokens: return "token limit";
        case StopReason::ContextFull: return "context full";
        case StopReason::Cancelled: return "cancelled";
        case StopReason::CallbackStopped: return "stopped";
    }
    return "?";
}

struct Session::Impl {
    Impl(std::shared_ptr<const Model> m, int32_t n_ctx, int32_t n_batch, int32_t n_threads)
        : model(std::move(m)),
          arch(*model->impl().arch),
          kv(arch.hparams().n_layer, n_ctx, arch.hparams().n_embd_gqa()),
          scratch(arch.hparams(), n_batch, n_ctx, n_threads),
          exec(arch.hparams(), scratch),
          logits(size_t(arch.hparams().n_vocab)) {
        context.reserve(size_t(n_ctx));
    }

    // Runs the forward pass over `tokens` in batches. Returns false when cancelled.
    bool evaluate(std::span<const int32_t> tokens, bool logits_all) {
        const int32_t n_vocab = arch.hparams().n_vocab;
        if (tokens.empty()) fail("nothing to evaluate: the token list is empty");
        if (int64_t(tokens.size()) > kv.free_cells())
            fail("context overflow: " + std::to_string(tokens.size()) + " new tokens do not fit, " +
                 std::to_string(kv.n_past()) + " of " + std::to_string(kv.n_ctx()) + " context cells are in use",
                 ErrorCode::ContextOverflow);
        if (logits_all) all_logits.resize(tokens.size() * size_t(n_vocab));
        n_all_logits = logits_all ? int32_t(tokens.size()) : 0;
        for (size_t done = 0; done < tokens.size();) {
            if (cancel_flag.load(std::memory_order_relaxed)) return false;
            const int32_t n = int32_t(std::min<size_t>(size_t(scratch.n_batch), tokens.size() - done));
            const bool last = done + size_t(n) == tokens.size();
            float* out = logits_all ? all_logits.data() + done * size_t(n_vocab) : logits.data();
            arch.forward(tokens.data() + done, n, kv, exec, out, logits_all);
            context.insert(context.end(), tokens.begin() + std::ptrdiff_t(done), tokens.begin() + std::ptrdiff_t(done + size_t(n)));
            if (logits_all && last)
                std::copy_n(out + size_t(n - 1) * n_vocab, n_vocab, logits.begin());
            done += size_t(n);
        }
        return true;
    }

    std::shared_ptr<const Model> model;
    const model::Architecture& arch;
    model::KvCache kv;
    model::Scratch scratch;
    model::Executor exec;           // runs each step where the placement's latest plan says
    std::vector<float> logits;      // [n_vocab] of the last evaluated token
    std::vector<float> all_logits;  // [n][n_vocab] of the last evaluate(..., true)
    int32_t n_all_logits = 0;
    std::vector<int32_t> context;  // the tokens in kv, in order; reserved for n_ctx
    std::atomic<bool> cancel_flag{false};
    Timings timings;
    std::unique_ptr<DevicePlacement> placement;  // sessions with a device only
    float activation_sparsity = 0.0f;            // the level a gate-first model runs at; 0 otherwise
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<const Model> model, const SessionParams& params) {
    if (!model) return Error{"Session::create: no model"};
    const int32_t n_ctx_train = model->info().n_ctx_train;
    const int32_t n_ctx = params.n_ctx > 0 ? params.n_ctx : n_ctx_train;
    if (params.n_ctx < 0 || n_ctx > (1 << 20))
        return Error{"context size " + std::to_string(params.n_ctx) + " is out of range (0 = the model's " +
                     std::to_string(n_ctx_train) + ", up to 1048576)"};
    if (params.n_batch <= 0 || params.n_batch > 4096)
        return Error{"batch size " + std::to_string(params.n_batch) + " is out of range (1..4096)"};
    if (params.n_threads < 0 || params.n_threads > 1024)
        return Error{"thread count " + std::to_string(params.n_threads) + " is out of range (0 = all, up to 1024)"};
    const int32_t n_threads = params.n_threads > 0 ? params.n_threads : tensor::default_thread_count();
    const std::optional<int> gpu = gpu_index(params.device);
    if (params.device != "cpu" && params.device != "sim" && !gpu)
        return Error{"device '" + params.device + "' is not one of cpu, sim, gpu, gpu:N"};
    const model::HParams& hp = model->impl().arch->hparams();
    if (params.activation_sparsity) {
        const float s = *params.activation_sparsity;
        if (!hp.gate_first)
            return Error{"activation sparsity " + std::to_string(s) + " for a session: " + model->info().path +
                         " was loaded without activation sparsity, whose layout of the weights it needs (load it with "
                         "ModelParams::activation_sparsity)"};
        if (!(s > 0.0f && s <= 0.95f))
            return Error{"activation sparsity " + std::to_string(s) + " for a session is outside (0, 0.95]; off (0) "
                         "needs the model loaded without it"};
    }
    if (!params.layer_sparsity.empty()) {
        if (!hp.gate_first)
            return Error{"per-layer activation sparsity for a session: " + model->info().path +
                         " was loaded without activation sparsity, whose layout of the weights it needs (load it with "
                         "ModelParams::activation_sparsity)"};
        if (params.layer_sparsity.size() != size_t(hp.n_layer))
            return Error{"per-layer activation sparsity for a session has " + std::to_string(params.layer_sparsity.size()) +
                         " shares, and the model " + std::to_string(hp.n_layer) + " layers"};
        for (float s : params.layer_sparsity)
            if (!(s >= 0.0f && s <= 0.95f))
                return Error{"per-layer activation sparsity " + std::to_string(s) + " for a session is outside 0 to 0.95"};
    }
    const float level = params.activation_sparsity.value_or(hp.activation_sparsity);
    try {
        auto impl = std::make_unique<Impl>(std::move(model), n_ctx, std::min(params.n_batch, n_ctx), n_threads);
        // Each layer's share of skipped neurons, decided here once for the thresholds and the device.
        const std::vector<float> levels = params.layer_sparsity.empty() ? impl->arch.layer_levels(level) : params.layer_sparsity;
        impl->activation_sparsity =
            params.layer_sparsity.empty() ? level : float(std::accumulate(levels.begin(), levels.end(), 0.0) / double(levels.size()));
        impl->exec.set_sparse_lm_head(impl->arch.lm_head_profiler());
        if (hp.gate_first) impl->exec.set_gate_thresholds(impl->arch.gate_thresholds(levels));
        if (hp.sparse_ffn_input || hp.sparse_attn_input) impl->exec.set_input_sparsity(impl->arch.input_sparsity(levels));
        if (const model::ExpertResidency* r = impl->arch.expert_residency()) impl->exec.set_experts_on_demand(&r->on_demand);
        if (params.device != "cpu") {
            std::unique_ptr<backend::Device> device = gpu ? backend::make_gpu_device(*gpu, params.device_budget_bytes)
                                                          : backend::make_sim_device(params.device_budget_bytes, &impl->scratch.pool);
            impl->placement = std::make_unique<DevicePlacement>(std::move(device),
                                                                impl->arch, impl->model->info().path, n_ctx,
                                                                device_margin_bytes(impl->arch.hparams(), n_ctx, impl->scratch),
                                                                params.gpu_index_path,
                                                                params.reset_gpu_index, params.disable_gpu_index, levels);
            impl->exec.set_plan(impl->placement->plan(params.device_budget_bytes, impl->kv), &impl->placement->device());
        }
        return std::unique_ptr<Session>(new Session(std::move(impl)));
    } catch (const std::bad_alloc&) {
        return Error{"out of memory allocating a context of " + std::to_string(n_ctx) + " tokens"};
    } catch (const EngineError& e) {
        return e.error();
    }
}

Status Session::evaluate(std::span<const int32_t> tokens, bool logits_all) {
    impl_->cancel_flag.store(false);
    try {
        if (!impl_->evaluate(tokens, logits_all)) return Error{"evaluation cancelled"};
        return Ok{};
    } catch (const EngineError& e) {
        return e.error();
    }
}

std::span<const float> Session::logits(int32_t i) const {
    const size_t n_vocab = impl_->logits.size();
    if (i < 0) return impl_->logits;
    if (i >= impl_->n_all_logits) return {};
    return {impl_->all_logits.data() + size_t(i) * n_vocab, n_vocab};
}

Result<GenerateResult> Session::generate(std::span<const int32_t> prompt, const GenerateParams& params,
                                         const TokenCallback& on_token) {
    Impl& s = *impl_;
    s.cancel_flag.store(false);
    s.timings = {};
    const auto start = Clock::now();
    const int64_t lm_head_rows = s.exec.lm_head_rows(), lm_head_tokens = s.exec.lm_head_tokens();
    GenerateResult result;
    try {
        if (prompt.empty() && s.kv.n_past() == 0) fail("empty prompt: there is nothing to continue from");
        if (!prompt.empty()) {
            if (!s.evaluate(prompt, false)) {
                result.stop_reason = StopReason::Cancelled;
                return result;
            }
            s.timings.n_prompt = int32_t(prompt.size());
            s.timings.prompt_ms = ms_since(start);
        }
        sampling::Sampler sampler(params.sampling, s.arch.hparams().n_vocab);
        // The repeat penalty looks back over the context, not only this call's prompt: a prompt
        // that continues cached text samples as the whole text would.
        const size_t back = std::min(s.context.size(), size_t(std::max(params.sampling.repeat_last_n, 0)));
        for (size_t i = s.context.size() - back; i < s.context.size(); ++i) sampler.accept(s.context[i]);
        tokenizer::StreamDecoder decoder(*s.model->impl().tokenizer);
        const Model& model = *s.model;
        // No more than the context can hold, whatever was asked.
        if (params.n_predict > 0) result.tokens.reserve(size_t(std::min<int64_t>(params.n_predict, s.kv.free_cells())));
        const auto gen_start = Clock::now();

        for (;;) {
            if (params.n_predict >= 0 && int32_t(result.tokens.size()) >= params.n_predict) {
                result.stop_reason = StopReason::MaxTokens;
                break;
            }
            if (s.cancel_flag.load(std::memory_order_relaxed)) {
                result.stop_reason = StopReason::Cancelled;
                break;
            }
            const int32_t token = sampler.sample(s.logits);
            sampler.accept(token);
            if (!params.ignore_eos && model.is_end_of_generation(token)) {
                result.stop_reason = StopReason::EndOfGeneration;
                break;
            }
            if (s.kv.free_cells() == 0) {
                result.stop_reason = StopReason::ContextFull;
                break;
            }
            result.tokens.push_back(token);
            if (result.tokens.size() == 1) s.timings.first_token_ms = ms_since(start);
            // The token is shown before it is evaluated, so text streams one forward pass sooner;
            // it is evaluated even when the caller stops, so the cache holds everything shown.
            const std::string text = decoder.push(token);
            const bool go_on = !on_token || on_token(TokenEvent{token, text, s.kv.n_past() + 1});
            const int32_t one[1] = {token};
            s.arch.forward(one, 1, s.kv, s.exec, s.logits.data(), false);
            s.context.push_back(token);
            if (!go_on) {
                result.stop_reason = StopReason::CallbackStopped;
                break;
            }
        }
        s.timings.n_generated = int32_t(result.tokens.size());
        s.timings.generate_ms = ms_since(gen_start);
        s.timings.lm_head_rows = s.exec.lm_head_rows() - lm_head_rows;
        s.timings.lm_head_tokens = s.exec.lm_head_tokens() - lm_head_tokens;
        const std::string rest = decoder.flush();
        if (on_token && !rest.empty() && !result.tokens.empty())
            on_token(TokenEvent{result.tokens.back(), rest, s.kv.n_past()});
        return result;
    } catch (const EngineError& e) {
        return e.error();
    }
}

void Session::cancel() { impl_->cancel_flag.store(true); }
int32_t Session::n_past() const { return impl_->kv.n_past(); }
int32_t Session::n_ctx() const { return impl_->kv.n_ctx(); }
void Session::truncate(int32_t n_keep) {
    impl_->kv.truncate(n_keep);
    impl_->context.resize(size_t(impl_->kv.n_past()));
}
Status Session::set_device_budget(uint64_t bytes) {
    if (!impl_->placement) return Error{"this session has no device to re-plan"};
    // A mixture of experts: the experts used most so far go to the device first.
    std::vector<std::vector<int64_t>> uses;
    for (const auto& l : impl_->scratch.expert_stats) uses.push_back(l.expert_tokens);
    impl_->placement->set_expert_uses(std::move(uses), expert_neuron_fires());
    try {
        impl_->exec.set_plan(impl_->placement->plan(bytes, impl_->kv), &impl_->placement->device());
        return Ok{};
    } catch (const EngineError& e) {
        return e.error();
    }
}

void Session::set_intermediate_callback(IntermediateCallback callback) {
    impl_->exec.set_intermediate_callback(std::move(callback));
}

DeviceReport Session::device_report() const {
    if (impl_->placement) return impl_->placement->report();
    DeviceReport r;
    r.device = "cpu";
    return r;
}

std::vector<std::vector<int32_t>> Session::hot_neurons() const {
    if (impl_->placement) return impl_->placement->hot();
    return std::vector<std::vector<int32_t>>(size_t(impl_->arch.hparams().n_layer));
}

void Session::clear() {
    impl_->kv.clear();
    impl_->context.clear();
    if (impl_->scratch.sparse)
        for (auto& l : impl_->scratch.sparse->stats) l = {};
    for (auto& l : impl_->scratch.expert_stats) {
        const size_t n_expert = l.expert_tokens.size(), n_neurons = l.neuron_fires.size();
        l = {};
        l.expert_tokens.assign(n_expert, 0);
        l.neuron_fires.assign(n_neurons, 0);
    }
}
const Timings& Session::timings() const { return impl_->timings; }

float Session::activation_sparsity() const { return impl_->activation_sparsity; }

std::vector<LayerSparsity> Session::layer_sparsity() const {
    std::vector<LayerSparsity> out;
    const model::HParams& hp = impl_->arch.hparams();
    // A mixture of experts: the neurons its routed experts computed, of all its experts' neurons.
    for (const auto& l : impl_->scratch.expert_stats)
        out.push_back(LayerSparsity{l.tokens, l.active, l.active_on_device, hp.n_expert * hp.n_ff, l.bytes_read,
                                    l.bytes_read_on_device, 0.0, l.ffn_ms, l.expert_tokens});
    if (!impl_->scratch.sparse) return out;
    for (const auto& l : impl_->scratch.sparse->stats)
        out.push_back(LayerSparsity{l.tokens, l.active, l.active_on_device, impl_->arch.hparams().n_ff, l.bytes_read,
                                    l.bytes_read_on_device, l.predictor_ms, l.ffn_ms, {}, l.attention_bytes_read});
    return out;
}
std::vector<std::vector<uint32_t>> Session::expert_neuron_fires() const {
    std::vector<std::vector<uint32_t>> out;
    for (const auto& l : impl_->scratch.expert_stats) out.push_back(l.neuron_fires);
    return out;
}

const Model& Session::model() const { return *impl_->model; }

}  // namespace ember
