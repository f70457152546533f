#include "app/hub/model_suggestion.h"

#include <QCoreApplication>
#include <QThread>

#include <algorithm>

#if defined(Q_OS_WIN)
#ifndef NOMINMAX  // Qt's build may define it already
#define NOMINMAX
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#else
#include <unistd.h>
#endif

namespace ember::app {
namespace {

struct Candidate {
    const char* repo;
    const char* name;
    qint64 gib_tenths;  // Q4_0 file size in tenths of a GiB
};

// PowerInfer's published sparse models, largest first.
const Candidate kCandidates[] = {
    {"PowerInfer/ReluLLaMA-70B-PowerInfer-GGUF", "ReluLLaMA-70B", 365},
    {"PowerInfer/ReluFalcon-40B-PowerInfer-GGUF", "ReluFalcon-40B", 220},
    {"PowerInfer/prosparse-llama-2-13b-gguf", "ProSparse-Llama-2-13B", 69},
    {"PowerInfer/prosparse-llama-2-7b-gguf", "ProSparse-Llama-2-7B", 36},
};

QString gib(qint64 bytes) { return QString::number(double(bytes) / double(1ll << 30), 'f', 1) + QStringLiteral(" GiB"); }

// Without a GPU a token's speed is the memory traffic the CPU can drive: a sparse model reads
// about half its file per token (attention whole, a fraction of the FFN), and a desktop core
// streams about 5 GiB/s, up to the ~40 GiB/s of two memory channels. Conservative on purpose:
// the suggestion should answer at least as fast as it says.
double cpu_tokens_per_second(qint64 model_bytes, int threads) {
    const double bandwidth = std::min(std::max(threads, 1), 8) * 5.0 * double(1ll << 30);
    return bandwidth / (0.5 * double(model_bytes));
}

// Answers slower than this are slower than people read.
constexpr double kReadableTokensPerSecond = 5.0;

}  // namespace

qint64 physical_ram_bytes() {
#if defined(Q_OS_WIN)
    MEMORYSTATUSEX status{};
    status.dwLength = sizeof status;
    return GlobalMemoryStatusEx(&status) ? qint64(status.ullTotalPhys) : 0;
#else
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? qint64(pages) * page : 0;
#endif
}

Hardware detect_hardware() {
    Hardware hw;
    hw.ram_bytes = physical_ram_bytes();
    hw.cpu_threads = QThread::idealThreadCount();
    hw.gpus = probe_gpus();
    return hw;
}

ModelSuggestion suggest_model(const Hardware& hw) {
    const GpuInfo* gpu = hw.gpus.first_usable();
    // The engine reads the whole model into memory (as the fit badges assume); a GPU makes it
    // faster, not larger.
    const qint64 room = std::max<qint64>(0, hw.ram_bytes - (qint64(2) << 30));
    const QString where = gpu ? QCoreApplication::translate("Welcome", "%1 of memory and %2 free on %3")
                                    .arg(gib(hw.ram_bytes), gib(qint64(gpu->free_bytes)), QString::fromStdString(gpu->name))
                              : QCoreApplication::translate("Welcome", "%1 of memory and no GPU").arg(gib(hw.ram_bytes));
    QString too_slow;  // the largest one that fits memory but not the CPU's pace, if passed over
    for (const Candidate& c : kCandidates) {
        const qint64 bytes = c.gib_tenths * (qint64(1) << 30) / 10;
        if (bytes + bytes / 5 > room) continue;
        if (gpu)
            return {QString::fromLatin1(c.repo), QString::fromLatin1(c.name), bytes,
                    QCoreApplication::translate("Welcome", "the largest that fits in %1").arg(where)};
        const double speed = cpu_tokens_per_second(bytes, hw.cpu_threads);
        if (speed < kReadableTokensPerSecond) {
            if (too_slow.isEmpty())
                too_slow = QCoreApplication::translate("Welcome", "; %1 fits too, but would answer at about %2 tokens a second")
                               .arg(QString::fromLatin1(c.name)).arg(std::max(1, int(speed)));
            continue;
        }
        return {QString::fromLatin1(c.repo), QString::fromLatin1(c.name), bytes,
                QCoreApplication::translate("Welcome", "fits in %1 and answers at roughly %2 tokens a second on %3 CPU threads%4")
                    .arg(where).arg(int(speed)).arg(hw.cpu_threads).arg(too_slow)};
    }
    return {{}, {}, 0, QCoreApplication::translate("Welcome", "%1 is too little for a 7B model; the demo model runs anywhere").arg(where)};
}

}  // namespace ember::app
