// Runs the app's window on a model and measures what the window costs the engine:
// `ember-frame-probe [MODEL] [TOKENS]`. First the engine alone answers the prompt (the session the
// app would make: same context, threads, device, sampling and seed), then the app answers it in its
// window. Prints both generation rates, the time until the first token is shown against the
// engine's own, the CPU the GUI thread, the engine's threads and the rest (renderers) used while
// the app answered. Then a second answer (regenerated), stopped after a second of streaming: how
// long the GUI thread went without running its event loop (a 2 ms timer on it records the gaps
// between its ticks; a gap over 16 ms is a dropped frame at 60 Hz), and how long Stop took. The
// timer runs in the second answer only: its 500 wake-ups a second take the engine's cores too.
// Last, the first text, in alternated trials on other prompts: the engine alone's (from the
// prompt's text to the answer's first text) and the app's (from send() to the frame showing it,
// in a new chat), with their per-trial differences; one run of each is too noisy to compare.
#include <QApplication>
#include <QElapsedTimer>
#include <QMetaEnum>
#include <QFileInfo>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QTimer>
#include <QtQml/qqmlextensionplugin.h>

#include <algorithm>
#include <vector>

#include "app/app_shell.h"
#include "app/hub/library_files.h"
#include "app/tools/engine_alone.h"
#include "app/tools/thread_cpu.h"

Q_IMPORT_QML_PLUGIN(Ember_AppPlugin)
Q_IMPORT_QML_PLUGIN(EmberPlugin)

namespace {

const QString kPrompt = QStringLiteral("And God said, Let there be light");
// The first-text trials' prompts, each new to the context so neither side reuses a cached prompt.
const QStringList kTrialPrompts = {
    QStringLiteral("In the beginning God created the heaven"), QStringLiteral("And the earth was without form"),
    QStringLiteral("And God saw the light, that it was good"), QStringLiteral("And God called the light Day"),
    QStringLiteral("Let the waters under the heaven be gathered"), QStringLiteral("So the evening and the morning"),
    QStringLiteral("Now the serpent was more subtil"), QStringLiteral("Unto the woman he said"),
};
constexpr int kTrialTokens = 4;
constexpr qint64 kSeed = 1234;  // the same tokens in both runs

const char* graphics_api(QQuickWindow* window) {
    switch (window->rendererInterface()->graphicsApi()) {
        case QSGRendererInterface::Software: return "software";
        case QSGRendererInterface::OpenGL: return "OpenGL";
        case QSGRendererInterface::Vulkan: return "Vulkan";
        default: return "other";
    }
}

double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace ember::app;
    QApplication app(argc, argv);
    QTemporaryDir scratch;
    const QString src = argc > 1 ? QString::fromLocal8Bit(argv[1]) : QStringLiteral(EMBER_DEMO_MODEL);
    const int tokens = argc > 2 ? std::atoi(argv[2]) : 300;
    const QString model = copy_model_with_statistics(src, scratch.path() + "/model");
    // AppShell::start's budget for a sparse model without a GPU.
    const qint64 budget = QFileInfo(model).size() * 9 / 10;

    GenerationSettings settings;
    settings.temperature = 0.7;
    settings.max_tokens = tokens;
    settings.seed = kSeed;
    probe::EngineAlone engine_alone;
    if (QString error = engine_alone.open(model, budget); !error.isEmpty())
        return std::fprintf(stderr, "engine alone: %s\n", qPrintable(error)), 1;
    const probe::EngineRun alone = engine_alone.answer(kPrompt, sampling_params(settings, 0), tokens);
    if (!alone.error.isEmpty()) return std::fprintf(stderr, "engine alone: %s\n", qPrintable(alone.error)), 1;

