// ember-calibrate: runs a dense model over a calibration text and writes its activation-sparsity
// calibration (sparse/sparsity_file.h): per layer, magnitude histograms of the inputs of its
// linear layers and of the FFN's |act(gate)|, the thresholds of a ladder of sparsity levels, and
// each FFN neuron's firing frequency at every level. Two passes over the text: the first finds
// the thresholds, the second counts how often each neuron exceeds them. Then the perplexity of a
// held-out tail of the text at a few levels against the dense model, and how fast each level
// generates on this machine, kept in the file so that a user (or the app) can choose a level by
// its measured cost and gain.
// A mixture of experts gets its routing profile instead (sparse/expert_profile.h): one pass, the
// share of the text's tokens the router sends to each expert, by which a device holds the
// experts used most.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/utf8_path.h"
#include "ember/model.h"
#include "ember/session.h"
#include "sparse/expert_profile.h"
#include "sparse/sparsity_file.h"
#include "tools/arg_parse.h"
#include "tools/ffn_act_option.h"
#include "tools/kl_divergence.h"
#include "tools/perplexity_chunks.h"
#include "tools/perplexity_math.h"
#include "tools/sparsity_options.h"

namespace {

using namespace ember::tools;
using ember::sparse::SparsitySite;

struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Options {
    std::string model_path;
    std::string text_path;
    std::string out_path;
    int32_t n_ctx = 512;
    int32_t max_tokens = 32768;
    int32_t quality_tokens = 4096;
    int32_t speed_tokens = 32;
    int32_t cost_tokens = 0;
    int32_t n_threads = 0;
    ember::FfnActivation ffn_act = ember::FfnActivation::Auto;
    std::optional<ember::SparsityAllocation> allocation;
    bool progress = false;
};

// --progress: a line "progress DONE TOTAL" on stdout after each chunk, in tokens evaluated, for a
// program that runs this one (the app) to show how far it is.
struct Progress {
    bool on = false;
    uint64_t done = 0;
    uint64_t total = 0;

    void add(uint64_t tokens) {
        done += tokens;
        if (!on) return;
        std::printf("progress %llu %llu\n", (unsigned long long)done, (unsigned long long)total);
        std::fflush(stdout);
    }
};

const char* kUsage =
    "usage: ember-calibrate -m MODEL.gguf -f TEXT [options]\n"
    "  -m, --model PATH      a dense GGUF model (llama family, gated FFN), or a mixture of experts\n"
    "  -f, --file PATH       calibration text (plain UTF-8)\n"
    "  -o, --output PATH     where to write (default: MODEL without .gguf + .sparsity.gguf, where\n"
    "                        --activation-sparsity looks for it; a mixture of experts' routing\n"
    "                        profile: + .experts.gguf, where a device plan looks for it)\n"
    "  -c, --ctx-size N      tokens per chunk, each from an empty context (default 512)\n"
    "  --max-tokens N        calibrate on at most N tokens of the text (default 32768)\n"
    "  --quality-tokens N    hold the last N tokens of the text out (at most a quarter of it) and\n"
    "                        measure each level's perplexity on them (default 4096; 0: do not)\n"
    "  --speed-tokens N      with the quality, time N generated tokens at each level against the\n"
    "                        dense model (the fastest of three rounds; default 32; 0: do not)\n"
    "  --layer-cost-tokens N measure on the first N tokens of the text (whole chunks, at least one)\n"
    "                        what each layer's sparsity costs alone (the model's KL divergence from\n"
    "                        dense with only that layer sparse, at 25/50/75/90 %%, FFN inputs whole),\n"
    "                        which --sparsity-allocation measured spreads a level by (default 0: do not)\n"
    "  -t, --threads N       CPU threads (default: all available)\n"
    "  --ffn-act relu|silu   FFN activation for dense llama files, which do not record it\n"
    "  --sparsity-allocation uniform|greedy|measured\n"
    "                        how a level is spread over the layers, recorded as the model's default\n"
    "                        and measured (default: greedy for ReLU models, uniform otherwise, as\n"
    "                        BENCHMARKS.md measured them)\n"
    "  --progress            print \"progress DONE TOTAL\" (tokens evaluated) after each chunk\n";

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-m" || a == "--model") o.model_path = next_value(argc, argv, i);
        else if (a == "-f" || a == "--file") o.text_path = next_value(argc, argv, i);
        else if (a == "-o" || a == "--output") o.out_path = next_value(argc, argv, i);
        else if (a == "-c" || a == "--ctx-size") o.n_ctx = int32_t(parse_int(a, next_value(argc, argv, i), 8, 1 << 20));
        else if (a == "--max-tokens") o.max_tokens = int32_t(parse_int(a, next_value(argc, argv, i), 8, 1 << 30));
        else if (a == "--quality-tokens") o.quality_tokens = int32_t(parse_int(a, next_value(argc, argv, i), 0, 1 << 30));
        else if (a == "--layer-cost-tokens") o.cost_tokens = int32_t(parse_int(a, next_value(argc, argv, i), 0, 1 << 30));
        else if (a == "--speed-tokens") o.speed_tokens = int32_t(parse_int(a, next_value(argc, argv, i), 0, 1 << 20));
        else if (a == "-t" || a == "--threads") o.n_threads = int32_t(parse_int(a, next_value(argc, argv, i), 1, 1024));
        else if (a == "--ffn-act") o.ffn_act = parse_ffn_act(a, next_value(argc, argv, i));
        else if (a == "--sparsity-allocation") o.allocation = parse_allocation(a, next_value(argc, argv, i));
        else if (a == "--progress") o.progress = true;
        else if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        } else throw UsageError("unknown argument '" + a + "'");
    }
    if (o.model_path.empty()) throw UsageError("no model: give -m MODEL.gguf");
    if (o.text_path.empty()) throw UsageError("no calibration text: give -f TEXT");
    if (o.allocation == ember::SparsityAllocation::Measured && o.cost_tokens == 0)
        throw UsageError("--sparsity-allocation measured needs the layers' costs: give --layer-cost-tokens N");
    return o;
}

