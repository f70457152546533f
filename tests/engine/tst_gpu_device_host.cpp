// The GPU device's memory, on the host stand-in for the GPU runtime (gpu_host/): the device
// takes exactly its footprint from the GPU, in one allocation, whatever it computes; a new
// footprint keeps what is held, also when the GPU has no room for the old and new allocations
// at once; a layer whose rows cannot grow where they lie moves within the GPU, uploading only
// its new rows.
#include <QtTest>

#include <vector>

#include "backend_test_helpers.h"
#include "common/error.h"
#include "gpu_runtime_host.h"

using namespace backend_test;
namespace host = ember::backend::gpu_host;

namespace {

constexpr uint64_t kMiB = 1 << 20;

// Whether the resident neurons `ids` of layer il compute as the CPU does.
bool layer_computes(ember::backend::Device& dev, int32_t il, const Layer& layer, const std::vector<int32_t>& ids) {
    const std::vector<float> x = random_vector(size_t(layer.n_embd), uint32_t(il + 40));
    ember::tensor::PreparedActivations prepared;
    prepared.reserve(1, layer.n_embd);
    prepared.prepare(layer.type, x.data(), 1, layer.n_embd);
    std::vector<float> g(ids.size(), NAN), v(ids.size(), NAN);
    dev.begin_dots(il, prepared.row(0), ids, g.data(), v.data());
    dev.wait();
    const ember::backend::FfnRows rows = layer.rows();
    for (size_t j = 0; j < ids.size(); ++j)
        if (!close_to_cpu(rows.up, ids[j], prepared.row(0), v[j]) || !close_to_cpu(rows.gate, ids[j], prepared.row(0), g[j]))
            return false;
    return true;
}

}  // namespace

class TestGpuDeviceHost : public QObject {
    Q_OBJECT

private slots:
    void init() { host::set_total_memory(64 * kMiB); }

    void the_device_takes_exactly_its_footprint() {
        const Layer a(DType::Q4_0, 256, 2000, true, 1), b(DType::Q8_0, 256, 1500, true, 2);
        auto dev = ember::backend::make_gpu_device(0, 8 * kMiB);
        QCOMPARE(host::allocated_memory(), uint64_t(0));
        dev->set_footprint(4 * kMiB);
        QCOMPARE(host::allocated_memory(), 4 * kMiB);
        dev->set_dense({}, kScratch);
        const std::vector<int32_t> hot_a = pick(2000, 1200, 3), hot_b = pick(1500, 900, 4);
        dev->set_hot_neurons(0, a.rows(), hot_a);
        dev->set_hot_neurons(1, b.rows(), hot_b);
        QVERIFY(layer_computes(*dev, 0, a, hot_a));
        QVERIFY(layer_computes(*dev, 1, b, hot_b));
        std::vector<float> y(256);
        const std::vector<float> coef = random_vector(hot_a.size(), 5);
        dev->begin_down(0, hot_a, coef.data(), y.data());
        dev->wait();
        QCOMPARE(host::allocated_memory(), 4 * kMiB);  // scratch included

        dev->set_footprint(dev->used_bytes());
        QCOMPARE(host::allocated_memory(), dev->used_bytes());
        QVERIFY(layer_computes(*dev, 0, a, hot_a));
        QVERIFY(layer_computes(*dev, 1, b, hot_b));
        dev.reset();
        QCOMPARE(host::allocated_memory(), uint64_t(0));
    }

    void a_new_footprint_keeps_what_is_held_without_room_for_two() {
        const Layer a(DType::F16, 128, 3000, true, 6);
        const uint64_t per_neuron = 3 * ember::tensor::row_bytes(DType::F16, 128);
        const uint64_t small = kScratch + 2000 * per_neuron, large = kScratch + 2900 * per_neuron;
        host::set_total_memory(large + small / 2);  // never both at once
        auto dev = ember::backend::make_gpu_device(0, large);
        dev->set_footprint(small);
        dev->set_dense({}, kScratch);
        const std::vector<int32_t> hot = pick(3000, 2000, 7);
        dev->set_hot_neurons(0, a.rows(), hot);
        const uint64_t uploaded = dev->traffic().bytes_uploaded;

        dev->set_footprint(large);
        QCOMPARE(host::allocated_memory(), large);
        QVERIFY(layer_computes(*dev, 0, a, hot));
        const std::vector<int32_t> more = pick(3000, 2900, 8);
        dev->set_hot_neurons(0, a.rows(), more);
        size_t arrivals = 0;
        for (int32_t id : more) arrivals += !std::binary_search(hot.begin(), hot.end(), id);
        QCOMPARE(dev->traffic().bytes_uploaded, uploaded + arrivals * per_neuron);
        QVERIFY(layer_computes(*dev, 0, a, more));

        // Asking for more than the GPU has fails and leaves the device as it was.
        dev->set_budget_bytes(large + small);
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, dev->set_footprint(large + small));
        QCOMPARE(dev->footprint(), large);
        QVERIFY(layer_computes(*dev, 0, a, more));
    }

    void a_layer_that_cannot_grow_in_place_moves_within_the_gpu() {
        const Layer a(DType::Q8_0, 128, 1000, true, 9), b(DType::Q8_0, 128, 1000, true, 10);
        const uint64_t per_neuron = 3 * ember::tensor::row_bytes(DType::Q8_0, 128);
        auto dev = ember::backend::make_gpu_device(0, 8 * kMiB);
        dev->set_footprint(8 * kMiB);
        dev->set_dense({}, kScratch);
        const std::vector<int32_t> hot_a = pick(1000, 300, 11), hot_b = pick(1000, 300, 12);
        dev->set_hot_neurons(0, a.rows(), hot_a);
        dev->set_hot_neurons(1, b.rows(), hot_b);  // right after layer 0's rows
        const uint64_t uploaded = dev->traffic().bytes_uploaded, copies = host::device_copies();

        const std::vector<int32_t> grown = pick(1000, 700, 13);
        dev->set_hot_neurons(0, a.rows(), grown);
        size_t arrivals = 0;
        for (int32_t id : grown) arrivals += !std::binary_search(hot_a.begin(), hot_a.end(), id);
        QVERIFY(arrivals < grown.size());
        QCOMPARE(dev->traffic().bytes_uploaded, uploaded + arrivals * per_neuron);
        QVERIFY(host::device_copies() > copies);
        QVERIFY(layer_computes(*dev, 0, a, grown));
        QVERIFY(layer_computes(*dev, 1, b, hot_b));

        // And back down: the rows past the new size move into the freed slots.
        const std::vector<int32_t> fewer(grown.begin(), grown.begin() + 100);
        dev->set_hot_neurons(0, a.rows(), fewer);
        QCOMPARE(dev->traffic().bytes_uploaded, uploaded + arrivals * per_neuron);
        QVERIFY(layer_computes(*dev, 0, a, fewer));
    }
};

QTEST_GUILESS_MAIN(TestGpuDeviceHost)
#include "tst_gpu_device_host.moc"
