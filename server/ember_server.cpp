// ember-server: the OpenAI-compatible API over one model, headless. It listens at once and
// answers 503 on /health until the model is loaded, as llama.cpp's server does.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "ember/model.h"
#include "ember/session.h"
#include "server/api_server.h"
#include "server/generation_queue.h"
#include "tools/arg_parse.h"
#include "tools/device_options.h"

namespace {

using ember::tools::next_value;
using ember::tools::parse_int;
using ember::tools::UsageError;

struct Options {
    std::string model_path;
    std::string alias;
    ember::server::ServerOptions server;
    ember::SessionParams session;
    std::string device = "cpu";
    std::optional<ember::tools::BudgetArg> vram_budget;
    bool use_mmap = false;
};

const char* kUsage =
    "usage: ember-server -m MODEL.gguf [options]\n"
    "  -m, --model PATH         GGUF model file\n"
    "  -a, --alias NAME         the model's name in the API (default: the file's name)\n"
    "      --host ADDR          address to listen on (default 127.0.0.1; any other needs --api-key)\n"
    "      --port N             port (default 8080; 0: any free port, printed at start)\n"
    "      --api-key KEY        clients must send \"Authorization: Bearer KEY\" (all but /health)\n"
    "  -c, --ctx-size N         context length in tokens (0: the model's; default: the model's, at most 4096)\n"
    "  -t, --threads N          CPU threads (default: all available)\n"
    "  -b, --batch-size N       prompt tokens evaluated together (default 64)\n"
    "      --timeout S          seconds a client may stay silent mid-request (default 10)\n"
    "      --max-body BYTES     largest request body accepted (default 8 MiB)\n"
    "      --connections N      connections served at once (default 32)\n"
    "      --device DEV         cpu (default), gpu, gpu:N, or sim\n"
    "      --vram-budget GIB    device memory to use, or a share of the model (\"50%\")\n"
    "      --mmap               map the model file instead of reading it into memory\n";

Options parse(int argc, char** argv) {
    Options o;
    o.session.n_ctx = -1;  // not given
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-m" || a == "--model") o.model_path = next_value(argc, argv, i);
        else if (a == "-a" || a == "--alias") o.alias = next_value(argc, argv, i);
        else if (a == "--host") o.server.host = next_value(argc, argv, i);
        else if (a == "--port") o.server.port = int(parse_int(a, next_value(argc, argv, i), 0, 65535));
        else if (a == "--api-key") o.server.api_key = next_value(argc, argv, i);
        else if (a == "-c" || a == "--ctx-size") o.session.n_ctx = int32_t(parse_int(a, next_value(argc, argv, i), 0, 1 << 20));
        else if (a == "-t" || a == "--threads") o.session.n_threads = int32_t(parse_int(a, next_value(argc, argv, i), 0, 1024));
        else if (a == "-b" || a == "--batch-size") o.session.n_batch = int32_t(parse_int(a, next_value(argc, argv, i), 1, 4096));
        else if (a == "--timeout") o.server.read_timeout_seconds = int(parse_int(a, next_value(argc, argv, i), 1, 3600));
        else if (a == "--max-body") o.server.max_body_bytes = size_t(parse_int(a, next_value(argc, argv, i), 1024, 1ll << 32));
        else if (a == "--connections") o.server.connections = int(parse_int(a, next_value(argc, argv, i), 1, 1024));
        else if (a == "--device") o.device = next_value(argc, argv, i);
        else if (a == "--vram-budget") o.vram_budget = ember::tools::parse_budget(a, next_value(argc, argv, i));
        else if (a == "--mmap") o.use_mmap = true;
        else if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        } else {
            throw UsageError("unknown argument '" + a + "'");
        }
    }
    if (o.model_path.empty()) throw UsageError("no model: give -m MODEL.gguf");
    return o;
}

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    try {
        opt = parse(argc, argv);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "ember-server: %s\n%s", e.what(), kUsage);
        return 2;
    }
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
#ifdef SIGPIPE
    std::signal(SIGPIPE, SIG_IGN);  // a client that hangs up is a failed write, not the end of the server
#endif

    auto server = ember::server::ApiServer::start(opt.server);
    if (!server) {
        std::fprintf(stderr, "ember-server: %s\n", server.error().message.c_str());
        return 1;
    }
    std::fprintf(stderr, "ember-server: listening on http://%s:%d (loading %s)\n", opt.server.host.c_str(),
                 (*server)->port(), opt.model_path.c_str());

    ember::ModelParams mp;
    mp.use_mmap = opt.use_mmap;
    auto model = ember::Model::load(opt.model_path, mp);
    if (!model) {
        std::fprintf(stderr, "ember-server: %s\n", model.error().message.c_str());
        return 1;
    }
    const ember::ModelInfo& info = (*model)->info();
    if (opt.session.n_ctx < 0) opt.session.n_ctx = info.n_ctx_train > 0 ? std::min(info.n_ctx_train, 4096) : 4096;
    opt.session.device = opt.device;
    try {
        opt.session.device_budget_bytes = ember::tools::budget_bytes(opt.device, opt.vram_budget, info.weight_bytes);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "ember-server: %s\n", e.what());
        return 2;
    }
    auto queue = ember::server::GenerationQueue::create(*model, opt.session);
    if (!queue) {
        std::fprintf(stderr, "ember-server: %s\n", queue.error().message.c_str());
        return 1;
    }
    const std::string id = opt.alias.empty() ? std::filesystem::path(opt.model_path).filename().string() : opt.alias;
    std::fprintf(stderr, "ember-server: serving %s (%s, %s, context %d) on http://%s:%d/v1\n", id.c_str(),
                 info.architecture.c_str(), info.weight_type.c_str(), (*queue)->n_ctx(), opt.server.host.c_str(),
                 (*server)->port());
    // The port on stdout, alone, so a script that asked for any port (--port 0) can read it.
    std::printf("%d\n", (*server)->port());
    std::fflush(stdout);
    (*server)->serve(std::move(*queue), id);

    while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::fprintf(stderr, "ember-server: stopping\n");
    return 0;
}
