#include "terminal_progress.h"

#if defined(_WIN32)
#include <io.h>
#else
#include <unistd.h>
#endif

#include <cstdio>

namespace ember::hub::cli {

namespace {
// How often a pipe gets a total line: often enough to show life, rarely enough for a log.
constexpr auto plain_interval = std::chrono::seconds(5);

std::string eta(double seconds) {
    if (seconds < 0) return "--:--";
    long s = long(seconds);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    return buf;
}
}  // namespace

std::string human_bytes(uint64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = double(bytes);
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
}

bool stdout_is_terminal() {
#if defined(_WIN32)
    return _isatty(_fileno(stdout)) != 0;
#else
    return isatty(STDOUT_FILENO) != 0;
#endif
}

void TerminalProgress::update(const JobProgress& p) {
    size_t n_done = 0;
    for (const auto& f : p.files) {
        n_done += f.state == FileState::Done;
        auto& [state, note] = seen_[f.path];
        bool changed = state != f.state || note != f.note;
        state = f.state;
        note = f.note;
        if (!changed) continue;
        const char* prefix = f.state == FileState::Done ? "done" : f.state == FileState::Waiting ? "retrying" : nullptr;
        if (!prefix) continue;
        if (line_open_) std::printf("\r\033[K");
        std::printf("%s %s%s%s\n", prefix, f.path.c_str(), f.note.empty() ? "" : ": ", f.note.c_str());
        line_open_ = false;
    }
    double pct = p.bytes_total ? 100.0 * double(p.bytes_done) / double(p.bytes_total) : 100.0;
    auto now = std::chrono::steady_clock::now();
    if (tty_) {
        std::printf("\r\033[K[%5.1f%%] %s / %s  %s/s  ETA %s  (%zu/%zu files)", pct, human_bytes(p.bytes_done).c_str(),
                    human_bytes(p.bytes_total).c_str(), human_bytes(uint64_t(p.bytes_per_second)).c_str(),
                    eta(p.eta_seconds).c_str(), n_done, p.files.size());
        line_open_ = true;
    } else if (now - last_line_ >= plain_interval && p.state == JobState::Running) {
        std::printf("progress %.1f%% %s of %s, %s/s, %zu of %zu files\n", pct, human_bytes(p.bytes_done).c_str(),
                    human_bytes(p.bytes_total).c_str(), human_bytes(uint64_t(p.bytes_per_second)).c_str(), n_done,
                    p.files.size());
        last_line_ = now;
    }
    std::fflush(stdout);
}

void TerminalProgress::finish() {
    if (line_open_) std::printf("\n");
    line_open_ = false;
    std::fflush(stdout);
}

}  // namespace ember::hub::cli
