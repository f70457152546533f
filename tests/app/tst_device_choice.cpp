// Where a model's hot neurons go, from the GPU probe and the "Use the GPU" switch: the first
// usable GPU within its free memory; everything on the CPU when the user turns a GPU off; the
// sim preview, with the probe's reason, when there is no usable GPU to turn on or off.
#include <QtTest>

#include "app/engine/device_choice.h"

using ember::app::choose_device;

namespace {

constexpr uint64_t kGiB = uint64_t(1) << 30;

ember::GpuInfo gpu(int index, uint64_t free_gib, std::string unusable = {}) {
    ember::GpuInfo g;
    g.index = index;
    g.name = "Test GPU " + std::to_string(index);
    g.total_bytes = g.free_bytes = free_gib * kGiB;
    g.unusable = std::move(unusable);
    return g;
}

}  // namespace

class TestDeviceChoice : public QObject {
    Q_OBJECT

private slots:
    void no_gpu_previews_one_whatever_the_switch() {
        ember::GpuProbe probe;
        probe.reason = "no NVIDIA driver is installed";
        for (bool use_gpu : {true, false}) {
            const auto c = choose_device(probe, use_gpu, 3 * kGiB);
            QCOMPARE(c.device, std::string("sim"));
            QVERIFY(!c.gpu_found);
            QCOMPARE(c.budget_bytes, 3 * kGiB);  // the preview is of a GPU this size
            QCOMPARE(c.gpu_free_bytes, uint64_t(0));
            QCOMPARE(c.no_gpu_reason, QStringLiteral("no NVIDIA driver is installed"));
        }
    }

    void an_unusable_gpu_is_no_gpu() {
        ember::GpuProbe probe;
        probe.gpus.push_back(gpu(0, 2, "compute capability 3.5 is older than this build supports"));
        probe.reason = "no GPU this build can use";
        const auto c = choose_device(probe, true, kGiB);
        QCOMPARE(c.device, std::string("sim"));
        QVERIFY(!c.gpu_found);
        QCOMPARE(c.no_gpu_reason, QStringLiteral("no GPU this build can use"));
    }

    void the_first_usable_gpu_within_its_free_memory() {
        ember::GpuProbe probe;
        probe.gpus.push_back(gpu(0, 8, "too old"));
        probe.gpus.push_back(gpu(1, 4));
        auto c = choose_device(probe, true, 6 * kGiB);
        QCOMPARE(c.device, std::string("gpu:1"));
        QVERIFY(c.gpu_found);
        QCOMPARE(c.budget_bytes, 4 * kGiB);
        QCOMPARE(c.gpu_free_bytes, 4 * kGiB);
        QVERIFY(c.no_gpu_reason.isEmpty());
        c = choose_device(probe, true, 2 * kGiB);
        QCOMPARE(c.budget_bytes, 2 * kGiB);
    }

    void a_gpu_turned_off_leaves_all_on_the_cpu() {
        ember::GpuProbe probe;
        probe.gpus.push_back(gpu(0, 4));
        const auto c = choose_device(probe, false, 2 * kGiB);
        QCOMPARE(c.device, std::string("cpu"));
        QVERIFY(c.gpu_found);
        QCOMPARE(c.gpu_free_bytes, uint64_t(0));
        QVERIFY2(c.no_gpu_reason.contains(QStringLiteral("turned off by you")), qPrintable(c.no_gpu_reason));
    }
};

QTEST_GUILESS_MAIN(TestDeviceChoice)
#include "tst_device_choice.moc"