    AppOptions options;
    options.data_dir = scratch.path() + "/data";
    options.model_path = model;
    AppShell shell(options);
    if (!shell.start()) return 1;
    auto& engine = shell.engine();
    auto& chat = shell.chat();
    auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
    const pid_t gui_tid = ::gettid();
    int frames = 0;
    double text_ms = -1, shown_ms = -1;  // the first text in the model, and the frame after it
    QElapsedTimer clock, since_send, since_regenerate;
    QObject::connect(window, &QQuickWindow::frameSwapped, [&] {
        ++frames;
        if (text_ms >= 0 && shown_ms < 0) shown_ms = double(since_send.nsecsElapsed()) / 1e6;
    });
    QObject::connect(chat.messages(), &QAbstractItemModel::dataChanged, [&] {
        const auto& rows = chat.messages()->messages();
        if (text_ms < 0 && rows.size() == 2 && !rows.back().content.isEmpty())
            text_ms = double(since_send.nsecsElapsed()) / 1e6;
    });

    std::vector<double> gaps;
    std::vector<std::pair<double, double>> long_gaps;  // (ms since the prompt was sent, gap)
    double send_ms = 0;  // of the first gap, the part spent in regenerate() itself
    probe::ThreadCpu cpu_before;
    QTimer tick;
    tick.setInterval(2);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        gaps.push_back(double(clock.nsecsElapsed()) / 1e6);
        if (gaps.back() > 16.0) long_gaps.emplace_back(double(since_regenerate.nsecsElapsed()) / 1e6, gaps.back());
        clock.restart();
    });
    // The question is sent once the window has drawn nothing for a while, as a user would type it:
    // the first frames after start (the tab bar's highlight grows into place for ~2 s) are not the
    // answer's.
    QTimer settled;
    settled.setSingleShot(true);
    settled.setInterval(500);
    QObject::connect(window, &QQuickWindow::frameSwapped, &settled, [&] {
        if (settled.isActive()) settled.start();
    });
    QObject::connect(&engine, &EngineController::statusChanged, [&] {
        if (engine.status() == EngineController::Status::Ready && chat.messages()->rowCount() == 0) settled.start();
    });
    // The phases, in order: the measured answer, the stopped one, the first-text trials.
    enum class Phase { Rate, Stop, Trials } phase = Phase::Rate;
    std::vector<double> trial_alone_ms, trial_app_ms;
    const auto send = [&](const QString& prompt) {
        text_ms = shown_ms = -1;
        since_send.start();
        chat.send(prompt);
    };
    const auto print_trials = [&] {
        std::vector<double> differences;
        std::printf("first text, %zu alternated trials (ms): engine alone / app on screen after send()\n",
                    trial_app_ms.size());
        for (size_t i = 0; i < trial_app_ms.size(); ++i) {
            differences.push_back(trial_app_ms[i] - trial_alone_ms[i]);
            std::printf("  %.1f / %.1f\n", trial_alone_ms[i], trial_app_ms[i]);
        }
        std::printf("first text medians: engine alone %.1f ms, app %.1f ms, app - engine alone %+.1f ms\n",
                    median(trial_alone_ms), median(trial_app_ms), median(differences));
        QCoreApplication::quit();
    };
    QObject::connect(&settled, &QTimer::timeout, [&] {
        if (phase == Phase::Trials) {
            // The last trial's text is on screen by now: its answer ended, the window is still.
            if (trial_app_ms.size() < trial_alone_ms.size()) trial_app_ms.push_back(shown_ms);
            if (trial_app_ms.size() == size_t(kTrialPrompts.size())) return print_trials();
            // Alternated: the engine alone, then the app on the same prompt in a new chat.
            const QString& prompt = kTrialPrompts[qsizetype(trial_alone_ms.size())];
            const probe::EngineRun run = engine_alone.answer(prompt, sampling_params(settings, 0), kTrialTokens);
            trial_alone_ms.push_back(run.first_text_ms);
            chat.newChat();
            chat.set_system_prompt(QString());
            return send(prompt);
        }
        // The engine alone's prompt: the question as plain text, no chat format around it.
        chat.set_prompt_format(QStringLiteral("completion"));
        chat.set_system_prompt(QString());
        chat.set_max_tokens(tokens);
        chat.set_temperature(settings.temperature);
        chat.set_seed(double(kSeed));
        cpu_before = probe::thread_cpu(gui_tid);
        frames = 0;
        send(kPrompt);
    });
    // The second answer, stopped once it has streamed for a second.
    bool stop_planned = false;
    QElapsedTimer since_stop;
    QObject::connect(chat.messages(), &QAbstractItemModel::dataChanged, [&] {
        if (phase != Phase::Stop || stop_planned || chat.messages()->messages().back().content.isEmpty()) return;
        stop_planned = true;
        QTimer::singleShot(1000, [&] {
            since_stop.start();
            chat.stop();
        });
    });
    QObject::connect(&chat, &ChatController::answerFinished, [&](const ember::app::GenerationStats& s) {
        if (phase == Phase::Trials) return settled.start();
        if (phase == Phase::Stop) {
            tick.stop();
            std::sort(gaps.begin(), gaps.end());
            const auto at = [&](double q) { return gaps.empty() ? 0.0 : gaps[size_t(q * double(gaps.size() - 1))]; };
            const long over = long(std::count_if(gaps.begin(), gaps.end(), [](double g) { return g > 16.0; }));
            std::printf("second answer, GUI thread gaps over %zu ticks: median %.2f ms, p99 %.2f ms, max %.2f ms, %ld "
                        "over 16 ms; regenerate() took %.1f ms\n",
                        gaps.size(), at(0.5), at(0.99), gaps.empty() ? 0.0 : gaps.back(), over, send_ms);
            for (const auto& [when, gap] : long_gaps) std::printf("  %.1f ms gap ending %.0f ms after regenerate()\n", gap, when);
            std::printf("Stop: the answer (%s) ended %.1f ms after stop()\n", QMetaEnum::fromType<ember::app::GenerationStats::StopReason>().valueToKey(int(s.stop_reason)),
                        since_stop.isValid() ? double(since_stop.nsecsElapsed()) / 1e6 : -1.0);
            phase = Phase::Trials;
            chat.set_max_tokens(kTrialTokens);
            return settled.start();
        }
        const double wall_s = double(since_send.nsecsElapsed()) / 1e9;
        const probe::ThreadCpu cpu = probe::thread_cpu(gui_tid);
        const auto share = [&](double after, double before) { return 100.0 * (after - before) / wall_s; };
        const double rate = s.tokens_per_second;
        std::printf("scene graph: %s on %s; device %s\n", graphics_api(window), qPrintable(QGuiApplication::platformName()),
                    qPrintable(alone.device));
        std::printf("engine alone: %d tokens at %.1f tok/s, first text %.1f ms\n", alone.tokens,
                    alone.tokens_per_second, alone.first_text_ms);
        std::printf("app:          %d tokens at %.1f tok/s (%.0f %% of the engine alone), first token %.1f ms in the "
                    "engine, in the model %.1f ms and on screen %.1f ms after send()\n",
                    s.generated_tokens, rate, 100.0 * rate / alone.tokens_per_second,
                    s.first_token_ms, text_ms, shown_ms);
        std::printf("CPU while the app answered (%.2f s), %% of one core: GUI thread %.1f, engine threads %.1f, "
                    "other threads %.1f\n",
                    wall_s, share(cpu.gui_s, cpu_before.gui_s), share(cpu.engine_s, cpu_before.engine_s),
                    share(cpu.other_s, cpu_before.other_s));
        std::printf("%d frames rendered (%.1f a second)\n", frames, frames / wall_s);
        phase = Phase::Stop;
        chat.set_max_tokens(2000);
        QTimer::singleShot(0, [&] {
            // The clock runs from before regenerate(): its work blocks the GUI thread too.
            clock.start();
            since_regenerate.start();
            chat.regenerate();
            send_ms = double(since_regenerate.nsecsElapsed()) / 1e6;
            tick.start();
        });
    });
    return QApplication::exec();
}