std::string read_text(const std::string& path) {
    std::optional<std::string> text = read_whole_file(path);
    if (!text) throw InputError(path + ": cannot read the calibration text");
    return std::move(*text);
}

// The input of a linear layer each named intermediate is (ember/session.h), or -1.
int site_of(std::string_view name) {
    if (name == "attn_norm") return int(SparsitySite::AttnIn);
    if (name == "kqv_out") return int(SparsitySite::AttnOut);
    if (name == "ffn_norm") return int(SparsitySite::FfnIn);
    if (name == "ffn_gate") return int(SparsitySite::FfnAct);
    return -1;
}

uint64_t file_bytes(const std::string& path) {
    std::error_code ec;
    const uint64_t bytes = std::filesystem::file_size(ember::utf8_path(path), ec);
    if (ec) throw InputError(path + ": " + ec.message());
    return bytes;
}

// layer_sparsity: each layer's own share instead of a level (SessionParams::layer_sparsity).
std::unique_ptr<ember::Session> new_session(const std::shared_ptr<ember::Model>& model, const Options& opt,
                                            std::optional<float> activation_sparsity = std::nullopt,
                                            std::vector<float> layer_sparsity = {}) {
    ember::SessionParams sp;
    sp.n_ctx = opt.n_ctx;
    sp.n_threads = opt.n_threads;
    sp.activation_sparsity = activation_sparsity;
    sp.layer_sparsity = std::move(layer_sparsity);
    auto created = ember::Session::create(model, sp);
    if (!created) throw InputError(created.error().message);
    return std::move(*created);
}

constexpr float kQualityLevels[] = {0.25f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f};

// Perplexity of the held-out tokens in chunks of n_ctx (llama.cpp's procedure), and each scored
// position's most likely token.
struct Scores {
    NllSums sums;
    std::vector<int32_t> top;
};

// Scores the text's chunks (llama.cpp's positions), handing each scored position on.
void score_text(ember::Session& session, std::span<const int32_t> text, const Options& opt, Progress& progress,
                const ScorePosition& on_position) {
    for (size_t c = 0; c + size_t(opt.n_ctx) <= text.size(); c += size_t(opt.n_ctx)) {
        score_chunk(session, text.subspan(c, size_t(opt.n_ctx)), 64, on_position);
        progress.add(uint64_t(opt.n_ctx));
    }
}

Scores score(const std::shared_ptr<ember::Model>& model, const std::vector<int32_t>& tokens, const Options& opt,
             Progress& progress, std::optional<float> activation_sparsity = std::nullopt) {
    Scores s;
    score_text(*new_session(model, opt, activation_sparsity), tokens, opt, progress,
               [&](std::span<const float> logits, int32_t next) {
                   s.sums.add(token_nll(logits, next));
                   s.top.push_back(row_softmax(logits).top);
               });
    return s;
}

