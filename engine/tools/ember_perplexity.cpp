// ember-perplexity: the perplexity of a model on a text, computed exactly as llama.cpp's
// llama-perplexity computes it (tools/perplexity_chunks.h, tools/perplexity_math.h), so figures
// compare across Ember, llama.cpp and PowerInfer; and, against a saved base run, the KL divergence
// and top-token agreement that say what sparsity, quantization or a device cost a model.
// stdout carries the results (or one JSON object with --json); progress goes to stderr.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/model.h"
#include "ember/session.h"
#include "tools/arg_parse.h"
#include "tools/ffn_act_option.h"
#include "tools/device_options.h"
#include "tools/sparsity_options.h"
#include "tools/kl_base_file.h"
#include "tools/kl_divergence.h"
#include "tools/perplexity_chunks.h"
#include "tools/perplexity_math.h"
#include "tools/perplexity_report.h"

namespace {

using namespace ember::tools;

// Bad input (files, their contents): exit code 1. Usage errors are UsageError: exit code 2.
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Options {
    std::string model_path;
    std::string text_path;
    std::optional<int32_t> n_ctx;  // default 512; with --kl-divergence, the base's
    int32_t n_batch = 512;
    int32_t n_chunks = -1;  // -1: every chunk of the text
    int32_t n_threads = 0;
    ember::FfnActivation ffn_act = ember::FfnActivation::Auto;
    std::optional<float> sparse_threshold;
    SparsityArgs sparsity;
    bool use_mmap = false;
    std::string device = "cpu";
    std::optional<BudgetArg> vram_budget;
    bool reset_gpu_index = false;
    bool disable_gpu_index = false;
    std::string kl_base_path;
    bool kl_divergence = false;
    bool json = false;
};

const std::string kUsage = std::string(
    "usage: ember-perplexity -m MODEL.gguf -f TEXT [options]\n"
    "  -m, --model PATH         GGUF model file\n"
    "  -f, --file PATH          the text (not needed with --kl-divergence: the base holds its tokens)\n"
    "  -c, --ctx-size N         chunk length in tokens; the second half of each is scored (default 512;\n"
    "                           with --kl-divergence, the base's)\n"
    "  -b, --batch-size N       tokens evaluated together (default 512, at most the chunk length)\n"
    "  --chunks N               score only the first N chunks (default: all)\n"
    "  -t, --threads N          CPU threads (default: all available)\n"
    "  --ffn-act relu|silu      FFN activation for dense llama files, which do not record it\n"
    "  --sparse-threshold T     PowerInfer files: predictor score at or above which a neuron is computed\n"
    ) + kSparsityUsage + (
    "  --mmap                   map the model file instead of reading it into memory\n"
    "  --device cpu|gpu|gpu:N|sim  where the placement puts what fits the budget (as ember-cli)\n"
    "  --vram-budget GIB|N%     device memory budget (needed with --device sim)\n"
    "  --reset-gpu-index        rebuild <model>.generated.gpuidx even if it matches\n"
    "  --disable-gpu-index      keep every FFN neuron on the CPU\n"
    "  --kl-divergence-base FILE  write every scored position's log-probabilities to FILE (the base run)\n"
    "  --kl-divergence          read FILE instead and compare this run with the base: mean KL divergence,\n"
    "                           same top token, Δppl\n"
    "  --json                   one JSON object on stdout instead of the text report\n");

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-m" || a == "--model") o.model_path = next_value(argc, argv, i);
        else if (a == "-f" || a == "--file") o.text_path = next_value(argc, argv, i);
        else if (a == "-c" || a == "--ctx-size") o.n_ctx = int32_t(parse_int(a, next_value(argc, argv, i), 4, 1 << 20));
        else if (a == "-b" || a == "--batch-size") o.n_batch = int32_t(parse_int(a, next_value(argc, argv, i), 1, 4096));
        else if (a == "--chunks") o.n_chunks = int32_t(parse_int(a, next_value(argc, argv, i), 1, 1 << 30));
        else if (a == "-t" || a == "--threads") o.n_threads = int32_t(parse_int(a, next_value(argc, argv, i), 1, 1024));
        else if (a == "--ffn-act") o.ffn_act = parse_ffn_act(a, next_value(argc, argv, i));
        else if (a == "--sparse-threshold") o.sparse_threshold = parse_float(a, next_value(argc, argv, i));
        else if (o.sparsity.parse(a, argc, argv, i)) continue;
        else if (a == "--mmap") o.use_mmap = true;
        else if (a == "--device") o.device = next_value(argc, argv, i);
        else if (a == "--vram-budget") o.vram_budget = parse_budget(a, next_value(argc, argv, i));
        else if (a == "--reset-gpu-index") o.reset_gpu_index = true;
        else if (a == "--disable-gpu-index") o.disable_gpu_index = true;
        else if (a == "--kl-divergence-base") o.kl_base_path = next_value(argc, argv, i);
        else if (a == "--kl-divergence") o.kl_divergence = true;
        else if (a == "--json") o.json = true;
        else if (a == "-h" || a == "--help") {
            std::fputs(kUsage.c_str(), stdout);
            std::exit(0);
        } else throw UsageError("unknown argument '" + a + "'");
    }
    if (o.model_path.empty()) throw UsageError("no model: give -m MODEL.gguf");
    if (o.kl_divergence && o.kl_base_path.empty())
        throw UsageError("--kl-divergence needs --kl-divergence-base FILE, the base run to compare with");
    if (o.text_path.empty() && !o.kl_divergence) throw UsageError("no text: give -f TEXT");
    if (o.device == "sim" && !o.vram_budget) throw UsageError("--device sim needs --vram-budget GIB (or a share: 50%)");
    return o;
}

