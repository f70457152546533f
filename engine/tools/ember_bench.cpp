// ember-bench: prompt processing (ppN) and token generation (tgN) speed, as llama-bench
// reports them, plus the bytes of weights read per generated token, the bandwidth that
// implies, and this machine's measured read bandwidth for comparison.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ember/model.h"
#include "ember/session.h"
#include "tensor/kernels.h"
#include "tools/arg_parse.h"
#include "tools/device_options.h"
#include "tools/sparsity_options.h"
#include "tools/memory_bandwidth.h"

namespace {

using namespace ember::tools;

struct Options {
    std::string model_path;
    int32_t n_prompt = 512;
    int32_t n_gen = 128;
    std::vector<int32_t> threads;
    int reps = 5;
    bool membw = true;
    bool use_mmap = false;
    std::optional<uint64_t> expert_memory;
    bool experts_by_neuron = false;
    std::string device = "cpu";
    std::optional<BudgetArg> vram_budget;
    SparsityArgs sparsity;
    bool sparse_lm_head = false;
};

struct Stats {
    double mean = 0, sd = 0;
};

Stats stats(const std::vector<double>& v) {
    Stats s;
    s.mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
    for (double x : v) s.sd += (x - s.mean) * (x - s.mean);
    s.sd = v.size() > 1 ? std::sqrt(s.sd / double(v.size() - 1)) : 0.0;
    return s;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-m") o.model_path = next_value(argc, argv, i);
        else if (a == "-p") o.n_prompt = int32_t(parse_int(a, next_value(argc, argv, i), 0, 1 << 16));
        else if (a == "-n") o.n_gen = int32_t(parse_int(a, next_value(argc, argv, i), 0, 1 << 16));
        else if (a == "-t") {
            // A comma-separated list, as llama-bench takes it.
            std::string list = next_value(argc, argv, i);
            for (size_t pos = 0; pos <= list.size();) {
                const size_t comma = std::min(list.find(',', pos), list.size());
                o.threads.push_back(int32_t(parse_int(a, list.substr(pos, comma - pos), 1, 1024)));
                pos = comma + 1;
            }
        } else if (a == "-r") o.reps = int(parse_int(a, next_value(argc, argv, i), 1, 1000));
        else if (a == "--no-membw") o.membw = false;
        else if (a == "--mmap") o.use_mmap = true;
        else if (a == "--expert-memory") o.expert_memory = ember::tools::parse_gib(a, next_value(argc, argv, i));
        else if (a == "--experts-by-neuron") o.experts_by_neuron = true;
        else if (a == "--device") o.device = next_value(argc, argv, i);
        else if (a == "--vram-budget") o.vram_budget = parse_budget(a, next_value(argc, argv, i));
        else if (a == "--sparse-lm-head") o.sparse_lm_head = true;
        else if (o.sparsity.parse(a, argc, argv, i)) continue;
        else throw UsageError("unknown argument '" + a + "'");
    }
    if (o.model_path.empty()) throw UsageError("no model: give -m MODEL.gguf");
    if (o.threads.empty()) o.threads.push_back(0);
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    try {
        opt = parse(argc, argv);
    } catch (const UsageError& e) {
        std::fprintf(stderr,
                     "ember-bench: %s\nusage: ember-bench -m MODEL.gguf [-p 512] [-n 128] [-t N[,N...]] [-r 5] "
                     "[--no-membw] [--mmap] [--expert-memory GIB] [--experts-by-neuron] [--device cpu|gpu|gpu:N|sim] [--vram-budget GIB|N%%]\n"
                     "  [--activation-sparsity S] [--sparsity-file PATH] [--sparse-lm-head]\n",
                     e.what());
        return 2;
    }
    ember::ModelParams mp;
    mp.use_mmap = opt.use_mmap;
    mp.expert_memory_bytes = opt.expert_memory;
    mp.experts_by_neuron = opt.experts_by_neuron;
    mp.sparse_lm_head = opt.sparse_lm_head;
    opt.sparsity.apply(mp);
    auto model = ember::Model::load(opt.model_path, mp);
    if (!model) {
        std::fprintf(stderr, "ember-bench: %s\n", model.error().message.c_str());
        return 1;
    }
    const ember::ModelInfo info = (*model)->info();
    const double gib = double(info.weight_bytes) / double(1u << 30);
    char model_name[128];
    std::snprintf(model_name, sizeof model_name, "%s %.1fB %s", info.architecture.c_str(), double(info.n_params) / 1e9,
                  info.weight_type.c_str());