constexpr int kSpeedRounds = 3;

// Generated tokens timed per level: at most --speed-tokens, within a chunk of held-out tokens.
size_t speed_tokens(const Options& opt, size_t n_held) {
    return n_held == 0 ? 0 : std::min({size_t(opt.speed_tokens), n_held - 1, size_t(opt.n_ctx) - 1});
}

// One round of generation speed, in seconds a token: the held-out tokens fed one at a time after
// the first, as generation feeds them.
double time_round(ember::Session& session, const std::vector<int32_t>& held_out, const Options& opt, Progress& progress) {
    const size_t n = speed_tokens(opt, held_out.size());
    session.clear();
    if (const ember::Status st = session.evaluate(std::span<const int32_t>(held_out).first(1)); !st)
        throw InputError(st.error().message);
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 1; i <= n; ++i)
        if (const ember::Status st = session.evaluate(std::span<const int32_t>(held_out).subspan(i, 1)); !st)
            throw InputError(st.error().message);
    progress.add(n + 1);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / double(n);
}

// Perplexity and speed at one level (nullopt: the dense model). Speed is the fastest of
// kSpeedRounds rounds, one before the scoring and the others after it: other programs (the app
// this runs beside, at low priority) only ever add time, and a burst of theirs shorter than the
// scoring cannot slow every round.
struct Measured {
    Scores scores;
    double seconds_per_token = 0.0;  // 0: not timed
};
Measured measure(const std::shared_ptr<ember::Model>& model, const std::vector<int32_t>& held_out, const Options& opt,
                 Progress& progress, std::optional<float> activation_sparsity = std::nullopt) {
    Measured m;
    if (speed_tokens(opt, held_out.size()) == 0) {
        m.scores = score(model, held_out, opt, progress, activation_sparsity);
        return m;
    }
    const std::unique_ptr<ember::Session> timer = new_session(model, opt, activation_sparsity);
    m.seconds_per_token = time_round(*timer, held_out, opt, progress);
    m.scores = score(model, held_out, opt, progress, activation_sparsity);
    for (int round = 1; round < kSpeedRounds; ++round)
        m.seconds_per_token = std::min(m.seconds_per_token, time_round(*timer, held_out, opt, progress));
    return m;
}

// The calibration's Quality: the dense model against each of kQualityLevels. The dense model is
// let go once measured (`dense` is its last owner); one load with the calibration just written
// then serves every level, each a session of its own. The dense model is timed again after the
// levels, loaded anew once they are let go, so that its speed too is the fastest over the whole
// measuring, not over a few seconds that a burst of other work may fill.
void measure_quality(std::shared_ptr<ember::Model> dense, const std::vector<int32_t>& held_out, const Options& opt,
                     Progress& progress, ember::sparse::SparsityCalibration& cal) {
    const Measured base = measure(dense, held_out, opt, progress);
    dense.reset();
    double dense_seconds = base.seconds_per_token;
    std::vector<double> level_seconds;
    auto& q = cal.quality;
    q.n_scored = uint64_t(base.scores.sums.count);
    q.ppl_dense = float(base.scores.sums.ppl());
    ember::ModelParams mp;
    mp.ffn_activation = opt.ffn_act;
    mp.activation_sparsity = kQualityLevels[0];
    mp.sparsity_file = opt.out_path;
    auto loaded = ember::Model::load(opt.model_path, mp);
    if (!loaded) throw InputError(loaded.error().message);
    for (float level : kQualityLevels) {
        const Measured m = measure(*loaded, held_out, opt, progress, level);
        size_t same = 0;
        for (size_t i = 0; i < m.scores.top.size(); ++i) same += m.scores.top[i] == base.scores.top[i];
        q.levels.push_back(level);
        q.ppl.push_back(float(m.scores.sums.ppl()));
        q.same_top.push_back(float(same) / float(m.scores.top.size()));
        level_seconds.push_back(m.seconds_per_token);
        std::fprintf(stderr, "ember-calibrate: quality at %.0f %%: ppl %.4f (dense %.4f)\n", 100 * level, q.ppl.back(),
                     q.ppl_dense);
    }
    if (dense_seconds <= 0.0) return;
    loaded->reset();
    ember::ModelParams dense_params;
    dense_params.ffn_activation = opt.ffn_act;
    auto again = ember::Model::load(opt.model_path, dense_params);
    if (!again) throw InputError(again.error().message);
    const std::unique_ptr<ember::Session> timer = new_session(*again, opt);
    for (int round = 1; round < kSpeedRounds; ++round)
        dense_seconds = std::min(dense_seconds, time_round(*timer, held_out, opt, progress));
    for (double s : level_seconds) q.speed.push_back(float(dense_seconds / s));
}

