// Measures how long the GUI thread goes without running its event loop while the app streams
// an answer: `ember-frame-probe [MODEL] [TOKENS]`. A 2 ms timer on the GUI thread records the
// gap between its ticks; a gap over 16 ms is a dropped frame at 60 Hz. Prints the median, the
// 99th percentile and the largest gap, and the frames the window rendered.
#include <QApplication>
#include <QElapsedTimer>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QTimer>
#include <QtQml/qqmlextensionplugin.h>

#include <algorithm>
#include <vector>

#include "app/app_shell.h"
#include "app/hub/library_files.h"

Q_IMPORT_QML_PLUGIN(Ember_AppPlugin)
Q_IMPORT_QML_PLUGIN(EmberPlugin)

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QTemporaryDir scratch;
    const QString src = argc > 1 ? QString::fromLocal8Bit(argv[1]) : QStringLiteral(EMBER_DEMO_MODEL);
    const int tokens = argc > 2 ? std::atoi(argv[2]) : 300;
    const QString model = ember::app::copy_model_with_statistics(src, scratch.path() + "/model");

    ember::app::AppOptions options;
    options.data_dir = scratch.path() + "/data";
    options.model_path = model;
    ember::app::AppShell shell(options);
    if (!shell.start()) return 1;
    auto& engine = shell.engine();
    auto& chat = shell.chat();
    auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
    int frames = 0;
    QObject::connect(window, &QQuickWindow::frameSwapped, [&] { ++frames; });

    std::vector<double> gaps;
    std::vector<std::pair<double, double>> long_gaps;  // (ms since the prompt was sent, gap)
    QElapsedTimer clock, since_send;
    double send_ms = 0;  // of the first gap, the part spent in send() itself
    QTimer tick;
    tick.setInterval(2);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        gaps.push_back(double(clock.nsecsElapsed()) / 1e6);
        if (gaps.back() > 16.0) long_gaps.emplace_back(double(since_send.nsecsElapsed()) / 1e6, gaps.back());
        clock.restart();
    });
    QObject::connect(&engine, &ember::app::EngineController::statusChanged, [&] {
        if (engine.status() == ember::app::EngineController::Status::Ready && chat.messages()->rowCount() == 0) {
            chat.set_max_tokens(tokens);
            chat.set_temperature(0.7);
            // The clock runs from before send(): its database writes block the GUI thread too.
            clock.start();
            since_send.start();
            chat.send(QStringLiteral("And God said, Let there be light"));
            send_ms = double(since_send.nsecsElapsed()) / 1e6;
            tick.start();
        }
    });
    QObject::connect(&chat, &ember::app::ChatController::answerFinished, [&](const ember::app::GenerationStats& s) {
        tick.stop();
        std::sort(gaps.begin(), gaps.end());
        const auto at = [&](double q) { return gaps.empty() ? 0.0 : gaps[size_t(q * double(gaps.size() - 1))]; };
        const long over = long(std::count_if(gaps.begin(), gaps.end(), [](double g) { return g > 16.0; }));
        std::printf("%d tokens at %.1f tok/s; GUI thread gaps over %zu ticks: median %.2f ms, p99 %.2f ms, max %.2f ms, "
                    "%ld over 16 ms; %d frames rendered\n",
                    s.generated_tokens, s.tokens_per_second, gaps.size(), at(0.5),
                    at(0.99), gaps.empty() ? 0.0 : gaps.back(), over, frames);
        std::printf("send() took %.1f ms\n", send_ms);
        for (const auto& [when, gap] : long_gaps) std::printf("  %.1f ms gap ending %.0f ms after the prompt\n", gap, when);
        QCoreApplication::quit();
    });
    return QApplication::exec();
}