std::string read_text(const std::string& path) {
    std::optional<std::string> text = read_whole_file(path);
    if (!text) throw InputError(path + ": cannot read the text file");
    if (text->empty()) throw InputError(path + ": the text file is empty, there is nothing to score");
    return std::move(*text);
}

uint64_t vocab_hash(const ember::Model& model) {
    VocabHash h;
    for (int32_t t = 0; t < model.info().n_vocab; ++t) h.add(model.token_text(t));
    return h.value();
}

// The base must come from a model with this vocabulary and, when a text is given, from this text.
void check_base(const BaseFileReader& base, const ember::Model& model, const std::vector<int32_t>* text_tokens,
                const Options& opt) {
    const BaseHeader& h = base.header();
    const std::string& file = base.path();
    if (int64_t(h.n_vocab) != model.info().n_vocab)
        throw InputError(file + ": the base was made with a vocabulary of " + std::to_string(h.n_vocab) +
                         " tokens, " + opt.model_path + " has " + std::to_string(model.info().n_vocab));
    if (h.vocab_hash != vocab_hash(model))
        throw InputError(file + ": the base was made with another vocabulary of " + std::to_string(h.n_vocab) +
                         " tokens than " + opt.model_path + "'s (its token texts differ)");
    if (!text_tokens) return;
    if (text_tokens->size() < h.n_tokens)
        throw InputError(file + ": the base holds " + std::to_string(h.n_tokens) + " tokens, " + opt.text_path +
                         " tokenizes to only " + std::to_string(text_tokens->size()));
    for (size_t i = 0; i < h.n_tokens; ++i)
        if ((*text_tokens)[i] != base.tokens()[i])
            throw InputError(file + ": the base was made from another text than " + opt.text_path + ": token " +
                             std::to_string(i) + " is " + std::to_string(base.tokens()[i]) + " there, " +
                             std::to_string((*text_tokens)[i]) + " here");
}