constexpr float kCostLevels[] = {0.25f, 0.5f, 0.75f, 0.9f};

// The first --layer-cost-tokens tokens of the text, rounded down to whole chunks of n_ctx (at
// least one chunk; none when the text is shorter).
std::span<const int32_t> cost_text(const std::vector<int32_t>& tokens, const Options& opt) {
    const size_t n = std::max(size_t(opt.n_ctx), size_t(opt.cost_tokens) / size_t(opt.n_ctx) * size_t(opt.n_ctx));
    return std::span<const int32_t>(tokens).first(std::min(tokens.size() / size_t(opt.n_ctx) * size_t(opt.n_ctx), n));
}

// Each layer's cost alone at each of kCostLevels: the mean KL divergence from the dense model
// (`dense`, let go once its rows are kept) with only that layer sparse, on the start of the
// calibration text. A level's cost is what greedy steps by under the measured allocation.
void measure_layer_costs(std::shared_ptr<ember::Model>& dense, const std::vector<int32_t>& tokens, const Options& opt,
                         Progress& progress, ember::sparse::SparsityCalibration& cal) {
    const std::span<const int32_t> text = cost_text(tokens, opt);
    if (text.empty())
        throw InputError(opt.text_path + ": " + std::to_string(tokens.size()) + " tokens, fewer than one chunk of " +
                         std::to_string(opt.n_ctx) + " (-c) to measure the layers' costs on (--layer-cost-tokens)");
    std::vector<BaseRow> base;
    score_text(*new_session(dense, opt), text, opt, progress,
               [&](std::span<const float> logits, int32_t next) { base.push_back(make_base_row(logits, next)); });
    dense.reset();
    ember::ModelParams mp;
    mp.ffn_activation = opt.ffn_act;
    mp.activation_sparsity = kCostLevels[0];
    mp.sparsity_file = opt.out_path;
    mp.sparsity_allocation = ember::SparsityAllocation::Uniform;
    auto loaded = ember::Model::load(opt.model_path, mp);
    if (!loaded) throw InputError(loaded.error().message);
    const size_t n_layer = cal.layers.size();
    cal.cost_levels.assign(std::begin(kCostLevels), std::end(kCostLevels));
    for (size_t il = 0; il < n_layer; ++il) {
        cal.layers[il].cost.clear();
        for (float level : kCostLevels) {
            std::vector<float> shares(n_layer, 0.0f);
            shares[il] = level;
            KlSums sums;
            size_t i = 0;
            score_text(*new_session(*loaded, opt, std::nullopt, std::move(shares)), text, opt, progress,
                       [&](std::span<const float> logits, int32_t next) { add_kl_position(base[i++], logits, next, sums); });
            // The base's log-probabilities are rounded to 16 bits: a layer that changes nothing
            // may measure a hair below 0.
            cal.layers[il].cost.push_back(float(std::max(0.0, sums.mean_kld())));
        }
        std::fprintf(stderr, "ember-calibrate: layer %zu alone: KL divergence %.5f / %.5f / %.5f / %.5f at 25/50/75/90 %%\n",
                     il, cal.layers[il].cost[0], cal.layers[il].cost[1], cal.layers[il].cost[2], cal.layers[il].cost[3]);
    }
}

// What a neuron's gate product g becomes before it meets up: the value whose magnitude decides.
float gate_activation(bool silu, float g) { return silu ? g / (1.0f + std::exp(-g)) : (g > 0.0f ? g : 0.0f); }

