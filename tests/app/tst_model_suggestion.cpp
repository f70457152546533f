// The first-run suggestion: the largest PowerInfer model that fits memory (a GPU speeds it up but
// holds no more of it) and, without a GPU, answers at a readable pace; none when the computer is
// too small; and the hardware read from this machine.
#include <QtTest>

#include "app/hub/model_suggestion.h"

using ember::app::Hardware;

namespace {

constexpr qint64 kGiB = qint64(1) << 30;

Hardware machine(qint64 ram_gib, qint64 gpu_free_gib = 0, int threads = 8) {
    Hardware hw;
    hw.ram_bytes = ram_gib * kGiB;
    hw.cpu_threads = threads;
    if (gpu_free_gib > 0) {
        ember::GpuInfo g;
        g.name = "Test GPU";
        g.total_bytes = g.free_bytes = uint64_t(gpu_free_gib * kGiB);
        hw.gpus.gpus.push_back(g);
    } else {
        hw.gpus.reason = "no NVIDIA driver is installed";
    }
    return hw;
}

}  // namespace

class TestModelSuggestion : public QObject {
    Q_OBJECT

private slots:
    void largest_that_fits() {
        auto s = ember::app::suggest_model(machine(24));
        QCOMPARE(s.name, QStringLiteral("ProSparse-Llama-2-13B"));
        QCOMPARE(s.repo, QStringLiteral("PowerInfer/prosparse-llama-2-13b-gguf"));
        QVERIFY(s.why.contains(QStringLiteral("no GPU")));
        // A GPU is named, but it does not make a model fit: the whole model is read into memory
        // (a 40B model on 16 GiB would be "too large for this machine" on its fit badge).
        s = ember::app::suggest_model(machine(16, 24));
        QCOMPARE(s.name, QStringLiteral("ProSparse-Llama-2-13B"));
        QVERIFY(s.why.contains(QStringLiteral("Test GPU")));
        QCOMPARE(ember::app::suggest_model(machine(32, 24)).name, QStringLiteral("ReluFalcon-40B"));
        QCOMPARE(ember::app::suggest_model(machine(64, 24)).name, QStringLiteral("ReluLLaMA-70B"));
        QCOMPARE(ember::app::suggest_model(machine(8)).name, QStringLiteral("ProSparse-Llama-2-7B"));
    }

    // Two CPU threads without a GPU would read a 13B model at about 3 tokens a second: the
    // suggestion is the 7B one, and it says why and how fast. A GPU takes the hot neurons off the
    // CPU, so there the 13B model is suggested as before.
    void without_a_gpu_few_threads_get_a_model_they_run_at_a_readable_pace() {
        auto s = ember::app::suggest_model(machine(24, 0, 2));
        QCOMPARE(s.name, QStringLiteral("ProSparse-Llama-2-7B"));
        QVERIFY2(s.why.contains(QStringLiteral("on 2 CPU threads")), qPrintable(s.why));
        QVERIFY2(s.why.contains(QStringLiteral("ProSparse-Llama-2-13B fits too, but would answer at about 2 tokens a second")),
                 qPrintable(s.why));
        s = ember::app::suggest_model(machine(24));
        QCOMPARE(s.name, QStringLiteral("ProSparse-Llama-2-13B"));
        QVERIFY2(s.why.contains(QStringLiteral("roughly 11 tokens a second on 8 CPU threads")), qPrintable(s.why));
        QVERIFY2(!s.why.contains(QStringLiteral("fits too")), qPrintable(s.why));
        QCOMPARE(ember::app::suggest_model(machine(24, 24, 2)).name, QStringLiteral("ProSparse-Llama-2-13B"));
    }

    void nothing_when_too_small() {
        const auto s = ember::app::suggest_model(machine(4));
        QVERIFY(s.repo.isEmpty());
        QVERIFY(s.why.contains(QStringLiteral("too little")));
    }

    void reads_this_machine() {
        const Hardware hw = ember::app::detect_hardware();
        QVERIFY(hw.ram_bytes > kGiB);
        QVERIFY(hw.cpu_threads >= 1);
        QVERIFY(hw.gpus.first_usable() || !hw.gpus.reason.empty());
    }
};

QTEST_GUILESS_MAIN(TestModelSuggestion)
#include "tst_model_suggestion.moc"
