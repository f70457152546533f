#include "ember/model.h"

#include "common/error.h"
#include "model/model_impl.h"
#include "sparse/sparsity_file.h"

namespace ember {
namespace {

ModelInfo describe(const gguf::File& file, const model::Architecture& arch) {
    const model::HParams& hp = arch.hparams();
    ModelInfo info;
    static_cast<ModelShape&>(info) = hp;
    info.path = file.path();
    info.architecture = hp.arch;
    info.name = file.get_string("general.name").value_or("");
    info.weight_type = arch.weight_type();
    // Only a hint for the app's prompt format: a value of another type is ignored, not an error.
    if (const gguf::Value* t = file.find("tokenizer.chat_template"); t && t->type == gguf::ValueType::String)
        info.chat_template = std::get<std::string>(t->data);
    info.ffn_activation = model::ffn_gate_name(hp.ffn_gate);
    info.ffn_activation_source = hp.ffn_gate_source;
    info.powerinfer_file = file.magic() == "PWRI";
    info.sparse = hp.sparse();
    info.sparse_threshold = hp.sparse_threshold;
    info.activation_sparsity = hp.activation_sparsity;
    info.activation_sparsity_possible = hp.gate_first_possible;
    info.n_params = arch.n_params();
    info.weight_bytes = arch.weight_bytes();
    info.bytes_per_token = arch.bytes_per_token();
    info.ffn_bytes = arch.ffn_bytes();
    info.predictor_bytes = arch.predictor_bytes();
    info.attention_by_input_bytes = arch.attention_by_input_bytes();
    info.ffn_matrices = arch.ffn_matrices();
    info.n_expert = hp.n_expert;
    info.n_expert_used = hp.n_expert_used;
    if (const model::ExpertResidency* r = arch.expert_residency()) {
        info.expert_bytes_in_memory = r->bytes_in_memory;
        info.expert_bytes = r->bytes;
        info.expert_memory_order = r->order;
    }
    info.kv_bytes_per_token = 2 * model::kv_cache_half_bytes(hp, 1);
    return info;
}

}  // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

Result<std::shared_ptr<Model>> Model::load(const std::string& path, const ModelParams& params,
                                           const LoadProgress& progress) {
    try {
        auto impl = std::make_unique<Impl>();
        // Reading the file is nearly all of the work: it reports 0..0.95, binding the rest.
        gguf::MappedFile::Progress reading;
        if (progress) reading = [&](float f) { return progress(0.95f * f); };
        // Experts kept partly on disk: a map, with everything else read into memory.
        const bool experts_on_disk = params.expert_memory_bytes.has_value();
        if (params.experts_by_neuron && (experts_on_disk || params.use_mmap))
            fail(path + ": laying experts out by neuron rewrites them in memory, which a mapped file (" +
                 (params.use_mmap ? std::string("--mmap") : std::string("--expert-memory")) + ") keeps as stored; choose one");
        impl->file = gguf::File::open(
            path, params.use_mmap || experts_on_disk ? gguf::MappedFile::Mode::Map : gguf::MappedFile::Mode::Copy, reading);
        if (experts_on_disk) model::keep_all_but_experts_in_memory(*impl->file, reading);
        if (progress && !progress(0.95f)) return Error{path + ": loading cancelled"};
        impl->tokenizer = tokenizer::Tokenizer::from_gguf(*impl->file);
        impl->arch = model::load_architecture(*impl->file, params);
        if (experts_on_disk && impl->arch->hparams().n_expert == 0)
            fail(path + ": has no experts to keep on disk (an expert memory budget applies to a mixture of experts)");
        if (params.sparse_lm_head && !impl->arch->lm_head_profiler())
            fail(path + ": no tensor lm_head_profiler.weight, which the sparse LM head needs");
        impl->file->seal();
        if (impl->tokenizer->n_vocab() != impl->arch->hparams().n_vocab)
            fail(path + ": tokenizer has " + std::to_string(impl->tokenizer->n_vocab()) + " tokens, the model " +
                 std::to_string(impl->arch->hparams().n_vocab));
        impl->info = describe(*impl->file, *impl->arch);
        if (params.activation_sparsity > 0.0f)
            impl->info.sparsity_file = params.sparsity_file.empty() ? sparse::default_sparsity_path(path) : params.sparsity_file;
        const tokenizer::Tokenizer& tok = *impl->tokenizer;
        if (tok.bos() >= 0) impl->info.bos_token = tok.piece(tok.bos());
        if (tok.eos() >= 0) impl->info.eos_token = tok.piece(tok.eos());
        for (int32_t id = 0; id < tok.n_vocab(); ++id)
            if (tok.token_type(id) == tokenizer::TokenType::Control && !tok.piece(id).empty())
                impl->info.control_pieces.push_back(tok.piece(id));
        if (progress && !progress(1.0f)) return Error{path + ": loading cancelled"};
        return std::shared_ptr<Model>(new Model(std::move(impl)));
    } catch (const EngineError& e) {
        return e.error();
    } catch (const std::bad_alloc&) {
        return Error{path + ": out of memory while loading"};
    }
}

const ModelInfo& Model::info() const { return impl_->info; }

std::vector<int32_t> Model::tokenize(std::string_view text, bool add_bos) const {
    return impl_->tokenizer->encode(text, add_bos);
}

std::vector<int32_t> Model::tokenize_markup(std::string_view text, bool add_bos) const {
    return impl_->tokenizer->encode_markup(text, add_bos);
}

std::string Model::token_text(int32_t token) const { return impl_->tokenizer->token_text(token); }
int32_t Model::bos() const { return impl_->tokenizer->bos(); }
int32_t Model::eos() const { return impl_->tokenizer->eos(); }
bool Model::add_bos() const { return impl_->tokenizer->add_bos(); }
bool Model::is_end_of_generation(int32_t token) const { return impl_->tokenizer->is_end_of_generation(token); }

}  // namespace ember