// Evaluates the text chunk by chunk, n_ctx tokens each from an empty context; after_chunk sees
// the session before the next chunk clears it.
void run_text(ember::Session& session, const std::vector<int32_t>& tokens, int32_t n_ctx, const char* pass,
              Progress& progress, const std::function<void()>& after_chunk = {}) {
    const size_t n_chunks = (tokens.size() + size_t(n_ctx) - 1) / size_t(n_ctx);
    for (size_t c = 0; c < n_chunks; ++c) {
        session.clear();
        const size_t begin = c * size_t(n_ctx), n = std::min(size_t(n_ctx), tokens.size() - begin);
        if (const ember::Status st = session.evaluate(std::span<const int32_t>(tokens).subspan(begin, n)); !st)
            throw InputError(st.error().message);
        if (after_chunk) after_chunk();
        progress.add(n);
        if ((c + 1) % std::max<size_t>(1, n_chunks / 10) == 0 || c + 1 == n_chunks)
            std::fprintf(stderr, "ember-calibrate: %s, chunk %zu of %zu\n", pass, c + 1, n_chunks);
    }
}

// A mixture of experts: the share of the text's tokens routed to each expert of each layer, and
// of those, the share for which each of its neurons fired.
int profile_experts(const std::shared_ptr<ember::Model>& model, std::vector<int32_t> tokens, const Options& opt) {
    const ember::ModelInfo& info = model->info();
    tokens.resize(std::min(tokens.size(), size_t(opt.max_tokens)));
    const std::unique_ptr<ember::Session> session = new_session(model, opt);
    Progress progress{opt.progress, 0, tokens.size()};
    std::vector<std::vector<int64_t>> routed(size_t(info.n_layer), std::vector<int64_t>(size_t(info.n_expert), 0));
    std::vector<std::vector<int64_t>> fired(size_t(info.n_layer));
    run_text(*session, tokens, opt.n_ctx, "routing", progress, [&] {
        const std::vector<ember::LayerSparsity> layers = session->layer_sparsity();
        for (size_t il = 0; il < routed.size() && il < layers.size(); ++il)
            for (size_t e = 0; e < routed[il].size() && e < layers[il].expert_tokens.size(); ++e)
                routed[il][e] += layers[il].expert_tokens[e];
        const std::vector<std::vector<uint32_t>> fires = session->expert_neuron_fires();
        for (size_t il = 0; il < fired.size() && il < fires.size(); ++il) {
            fired[il].resize(fires[il].size());
            for (size_t j = 0; j < fires[il].size(); ++j) fired[il][j] += fires[il][j];
        }
    });

    ember::sparse::ExpertProfile profile;
    profile.model_bytes = file_bytes(opt.model_path);
    profile.n_tokens = tokens.size();
    for (const std::vector<int64_t>& layer : routed) {
        std::vector<float>& share = profile.share.emplace_back();
        for (int64_t n : layer) share.push_back(float(double(n) / double(tokens.size())));
    }
    // Only gate-first experts count their neurons' fires (the others' always fire).
    for (size_t il = 0; il < fired.size() && !fired[il].empty(); ++il) {
        const size_t n_ff = fired[il].size() / size_t(info.n_expert);
        std::vector<float>& fire = profile.fire.emplace_back(fired[il].size());
        for (size_t j = 0; j < fired[il].size(); ++j)
            if (const int64_t n = routed[il][j / n_ff]; n > 0) fire[j] = float(double(fired[il][j]) / double(n));
    }
    const std::string out = opt.out_path.empty() ? ember::sparse::default_expert_profile_path(opt.model_path) : opt.out_path;
    ember::sparse::write_expert_profile(out, profile);
    std::printf("ember-calibrate: %s: %zu tokens, %d layers of %d experts (%d per token) -> %s\n", opt.model_path.c_str(),
                tokens.size(), info.n_layer, info.n_expert, info.n_expert_used, out.c_str());
    // How uneven the routing is decides what a partial device gains: the tokens the most used
    // quarter of a layer's experts serve (a quarter of them if the router were even).
    std::printf("layer  tokens served by the most used quarter of its experts\n");
    for (int32_t il = 0; il < info.n_layer; ++il) {
        std::vector<float> s = profile.share[size_t(il)];
        std::sort(s.begin(), s.end(), std::greater<>());
        const size_t quarter = std::max<size_t>(1, s.size() / 4);
        double top = 0.0;
        for (size_t i = 0; i < quarter; ++i) top += s[i];
        std::printf("%5d  %5.1f %%\n", il, 100.0 * top / info.n_expert_used);
    }
    return 0;
}