int run(const Options& opt) {
    std::unique_ptr<BaseFileReader> base;
    if (opt.kl_divergence) {
        base = std::make_unique<BaseFileReader>(opt.kl_base_path);
        if (opt.n_ctx && uint32_t(*opt.n_ctx) != base->header().n_ctx)
            throw InputError(opt.kl_base_path + ": the base was made with -c " + std::to_string(base->header().n_ctx) +
                             ", this run asks for -c " + std::to_string(*opt.n_ctx));
    }
    const int32_t n_ctx = base ? int32_t(base->header().n_ctx) : opt.n_ctx.value_or(512);
    const std::string text = opt.text_path.empty() ? std::string() : read_text(opt.text_path);

    ember::ModelParams mp;
    mp.ffn_activation = opt.ffn_act;
    mp.sparse_threshold = opt.sparse_threshold;
    opt.sparsity.apply(mp);
    mp.use_mmap = opt.use_mmap;
    auto loaded = ember::Model::load(opt.model_path, mp);
    if (!loaded) throw InputError(loaded.error().message);
    const ember::Model& model = **loaded;
    const ember::ModelInfo& info = model.info();
    std::fprintf(stderr, "ember-perplexity: %s: %s, %d layers, %s weights, FFN %s%s\n", info.path.c_str(),
                 info.architecture.c_str(), info.n_layer, info.weight_type.c_str(), info.ffn_activation.c_str(),
                 info.sparse ? ", sparse" : "");
    if (n_ctx > info.n_ctx_train)
        std::fprintf(stderr, "ember-perplexity: warning: -c %d is beyond the model's training context of %d\n", n_ctx,
                     info.n_ctx_train);

    std::vector<int32_t> tokens;
    if (!text.empty()) tokens = model.tokenize(text, model.add_bos());
    if (base) {
        check_base(*base, model, text.empty() ? nullptr : &tokens, opt);
        tokens = base->tokens();
    } else if (tokens.size() < 2 * size_t(n_ctx)) {
        throw InputError(opt.text_path + ": " + std::to_string(tokens.size()) + " tokens, perplexity with -c " +
                         std::to_string(n_ctx) + " needs at least " + std::to_string(2 * n_ctx) +
                         " (two chunks)");
    }
    const int32_t n_chunk_max = int32_t(tokens.size() / size_t(n_ctx));
    const int32_t n_chunk = opt.n_chunks > 0 ? std::min(opt.n_chunks, n_chunk_max) : n_chunk_max;
    std::fprintf(stderr, "ember-perplexity: %zu tokens; %d chunks of %d, %d tokens scored in each\n", tokens.size(),
                 n_chunk, n_ctx, scored_per_chunk(n_ctx));

    ember::SessionParams sp;
    sp.n_ctx = n_ctx;
    sp.n_batch = std::min(opt.n_batch, n_ctx);
    sp.n_threads = opt.n_threads;
    sp.device = opt.device;
    sp.device_budget_bytes = budget_bytes(opt.device, opt.vram_budget, info.weight_bytes);
    sp.reset_gpu_index = opt.reset_gpu_index;
    sp.disable_gpu_index = opt.disable_gpu_index;
    auto session = ember::Session::create(*loaded, sp);
    if (!session) throw InputError(session.error().message);

    std::unique_ptr<BaseFileWriter> writer;
    if (!base && !opt.kl_base_path.empty()) {
        const BaseHeader h{uint32_t(info.n_vocab), vocab_hash(model), uint32_t(n_ctx), uint64_t(n_chunk) * n_ctx};
        writer = std::make_unique<BaseFileWriter>(opt.kl_base_path,
                                                  h, std::span<const int32_t>(tokens).first(h.n_tokens));
    }

    NllSums sums;
    KlSums kl;
    BaseRow base_row;
    std::FILE* running = opt.json ? stderr : stdout;  // the [i]ppl, values
    const auto start = std::chrono::steady_clock::now();
    for (int32_t c = 0; c < n_chunk; ++c) {
        const auto chunk = std::span<const int32_t>(tokens).subspan(size_t(c) * n_ctx, size_t(n_ctx));
        score_chunk(**session, chunk, sp.n_batch, [&](std::span<const float> logits, int32_t next) {
            if (writer) {
                const BaseRow row = make_base_row(logits, next);
                sums.add(row.nll);
                writer->write_row(row);
            } else {
                sums.add(token_nll(logits, next));
            }
            if (base) {
                base->read_row(base_row);
                add_kl_position(base_row, logits, next, kl);
            }
        });
        if (c == 0) {
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            std::fprintf(stderr, "ember-perplexity: %.2f seconds per chunk, about %.1f s for all\n", s, s * n_chunk);
        }
        std::fprintf(running, "[%d]%.4f,", c + 1, sums.ppl());
        std::fflush(running);
    }
    std::fputc('\n', running);
    if (writer) {
        writer->finish();
        std::fprintf(stderr, "ember-perplexity: base written to %s\n", opt.kl_base_path.c_str());
    }

    Report r;
    r.model = opt.model_path;
    r.text = opt.text_path;
    r.n_ctx = n_ctx;
    r.n_chunk = n_chunk;
    r.n_tokens = int64_t(tokens.size());
    r.sums = sums;
    if (base) {
        r.kl = kl;
        r.kl_base = opt.kl_base_path;
    }
    std::fputs((opt.json ? report_json(r) : report_text(r)).c_str(), stdout);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    try {
        opt = parse(argc, argv);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "ember-perplexity: %s\n%s", e.what(), kUsage.c_str());
        return 2;
    }
    try {
        return run(opt);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "ember-perplexity: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {  // InputError, BaseFileError, EvaluationError
        std::fprintf(stderr, "ember-perplexity: %s\n", e.what());
        return 1;
    }
}
