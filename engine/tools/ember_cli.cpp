// ember-cli: generate text from a prompt, headless, with the flags users know from llama.cpp's
// and PowerInfer's `main`. stdout carries exactly the prompt followed by the generated text;
// everything else goes to stderr.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include "common/byte_size.h"
#include "ember/model.h"
#include "ember/session.h"
#include "tools/arg_parse.h"
#include "tools/ffn_act_option.h"
#include "tools/device_options.h"
#include "tools/sparsity_options.h"
#include "tools/intermediate_dump.h"

namespace {

using ember::tools::next_value;
using ember::tools::parse_float;
using ember::tools::parse_int;
using ember::tools::UsageError;
using ember::tools::BudgetArg;
using ember::tools::budget_bytes;
using ember::tools::parse_budget;
using ember::tools::print_gpus;
using ember::tools::kSparsityUsage;
using ember::tools::SparsityArgs;
using ember::tools::parse_ffn_act;

struct Options {
    std::string model_path;
    std::string prompt;
    bool have_prompt = false;
    int32_t n_predict = -1;
    int32_t n_threads = 0;
    int32_t n_ctx = 512;
    int32_t n_batch = 64;
    bool ignore_eos = false;
    long long seed = -1;
    ember::SamplingParams sampling;
    ember::FfnActivation ffn_act = ember::FfnActivation::Auto;
    std::optional<float> sparse_threshold;
    SparsityArgs sparsity;
    bool stats = false;
    bool tokenize = false;
    bool use_mmap = false;
    std::optional<uint64_t> expert_memory;
    bool experts_by_neuron = false;
    std::string device = "cpu";
    std::optional<BudgetArg> vram_budget;
    bool reset_gpu_index = false;
    bool disable_gpu_index = false;
    bool sparse_lm_head = false;
    std::vector<ember::tools::DumpRequest> dumps;
};

const std::string kUsage = std::string(
    "usage: ember-cli -m MODEL.gguf (-p PROMPT | -f FILE) [options]\n"
    "  -m, --model PATH         GGUF model file\n"
    "  -p, --prompt TEXT        prompt text\n"
    "  -f, --file PATH          read the prompt from a file\n"
    "  -n, --n-predict N        tokens to generate (-1: until end of text or a full context; default -1)\n"
    "  -t, --threads N          CPU threads (default: all available)\n"
    "  -c, --ctx-size N         context length in tokens (0: the model's; default 512)\n"
    "  -b, --batch-size N       prompt tokens evaluated together (default 64)\n"
    "  --temp T                 temperature, 0 = greedy (default 0.8)\n"
    "  --top-k N                top-k, 0 = off (default 40)\n"
    "  --top-p P                top-p, 1 = off (default 0.95)\n"
    "  --min-p P                min-p, 0 = off (default 0.05)\n"
    "  --repeat-penalty P       repetition penalty, 1 = off (default 1.1)\n"
    "  --repeat-last-n N        tokens the penalty looks back over (default 64)\n"
    "  --seed N                 RNG seed, -1 = random (default -1)\n"
    "  --ignore-eos             keep generating past the end-of-text token\n"
    "  --ffn-act relu|silu      FFN activation for dense llama files, which do not record it\n"
    "                           (default: ReLU when activation/ statistics lie beside the file\n"
    "                           or the name says ReLU/ProSparse, else SiLU)\n"
    "  --sparse-threshold T     PowerInfer files: predictor score at or above which a neuron is computed\n"
    "                           (default: LLAMA_SPARSE_PRED_THRESHOLD, else the file's, else 0)\n"
    ) + kSparsityUsage + (
    "  --stats                  sparse models: per-layer share of active neurons on stderr at the end\n"
    "  --tokenize               print the ids the prompt is fed as (BOS included where the vocabulary\n"
    "                           adds it) as one JSON array on stdout, then exit\n"
    "  --mmap                   map the model file instead of reading it into memory\n"
    "  --expert-memory GIB      a mixture of experts: keep only the experts used most within GIB in\n"
    "                           memory, read the others from the file when routed (Linux)\n"
    "  --experts-by-neuron      SmallThinker files in upstream's layout: lay the experts' down\n"
    "                           projections out by neuron at load (PowerInfer's layout), so a device\n"
    "                           holds single neurons and the CPU reads fired neurons' rows only\n"
    "  --device cpu|gpu|gpu:N|sim  where the placement puts what fits the budget: a sparse model's dense\n"
    "                           parts and hot neurons, a dense model's first layers (gpu: the first\n"
    "                           usable GPU; sim: a host-memory stand-in device)\n"
    "  --vram-budget GIB|N%     device memory budget, in GiB or as a share of the model's weights\n"
    "                           (default for a GPU: its free memory; needed with --device sim)\n"
    "  --list-gpus              the GPUs this build can use, or why none, then exit\n"
    "  --reset-gpu-index        rebuild <model>.generated.gpuidx even if it matches\n"
    "  --disable-gpu-index      keep every FFN neuron on the CPU\n"
    "  --sparse-lm-head         a SmallThinker file's lm_head_profiler picks the LM head rows each token\n"
    "                           computes; the other logits are 0 (changes the output; off by default)\n"
    "  --dump NAME[@LAYER] DIR  write intermediate NAME (attn_norm, q, k, v, kqv_out, attn_out, ffn_inp,\n"
    "                           ffn_norm, ffn_gate, ffn_up, ffn_act, ffn_out, l_out, result_norm,\n"
    "                           result_output) of LAYER, or of every layer, to DIR as raw f32 + JSON;\n"
    "                           repeatable. Steps inside a device's attention sub-layer are not seen\n");

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-m" || a == "--model") {
            o.model_path = next_value(argc, argv, i);
        } else if (a == "-p" || a == "--prompt") {
            o.prompt = next_value(argc, argv, i);
            o.have_prompt = true;
        } else if (a == "-f" || a == "--file") {
            const std::string path = next_value(argc, argv, i);
            std::ifstream in(path, std::ios::binary);
            if (!in) throw UsageError(a + ": cannot read prompt file '" + path + "'");
            std::ostringstream ss;
            ss << in.rdbuf();
            o.prompt = ss.str();
            o.have_prompt = true;
        } else if (a == "-n" || a == "--n-predict") {
            o.n_predict = int32_t(parse_int(a, next_value(argc, argv, i), -1, 1 << 24));
        } else if (a == "-t" || a == "--threads") {
            o.n_threads = int32_t(parse_int(a, next_value(argc, argv, i), 1, 1024));
        } else if (a == "-c" || a == "--ctx-size") {
            o.n_ctx = int32_t(parse_int(a, next_value(argc, argv, i), 0, 1 << 20));
        } else if (a == "-b" || a == "--batch-size") {
            o.n_batch = int32_t(parse_int(a, next_value(argc, argv, i), 1, 4096));
        } else if (a == "--temp") {
            o.sampling.temperature = parse_float(a, next_value(argc, argv, i));
        } else if (a == "--top-k") {
            o.sampling.top_k = int32_t(parse_int(a, next_value(argc, argv, i), 0, 1 << 24));
        } else if (a == "--top-p") {
            o.sampling.top_p = parse_float(a, next_value(argc, argv, i));
        } else if (a == "--min-p") {
            o.sampling.min_p = parse_float(a, next_value(argc, argv, i));
        } else if (a == "--repeat-penalty") {
            o.sampling.repeat_penalty = parse_float(a, next_value(argc, argv, i));
        } else if (a == "--repeat-last-n") {
            o.sampling.repeat_last_n = int32_t(parse_int(a, next_value(argc, argv, i), 0, 1 << 20));
        } else if (a == "--seed") {
            o.seed = parse_int(a, next_value(argc, argv, i), -1, (1ll << 62));
        } else if (a == "--ignore-eos") {
            o.ignore_eos = true;
        } else if (a == "--ffn-act") {
            o.ffn_act = parse_ffn_act(a, next_value(argc, argv, i));
        } else if (a == "--sparse-threshold") {
            o.sparse_threshold = parse_float(a, next_value(argc, argv, i));
        } else if (o.sparsity.parse(a, argc, argv, i)) {
        } else if (a == "--stats") {
            o.stats = true;
        } else if (a == "--tokenize") {
            o.tokenize = true;
        } else if (a == "--device") {
            o.device = next_value(argc, argv, i);
        } else if (a == "--vram-budget") {
            o.vram_budget = parse_budget(a, next_value(argc, argv, i));
        } else if (a == "--list-gpus") {
            print_gpus(stdout);
            std::exit(0);
        } else if (a == "--reset-gpu-index") {
            o.reset_gpu_index = true;
        } else if (a == "--disable-gpu-index") {
            o.disable_gpu_index = true;
        } else if (a == "--sparse-lm-head") {
            o.sparse_lm_head = true;
        } else if (a == "--dump") {
            const std::string spec = next_value(argc, argv, i);
            o.dumps.push_back(ember::tools::parse_dump(spec, next_value(argc, argv, i)));
        } else if (a == "--mmap") {
            o.use_mmap = true;
        } else if (a == "--expert-memory") {
            o.expert_memory = ember::tools::parse_gib(a, next_value(argc, argv, i));
        } else if (a == "--experts-by-neuron") {
            o.experts_by_neuron = true;
        } else if (a == "-h" || a == "--help") {
            std::fputs(kUsage.c_str(), stdout);
            std::exit(0);
        } else {
            throw UsageError("unknown argument '" + a + "'");
        }
    }
    if (o.model_path.empty()) throw UsageError("no model: give -m MODEL.gguf");
    if (!o.have_prompt) throw UsageError("no prompt: give -p TEXT or -f FILE");
    if (o.prompt.empty()) throw UsageError("empty prompt: the prompt text must not be empty");
    if (o.device == "sim" && !o.vram_budget) throw UsageError("--device sim needs --vram-budget GIB (or a share: 50%)");
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    try {
        opt = parse(argc, argv);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "ember-cli: %s\n%s", e.what(), kUsage.c_str());
        return 2;
    }
    opt.sampling.seed = opt.seed >= 0 ? uint64_t(opt.seed) : uint64_t(std::random_device{}());

    ember::ModelParams mp;
    mp.ffn_activation = opt.ffn_act;
    mp.sparse_threshold = opt.sparse_threshold;
    opt.sparsity.apply(mp);
    mp.use_mmap = opt.use_mmap;
    mp.expert_memory_bytes = opt.expert_memory;
    mp.experts_by_neuron = opt.experts_by_neuron;
    mp.sparse_lm_head = opt.sparse_lm_head;
    auto model = ember::Model::load(opt.model_path, mp);
    if (!model) {
        std::fprintf(stderr, "ember-cli: %s\n", model.error().message.c_str());
        return 1;
    }
    if (opt.tokenize) {
        // What the model would be fed for the prompt, as upstream's `llama-tokenize --ids` prints it.
        const std::vector<int32_t> ids = (*model)->tokenize(opt.prompt, (*model)->add_bos());
        std::string line = "[";
        for (size_t i = 0; i < ids.size(); ++i) line += (i ? ", " : "") + std::to_string(ids[i]);
        std::printf("%s]\n", line.c_str());
        return 0;
    }
    const ember::ModelInfo& info = (*model)->info();
    std::fprintf(stderr, "ember-cli: %s: %s, %d layers, %d embd, %s weights, FFN %s (%s)", info.path.c_str(),
                 info.architecture.c_str(), info.n_layer, info.n_embd, info.weight_type.c_str(),
                 info.ffn_activation.c_str(), info.ffn_activation_source.c_str());
    if (info.activation_sparsity > 0.0f)
        std::fprintf(stderr, ", activation sparsity %g (%s)", info.activation_sparsity, info.sparsity_file.c_str());
    else if (info.sparse)
        std::fprintf(stderr, ", sparse (predictor threshold %g)", info.sparse_threshold);
    std::fputc('\n', stderr);
    if (opt.expert_memory)
        std::fprintf(stderr, "ember-cli: experts: %s of %s in memory (%s); the rest read from the file when routed\n",
                     ember::byte_size(info.expert_bytes_in_memory).c_str(), ember::byte_size(info.expert_bytes).c_str(),
                     info.expert_memory_order.c_str());

    ember::SessionParams sp;
    sp.n_ctx = opt.n_ctx;
    sp.n_batch = opt.n_batch;
    sp.n_threads = opt.n_threads;
    sp.device = opt.device;
    try {
        sp.device_budget_bytes = budget_bytes(opt.device, opt.vram_budget, info.weight_bytes);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "ember-cli: %s\n", e.what());
        return 2;
    }
    sp.reset_gpu_index = opt.reset_gpu_index;
    sp.disable_gpu_index = opt.disable_gpu_index;
    auto session = ember::Session::create(*model, sp);
    if (!session) {
        std::fprintf(stderr, "ember-cli: %s\n", session.error().message.c_str());
        return 1;
    }

    if (!opt.dumps.empty()) (*session)->set_intermediate_callback(ember::tools::dump_writer(opt.dumps));

    const std::vector<int32_t> prompt = (*model)->tokenize(opt.prompt, (*model)->add_bos());
    std::fwrite(opt.prompt.data(), 1, opt.prompt.size(), stdout);
    std::fflush(stdout);

    ember::GenerateParams gp;
    gp.n_predict = opt.n_predict;
    gp.ignore_eos = opt.ignore_eos;
    gp.sampling = opt.sampling;
    auto result = (*session)->generate(prompt, gp, [](const ember::TokenEvent& ev) {
        std::fwrite(ev.text.data(), 1, ev.text.size(), stdout);
        std::fflush(stdout);
        return true;
    });
    std::fputc('\n', stderr);
    if (!result) {
        std::fprintf(stderr, "ember-cli: %s\n", result.error().message.c_str());
        return 1;
    }
    const ember::Timings& t = (*session)->timings();
    auto rate = [](int32_t n, double ms) { return ms > 0 ? 1000.0 * n / ms : 0.0; };
    std::fprintf(stderr, "prompt eval: %d tokens, %.2f tok/s\n", t.n_prompt, rate(t.n_prompt, t.prompt_ms));
    std::fprintf(stderr, "eval: %d tokens, %.2f tok/s\n", t.n_generated, rate(t.n_generated, t.generate_ms));
    std::fprintf(stderr, "stop: %s\n", ember::stop_reason_name(result->stop_reason));
    if (opt.stats) {
        const auto layers = (*session)->layer_sparsity();
        const ember::ModelInfo& info = (*model)->info();
        if (info.n_expert > 0)
            std::fprintf(stderr, "stats: mixture of experts, %d of %d experts per token and layer; neurons computed of all "
                                 "the experts' (one token at a time: those whose gate fired)\n",
                         info.n_expert_used, info.n_expert);
        else if (layers.empty())
            std::fprintf(stderr, "stats: dense model, every FFN neuron is computed\n");
        double active = 0, total = 0, read = 0, read_on_device = 0, attention_read = 0;
        for (size_t il = 0; il < layers.size(); ++il) {
            const auto& l = layers[il];
            const double share = l.tokens ? double(l.active) / double(l.tokens * l.n_ff) : 0.0;
            const double device_share = l.active ? double(l.active_on_device) / double(l.active) : 0.0;
            std::fprintf(stderr, "layer %2zu: %5.1f %% of %d neurons active, %5.1f %% of those on the device\n", il,
                         100.0 * share, l.n_ff, 100.0 * device_share);
            active += double(l.active);
            total += double(l.tokens) * l.n_ff;
            read += double(l.bytes_read);
            read_on_device += double(l.bytes_read_on_device);
            attention_read += double(l.attention_bytes_read);
        }
        if (total > 0)
            std::fprintf(stderr, "mean: %.1f %% active; predictor and FFN rows read: %.1f MiB, %.1f MiB of them on the device\n",
                         100.0 * active / total, read / (1 << 20), read_on_device / (1 << 20));
        if (attention_read > 0)
            std::fprintf(stderr, "attention rows of kept inputs read: %.1f MiB\n", attention_read / (1 << 20));
        if (t.lm_head_tokens > 0)
            std::fprintf(stderr, "LM head: %.1f %% of %d rows computed per token\n",
                         100.0 * double(t.lm_head_rows) / (double(t.lm_head_tokens) * info.n_vocab), info.n_vocab);
        const ember::DeviceReport d = (*session)->device_report();
        if (d.device != "cpu")
            std::fprintf(stderr, "device %s: %lld hot neurons, %.1f of %.1f MiB used, %.1f MiB uploaded%s%s\n",
                         d.device.c_str(), (long long)d.hot_neurons, double(d.used_bytes) / (1 << 20),
                         double(d.budget_bytes) / (1 << 20), double(d.bytes_uploaded) / (1 << 20),
                         d.note.empty() ? "" : "; ", d.note.c_str());
        if (d.device != "cpu" && !d.dense.empty()) std::fprintf(stderr, "dense parts: %s\n", d.dense.c_str());
        if (d.device != "cpu" && !d.gpu_index.empty()) std::fprintf(stderr, "GPU index: %s\n", d.gpu_index.c_str());
        if (d.device != "cpu" && !d.expert_profile.empty()) std::fprintf(stderr, "experts: %s\n", d.expert_profile.c_str());
    }
    return 0;
}