// `model` is let go before the quality is measured, so that the sparse load is the only copy.
int calibrate_dense(std::shared_ptr<ember::Model> model, std::vector<int32_t> tokens, bool silu, const Options& opt) {
    const ember::ModelInfo info = model->info();
    // The held-out tail: whole chunks, at most a quarter of the text.
    const size_t n_held = std::min(size_t(opt.quality_tokens), tokens.size() / 4) / size_t(opt.n_ctx) * size_t(opt.n_ctx);
    const std::vector<int32_t> held_out(tokens.end() - std::ptrdiff_t(n_held), tokens.end());
    tokens.resize(std::min(tokens.size() - n_held, size_t(opt.max_tokens)));
    if (tokens.size() < 64) throw InputError(opt.text_path + ": " + std::to_string(tokens.size()) +
                                             " tokens; calibration needs at least 64");

    std::unique_ptr<ember::Session> holder = new_session(model, opt);
    ember::Session& session = *holder;
    // Every level's rounds, and the dense model's before the levels and again after them.
    const uint64_t per_round = speed_tokens(opt, n_held) + (speed_tokens(opt, n_held) > 0);
    const uint64_t timed = per_round * ((1 + std::size(kQualityLevels)) * kSpeedRounds + (kSpeedRounds - 1));
    const uint64_t costed = opt.cost_tokens > 0 ? cost_text(tokens, opt).size() * (1 + info.n_layer * std::size(kCostLevels)) : 0;
    Progress progress{opt.progress, 0, 2 * tokens.size() + (1 + std::size(kQualityLevels)) * n_held + timed + costed};

    ember::sparse::SparsityCalibration cal;
    cal.model_bytes = file_bytes(opt.model_path);
    cal.n_tokens = tokens.size();
    cal.activation = info.ffn_activation;
    // A ReLU model's gates are exact zeros in shares that differ by layer; greedy skips those
    // first. On a SwiGLU model it measured closer in perplexity but farther in KL divergence.
    cal.allocation = opt.allocation.value_or(info.ffn_activation == "relu" ? ember::SparsityAllocation::Greedy
                                                                           : ember::SparsityAllocation::Uniform);
    cal.levels = ember::sparse::default_sparsity_levels();
    cal.layers.resize(size_t(info.n_layer));

    session.set_intermediate_callback([&](const ember::Intermediate& im) {
        const int site = site_of(im.name);
        if (site < 0 || im.layer < 0) return;
        auto& h = cal.layers[size_t(im.layer)].histograms[size_t(site)];
        const int64_t n = int64_t(im.n_tokens) * im.n_cols;
        if (site != int(SparsitySite::FfnAct)) return h.add(im.data, n);
        for (int64_t i = 0; i < n; ++i) h.add(gate_activation(silu, im.data[i]));
    });
    run_text(session, tokens, opt.n_ctx, "pass 1 of 2 (histograms)", progress);

    for (int32_t il = 0; il < info.n_layer; ++il) {
        auto& L = cal.layers[size_t(il)];
        if (L.histograms[size_t(SparsitySite::FfnAct)].total() == 0)
            throw InputError(opt.model_path + ": layer " + std::to_string(il) + "'s FFN gate was never seen");
        for (int s = 0; s < ember::sparse::kSparsitySites; ++s)
            for (float level : cal.levels) L.thresholds[size_t(s)].push_back(L.histograms[size_t(s)].quantile(level));
        L.firing.assign(cal.levels.size(), std::vector<float>(size_t(info.n_ff), 0.0f));
    }

    session.set_intermediate_callback([&](const ember::Intermediate& im) {
        if (im.name != "ffn_gate" || im.layer < 0) return;
        auto& L = cal.layers[size_t(im.layer)];
        const std::vector<float>& t = L.thresholds[size_t(SparsitySite::FfnAct)];
        for (int32_t row = 0; row < im.n_tokens; ++row) {
            const float* g = im.data + size_t(row) * size_t(im.n_cols);
            for (int64_t i = 0; i < im.n_cols; ++i) {
                const float a = std::fabs(gate_activation(silu, g[i]));
                for (size_t lv = 0; lv < t.size() && a > t[lv]; ++lv) L.firing[lv][size_t(i)] += 1.0f;
            }
        }
    });
    run_text(session, tokens, opt.n_ctx, "pass 2 of 2 (firing neurons)", progress);
    for (auto& L : cal.layers)
        for (auto& level : L.firing)
            for (float& f : level) f /= float(tokens.size());

    // A measured allocation is recorded once its costs are in the file.
    const ember::SparsityAllocation allocation = cal.allocation;
    if (allocation == ember::SparsityAllocation::Measured) cal.allocation = ember::SparsityAllocation::Uniform;
    ember::sparse::write_sparsity_file(opt.out_path, cal);
    holder.reset();
    if (opt.cost_tokens > 0) {
        measure_layer_costs(model, tokens, opt, progress, cal);
        cal.allocation = allocation;
        ember::sparse::write_sparsity_file(opt.out_path, cal);
        if (n_held > 0) {
            ember::ModelParams mp;
            mp.ffn_activation = opt.ffn_act;
            auto again = ember::Model::load(opt.model_path, mp);
            if (!again) throw InputError(again.error().message);
            model = std::move(*again);
        }
    }
    if (n_held > 0) {
        measure_quality(std::move(model), held_out, opt, progress, cal);
        ember::sparse::write_sparsity_file(opt.out_path, cal);
    } else if (opt.quality_tokens > 0) {
        std::fprintf(stderr, "ember-calibrate: the text is too short to hold out a chunk of %d tokens: quality not measured\n",
                     opt.n_ctx);
    }
    std::printf("ember-calibrate: %s: %zu tokens, %d layers -> %s\n", opt.model_path.c_str(), tokens.size(), info.n_layer,
                opt.out_path.c_str());
    if (!cal.quality.levels.empty()) {
        const auto& q = cal.quality;
        std::printf("held out: %llu positions scored; dense ppl %.4f\nlevel  ppl       Δppl     same top  speed\n",
                    (unsigned long long)q.n_scored, q.ppl_dense);
        for (size_t i = 0; i < q.levels.size(); ++i) {
            std::printf("%4.0f %%  %-8.4f  %+6.2f %%  %5.1f %%  ", 100 * q.levels[i], q.ppl[i],
                        100 * (q.ppl[i] / q.ppl_dense - 1), 100 * q.same_top[i]);
            if (q.speed.empty()) std::printf("-\n");
            else std::printf("%.2fx\n", q.speed[i]);
        }
        std::printf("largest level within 1 %% of the dense perplexity%s: %.0f %%\n",
                    q.speed.empty() ? "" : " that generates faster than dense", 100 * ember::sparse::recommended_level(cal));
    }
    std::printf("layer  |act(gate)| thresholds at 25%% / 40%% / 50%% / 75%% sparsity\n");
    for (int32_t il = 0; il < info.n_layer; ++il) {
        const auto at = [&](float s) { return ember::sparse::threshold_at(cal, il, SparsitySite::FfnAct, s); };
        std::printf("%5d  %.4g / %.4g / %.4g / %.4g\n", il, at(0.25f), at(0.40f), at(0.50f), at(0.75f));
    }
    return 0;
}

