// ember-hub: search the Hugging Face Hub, list a repo's files as Ember sees them, and download
// them with the same library the app uses. Exit 0 when done; otherwise one line saying why.

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ember/hub/classify.h"
#include "ember/hub/client.h"
#include "ember/hub/downloader.h"
#include "ember/hub/glob.h"
#include "terminal_progress.h"

using namespace ember::hub;

namespace {

constexpr int exit_failed = 1;
constexpr int exit_usage = 2;
constexpr int exit_interrupted = 130;

// Set by the signal handler, read by the downloader's thread: a lock-free atomic is safe for both
// (a volatile sig_atomic_t is only safe within the thread the signal interrupts).
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

const char* usage =
    "usage: ember-hub search QUERY [--author NAME] [--limit N]\n"
    "       ember-hub files OWNER/REPO [--revision REV]\n"
    "       ember-hub download OWNER/REPO [--include GLOB]... [--dest DIR] [--revision REV]\n"
    "environment: HF_ENDPOINT (mirror), HF_TOKEN (gated repos), https_proxy/HTTPS_PROXY, NO_PROXY\n";

int fail(const std::string& why) {
    std::fprintf(stderr, "ember-hub: %s\n", why.c_str());
    return exit_failed;
}

int bad_usage(const std::string& why) {
    std::fprintf(stderr, "ember-hub: %s\n%s", why.c_str(), usage);
    return exit_usage;
}

struct Args {
    std::string command;
    std::string target;  // QUERY or OWNER/REPO
    std::string revision;
    std::string author;
    std::string dest;
    std::vector<std::string> includes;
    int limit = 30;
};

// Where the app keeps models: <XDG data dir>/Ember/models.
std::string default_models_dir() {
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return std::string(xdg) + "/Ember/models";
    if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.local/share/Ember/models";
    return "models";
}

Result<Args> parse(int argc, char** argv) {
    if (argc < 3) return Error{"missing command or argument"};
    Args a;
    a.command = argv[1];
    a.target = argv[2];
    for (int i = 3; i < argc; ++i) {
        std::string opt = argv[i];
        if (i + 1 >= argc) return Error{"option " + opt + " needs a value"};
        std::string value = argv[++i];
        if (opt == "--revision") a.revision = value;
        else if (opt == "--author") a.author = value;
        else if (opt == "--dest") a.dest = value;
        else if (opt == "--include") a.includes.push_back(value);
        else if (opt == "--limit") a.limit = std::atoi(value.c_str());
        else return Error{"unknown option " + opt};
    }
    if (a.dest.empty()) a.dest = default_models_dir();
    return a;
}

int search(Client& client, const Args& a) {
    SearchQuery q;
    q.search = a.target;
    q.author = a.author;
    q.limit = a.limit > 0 ? a.limit : 30;
    auto hits = client.search(q);
    if (!hits) return fail(hits.error().message);
    for (const auto& m : *hits) {
        std::printf("%-60s %10lld downloads %6lld likes%s\n", m.id.c_str(), (long long)m.downloads, (long long)m.likes,
                    m.gated == Gated::No ? "" : "  gated");
    }
    return 0;
}

int files(Client& client, const Args& a) {
    auto info = client.info(a.target, a.revision);
    if (!info) return fail(info.error().message);
    auto tree = client.tree(a.target, info->sha);
    if (!tree) return fail(tree.error().message);
    RepoLayout layout = classify(*tree);
    std::printf("%s at %s%s\n", info->id.c_str(), info->sha.c_str(), info->gated == Gated::No ? "" : " (gated)");
    for (const auto& f : *tree) {
        FileKind kind = kind_of(layout, f.path);
        std::string quant;
        if (kind == FileKind::SparseModel || kind == FileKind::DenseModel) quant = quantization_from_name(f.path);
        std::printf("%-10s %-7s %10s  %s\n", to_string(kind), quant.c_str(), cli::human_bytes(f.size).c_str(), f.path.c_str());
    }
    for (const auto* models : {&layout.sparse_models, &layout.dense_models}) {
        for (const auto& m : *models) {
            auto plan = plan_model_download(layout, m.entry.path);
            if (!plan) continue;
            std::printf("model %s: %zu files, %s\n", m.entry.path.c_str(), plan->files.size(),
                        cli::human_bytes(plan->total_bytes).c_str());
        }
    }
    return 0;
}

int download(Client& client, const Args& a) {
    auto info = client.info(a.target, a.revision);
    if (!info) return fail(info.error().message);
    auto tree = client.tree(a.target, info->sha);
    if (!tree) return fail(tree.error().message);
    Job job{a.target, info->sha, {}, a.dest};
    for (const auto& f : *tree) {
        bool wanted = a.includes.empty();
        for (const auto& glob : a.includes) wanted = wanted || glob_match(glob, f.path);
        if (wanted) job.files.push_back(f);
    }
    if (job.files.empty()) return fail("no file of " + a.target + " matches the --include patterns");

    Downloader downloader(client.settings());
    cli::TerminalProgress progress(cli::stdout_is_terminal());
    auto id = downloader.start(job, [&](const JobProgress& p) {
        progress.update(p);
        if (g_interrupted.load() && p.state == JobState::Running) downloader.cancel(p.id);
    });
    if (!id) return fail(id.error().message);
    JobProgress end = downloader.wait(*id);
    progress.finish();
    if (end.state == JobState::Cancelled) {
        std::fprintf(stderr, "ember-hub: interrupted; run the same command again to resume\n");
        return exit_interrupted;
    }
    if (end.state != JobState::Done) return fail(end.error);
    std::printf("downloaded %zu files (%s) to %s/%s\n", end.files.size(), cli::human_bytes(end.bytes_total).c_str(),
                a.dest.c_str(), a.target.c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    auto args = parse(argc, argv);
    if (!args) return bad_usage(args.error().message);
    auto settings = Settings::from_environment();
    if (!settings) return fail(settings.error().message);
    std::signal(SIGINT, [](int) { g_interrupted.store(true); });
    std::signal(SIGTERM, [](int) { g_interrupted.store(true); });
    Client client(*settings);
    if (args->command == "search") return search(client, *args);
    if (args->command == "files") return files(client, *args);
    if (args->command == "download") return download(client, *args);
    return bad_usage("unknown command " + args->command);
}