    std::printf("| model | size | params | threads | test | t/s |\n|---|---:|---:|---:|---:|---:|\n");
    std::mt19937 rng(42);
    std::uniform_int_distribution<int32_t> token(3, info.n_vocab - 1);
    struct TgResult {
        int32_t n_threads;
        Stats rate;
        double gb_per_token;     // weights actually read per generated token
        double active_share;     // sparse models: share of FFN neurons computed
        double predictor_share;  // sparse models: share of the time spent in predictors
        double ffn_share;        // sparse models: share of the time spent in the FFN rows (gate, up, down)
        double ffn_gbps;         // and the rate at which those rows were read
    };
    std::vector<TgResult> tg_results;
    const bool sparse = info.sparse;
    uint64_t device_budget = 0;
    try {
        device_budget = budget_bytes(opt.device, opt.vram_budget, info.weight_bytes);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "ember-bench: %s\n", e.what());
        return 2;
    }
    for (int32_t n_threads : opt.threads) {
        ember::SessionParams sp;
        sp.n_ctx = std::max(opt.n_prompt, opt.n_gen) + 1;
        sp.n_batch = std::max(opt.n_prompt, 1);
        sp.n_threads = n_threads;
        sp.device = opt.device;
        sp.device_budget_bytes = device_budget;
        auto session = ember::Session::create(*model, sp);
        if (!session) {
            std::fprintf(stderr, "ember-bench: %s\n", session.error().message.c_str());
            return 1;
        }
        ember::Session& s = **session;
        auto row = [&](const char* test, int32_t n, const Stats& st) {
            std::printf("| %s | %.2f GiB | %.2f B | %d | %s%d | %.2f ± %.2f |\n", model_name, gib,
                        double(info.n_params) / 1e9, n_threads, test, n, st.mean, st.sd);
            std::fflush(stdout);
        };
        auto fail = [](const ember::Status& st) {
            if (!st) {
                std::fprintf(stderr, "ember-bench: %s\n", st.error().message.c_str());
                std::exit(1);
            }
        };
        if (opt.n_prompt > 0) {
            std::vector<int32_t> prompt(size_t(opt.n_prompt));
            std::vector<double> rates;
            for (int r = -1; r < opt.reps; ++r) {  // r = -1: warm-up, not counted
                for (auto& t : prompt) t = token(rng);
                s.clear();
                const auto start = std::chrono::steady_clock::now();
                fail(s.evaluate(prompt));
                if (r >= 0) rates.push_back(opt.n_prompt / seconds_since(start));
            }
            row("pp", opt.n_prompt, stats(rates));
        }
        if (opt.n_gen > 0) {
            std::vector<double> rates;
            double seconds = 0, active = 0, neurons = 0, predictor_ms = 0, ffn_ms = 0, sparse_bytes = 0, device_bytes = 0,
                   attention_bytes = 0;
            const uint64_t round_trips_before = s.device_report().round_trips;
            for (int r = -1; r < opt.reps; ++r) {
                s.clear();
                const auto start = std::chrono::steady_clock::now();
                for (int32_t i = 0; i < opt.n_gen; ++i) {
                    const int32_t t = token(rng);
                    fail(s.evaluate(std::span<const int32_t>(&t, 1)));
                }
                const double elapsed = seconds_since(start);
                if (r < 0) continue;
                rates.push_back(opt.n_gen / elapsed);
                seconds += elapsed;
                for (const auto& l : s.layer_sparsity()) {
                    active += double(l.active);
                    neurons += double(l.tokens) * l.n_ff;
                    predictor_ms += l.predictor_ms;
                    ffn_ms += l.ffn_ms;
                    sparse_bytes += double(l.bytes_read);
                    device_bytes += double(l.bytes_read_on_device);
                    attention_bytes += double(l.attention_bytes_read);
                }
            }
            const Stats st = stats(rates);
            row("tg", opt.n_gen, st);
            if (const ember::DeviceReport d = s.device_report(); d.device != "cpu") {
                std::printf("device %s: budget %.0f MiB, %.0f MiB used, %lld %s neurons; ", d.device.c_str(),
                            double(d.budget_bytes) / (1 << 20), double(d.used_bytes) / (1 << 20),
                            (long long)d.hot_neurons, info.sparse ? "hot" : "dense layers'");
                if (info.sparse)
                    std::printf("%.1f %% of the predictor and FFN bytes read per token were FFN rows read there; ",
                                sparse_bytes > 0 ? 100.0 * device_bytes / sparse_bytes : 0.0);
                std::printf("%.1f round trips per token; %s\n",
                            double(d.round_trips - round_trips_before) / (double(opt.n_gen) * (opt.reps + 1)),
                            d.dense.c_str());
            }
            // Dense parts are read in full for every token; the FFN, predictors and attention by
            // input as counted.
            const double tokens = double(opt.n_gen) * opt.reps;
            const double dense_part = double(info.bytes_per_token - (sparse ? info.ffn_bytes + info.predictor_bytes +
                                                                                  info.attention_by_input_bytes
                                                                            : 0));
            const double per_token = (dense_part + (sparse ? (sparse_bytes + attention_bytes) / tokens : 0.0)) / 1e9;
            const double ffn_rows_bytes = sparse_bytes - double(info.predictor_bytes) * tokens;
            tg_results.push_back({n_threads, st, per_token, neurons > 0 ? active / neurons : 1.0,
                                  sparse ? predictor_ms / (seconds * 1000.0) : 0.0,
                                  sparse ? ffn_ms / (seconds * 1000.0) : 0.0,
                                  ffn_ms > 0 ? ffn_rows_bytes / (ffn_ms * 1e6) : 0.0});
        }
    }
    std::printf("\nCPU kernels: %s\n", ember::tensor::kernels().isa);
    if (tg_results.empty()) return 0;
    for (const auto& r : tg_results) {
        std::printf("tg%d, %d threads: %.3f GB of weights read per token, %.2f GB/s", opt.n_gen, r.n_threads,
                    r.gb_per_token, r.rate.mean * r.gb_per_token);
        if (sparse)
            std::printf("; %.1f %% of FFN neurons active; predictors take %.1f %% of the time, FFN rows %.1f %% "
                        "(%.2f GB/s)",
                        100.0 * r.active_share, 100.0 * r.predictor_share, 100.0 * r.ffn_share, r.ffn_gbps);
        std::printf("\n");
    }
    if (opt.membw) {
        model->reset();  // the measurements below may need the memory it held
        for (const auto& r : tg_results) {
            const int t = r.n_threads > 0 ? r.n_threads : int(std::thread::hardware_concurrency());
            const double tg_gbps = r.rate.mean * r.gb_per_token;
            const double bw = measure_read_bandwidth(size_t(1) << 30, t, 5);
            std::printf("memory read bandwidth, %d threads (1 GiB, median of 5): %.2f GB/s -> tg reaches %.0f %% "
                        "(streamed at that rate, this token's weights allow at most %.1f t/s)\n",
                        t, bw, 100.0 * tg_gbps / bw, bw / r.gb_per_token);
            // Rows by input (the FFN's or attention's small inputs skipped) are not modelled below.
            if (!sparse || opt.device != "cpu" || opt.sparsity.ffn_input || opt.sparsity.attn_input) continue;
            // A sparse token's FFN rows are scattered, and scattered reads may run far below
            // the streaming rate: the same reads by plain loads say what the machine allows. A
            // gate-first FFN (activation sparsity) streams its whole gate and scatters the rest.
            const bool gate_first = info.activation_sparsity > 0.0f;
            const uint64_t matrix_bytes = info.ffn_bytes / uint64_t(info.n_layer) / uint64_t(info.ffn_matrices);
            TokenReads reads;
            reads.n_layer = info.n_layer;
            reads.dense_bytes_per_layer =
                (info.bytes_per_token - info.ffn_bytes) / uint64_t(info.n_layer) + (gate_first ? matrix_bytes : 0);
            reads.n_ff = info.n_ff;
            reads.ffn_matrices = info.ffn_matrices - (gate_first ? 1 : 0);
            reads.row_bytes = matrix_bytes / uint64_t(info.n_ff);
            reads.active_share = r.active_share;
            TokenReadRates tr;
            try {
                tr = measure_token_reads(reads, t, 5, size_t(4) << 30);
            } catch (const std::bad_alloc&) {
                std::printf("one token's reads by plain loads: not measured, no memory for a model-sized buffer\n");
                continue;
            }
            const double read_gb = double(reads.n_layer) *
                                   (double(reads.dense_bytes_per_layer) + reads.active_share * double(reads.n_ff) *
                                                                              double(reads.ffn_matrices) * double(reads.row_bytes)) /
                                   1e9;
            std::printf("one token's reads by plain loads with prefetch, %d threads (per layer %.1f MB streamed, "
                        "then %d rows of %llu bytes for %.1f %% of %d neurons, scattered; median of 5): streamed "
                        "%.2f GB/s, rows %.2f GB/s, together %.2f GB/s -> tg reaches %.0f %% (at that rate, %.3f GB "
                        "a token allow at most %.1f t/s)\n",
                        t, double(reads.dense_bytes_per_layer) / 1e6, reads.ffn_matrices,
                        (unsigned long long)reads.row_bytes, 100.0 * reads.active_share, reads.n_ff, tr.stream_gbps,
                        tr.rows_gbps, tr.token_gbps, 100.0 * tg_gbps / tr.token_gbps, read_gb, tr.token_gbps / read_gb);
        }
    }
    return 0;
}