int run(const Options& opt) {
    ember::ModelParams mp;
    mp.ffn_activation = opt.ffn_act;
    auto loaded = ember::Model::load(opt.model_path, mp);
    if (!loaded) throw InputError(loaded.error().message);
    std::shared_ptr<ember::Model> model = *loaded;
    const ember::ModelInfo& info = model->info();
    if (info.n_expert == 0 && !info.activation_sparsity_possible)
        throw InputError(opt.model_path + ": ember-calibrate calibrates dense models with a SwiGLU or ReGLU FFN and mixtures "
                         "of experts; " +
                         (info.sparse ? std::string("this one is sparse already")
                          : info.ffn_matrices == 3 && (info.ffn_activation == "silu" || info.ffn_activation == "relu")
                              ? std::string("its FFN down projections are stored in a type of under 4.5 bits a weight, "
                                            "which has no layout for skipping neurons")
                              : "this one's FFN is '" + info.ffn_activation + "'" +
                                    (info.ffn_matrices < 3 ? " without a gate" : "")));
    std::vector<int32_t> tokens = model->tokenize(read_text(opt.text_path), model->add_bos());
    if (info.n_expert > 0) {
        if (tokens.size() < 64)
            throw InputError(opt.text_path + ": " + std::to_string(tokens.size()) + " tokens; a profile needs at least 64");
        return profile_experts(model, std::move(tokens), opt);
    }
    Options dense = opt;
    if (dense.out_path.empty()) dense.out_path = ember::sparse::default_sparsity_path(dense.model_path);
    const bool silu = info.ffn_activation == "silu";
    return calibrate_dense(std::move(model), std::move(tokens), silu, dense);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(parse(argc, argv));
    } catch (const UsageError& e) {
        std::fprintf(stderr, "ember-calibrate: %s\n%s", e.what(), kUsage);
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ember-calibrate: %s\n", e.what());
        return 1;
    }
}
