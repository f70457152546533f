// Hot-neuron placement and the GPU index file: the bucket solver on hand-made statistics with
// known answers, equality with PowerInfer's own solver output for the tiny ReLU LLaMA
// (tests/data/tiny-relu-llama/gpuidx.capacity-*.gguf), byte-identical index files, the byte
// budget pipeline, re-planning diffs, freshness, and corrupt index files.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "common/error.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "sparse/gpu_index.h"
#include "sparse/placement.h"

#if __has_include("sparse/activation_file.h")
#include "sparse/activation_file.h"
#define EMBER_HAVE_ACTIVATION_FILE 1
#endif

using namespace ember;
using namespace ember::sparse;

using Activation = std::vector<std::vector<double>>;
using Counts = std::vector<int64_t>;
using HotSets = std::vector<std::vector<int32_t>>;
// std::vector<T> of a known T is a metatype in Qt 6 already (Q_DECLARE_SEQUENTIAL_CONTAINER_METATYPE),
// so these work as QTest columns without Q_DECLARE_METATYPE.

namespace {

const std::string kData = EMBER_TEST_DATA_DIR "/tiny-relu-llama";
constexpr int32_t kTinyLayers = 6;
constexpr int64_t kTinyNff = 1024;

std::string powerinfer_index(int64_t capacity) {
    return kData + "/gpuidx.capacity-" + std::to_string(capacity) + ".gguf";
}

std::vector<uint8_t> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// The error text of `fn`, or a marker when it did not throw.
template <class F>
std::string error_of(F&& fn) {
    try {
        fn();
    } catch (const EngineError& e) {
        return e.what();
    }
    return "<no error>";
}

// ---- Raw index files, valid or broken on purpose --------------------------------------------

struct RawTensor {
    std::string name;
    std::vector<int64_t> ne;
    uint32_t type = 18;
    std::vector<int32_t> values;
};

struct RawIndex {
    std::vector<std::pair<std::string, gguf::Value>> kv;
    std::vector<RawTensor> tensors;
};

// A valid index: n_layer layers of n_ff neurons, layer il hot on neurons {il, il+2, ...} up to
// il+1 of them.
RawIndex valid_raw(int32_t n_layer, int64_t n_ff) {
    RawIndex r;
    r.kv.emplace_back("general.architecture", gguf::Value::string("generic.gpu_index"));
    r.kv.emplace_back("generic.gpu_index.block_count", gguf::Value::u32(uint32_t(n_layer)));
    r.kv.emplace_back("split.vram_capacity", gguf::Value::u64(4096));
    for (int32_t il = 0; il < n_layer; ++il) {
        std::vector<int32_t> mask(size_t(n_ff), 0), ids;
        for (int64_t i = il; i < n_ff && int64_t(ids.size()) <= il; i += 2) {
            mask[size_t(i)] = 1;
            ids.push_back(int32_t(i));
        }
        r.tensors.push_back({"blk." + std::to_string(il) + ".gpu_idx", {n_ff}, 18, mask});
        r.tensors.push_back({"blk." + std::to_string(il) + ".gpu_bucket", {int64_t(ids.size())}, 18, ids});
    }
    return r;
}

void write_raw(const std::string& path, const RawIndex& r) {
    gguf::Writer w(gguf::TypeIds::PowerInfer);
    for (const auto& [k, v] : r.kv) w.set(k, v);
    for (const auto& t : r.tensors) {
        std::vector<uint8_t> bytes(t.values.size() * 4);
        if (!bytes.empty()) std::memcpy(bytes.data(), t.values.data(), bytes.size());
        if (t.type == 0) {  // F32 with the same element count
            std::vector<float> f(t.values.begin(), t.values.end());
            std::memcpy(bytes.data(), f.data(), bytes.size());
        }
        w.add_tensor(t.name, t.ne, t.type, std::move(bytes));
    }
    w.write(path, "PWRI");
}

enum Corruption {
    TooFewTensors,
    WrongNff,
    ValueTwo,
    UnsortedBucket,
    DuplicateInBucket,
    BucketNotMarked,
    BucketCountMismatch,
    BucketOutOfRange,
    ForeignArchitecture,
    BlockCountMismatch,
    BlockCountType,
    MissingCapacity,
    SwappedTensors,
    WrongTensorType,
    TwoDimensional,
};

// Placement costs with small numbers: 4 layers, attention 100, predictor 20, ffn_norm 4,
// output 50, K and V 80 each, 8 neurons of 3 bytes per layer, buckets of 2, margin 30.
PlacementCosts small_costs() {
    PlacementCosts c;
    c.attn_bytes = {100, 100, 100, 100};
    c.predictor_bytes = {20, 20, 20, 20};
    c.ffn_norm_bytes = {4, 4, 4, 4};
    c.output_bytes = 50;
    c.kv_k_bytes = 80;
    c.kv_v_bytes = 80;
    c.neuron_bytes = {3, 3, 3, 3};
    c.n_ff = {8, 8, 8, 8};
    c.margin_bytes = 30;
    c.bucket = 2;
    return c;
}

Activation small_activation() {
    return {{9, 1, 5, 3, 0, 2, 8, 4}, {7, 7, 1, 0, 6, 2, 2, 3}, {0, 0, 1, 0, 0, 0, 1, 0}, {4, 4, 4, 4, 4, 4, 4, 4}};
}

}  // namespace

class TestPlacement : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    std::string path(const std::string& name) const { return dir_.path().toStdString() + "/" + name; }

private slots:
    // ---- Solver -------------------------------------------------------------------------

    void solve_hot_counts_data() {
        QTest::addColumn<Activation>("activation");
        QTest::addColumn<qint64>("capacity");
        QTest::addColumn<qint64>("bucket");
        QTest::addColumn<Counts>("expected");

        // Layer 0 sorted: 5 3 | 2 1 (buckets 8, 3); layer 1 sorted: 4 4 | 1 0 (buckets 8, 1).
        const Activation two = {{5, 1, 3, 2}, {4, 4, 0, 1}};
        QTest::newRow("capacity 0") << two << qint64(0) << qint64(2) << Counts{0, 0};
        QTest::newRow("one bucket, tie to lower layer") << two << qint64(2) << qint64(2) << Counts{2, 0};
        QTest::newRow("capacity rounds down to buckets") << two << qint64(3) << qint64(2) << Counts{2, 0};
        QTest::newRow("two buckets") << two << qint64(4) << qint64(2) << Counts{2, 2};
        QTest::newRow("three buckets") << two << qint64(6) << qint64(2) << Counts{4, 2};
        QTest::newRow("capacity = everything") << two << qint64(8) << qint64(2) << Counts{4, 4};
        QTest::newRow("capacity > everything") << two << qint64(1000000) << qint64(2) << Counts{4, 4};

        // n_ff 5 and 3 with buckets of 2: layer 0 sorted 5 4 | 3 2 | 1 (9, 5, partial 1);
        // layer 1 sorted 10 0 | 0 (10, partial 0). A partial bucket costs a whole one.
        const Activation ragged = {{1, 2, 3, 4, 5}, {0, 0, 10}};
        QTest::newRow("partial: hottest bucket") << ragged << qint64(2) << qint64(2) << Counts{0, 2};
        QTest::newRow("partial: two") << ragged << qint64(4) << qint64(2) << Counts{2, 2};
        QTest::newRow("partial: three") << ragged << qint64(6) << qint64(2) << Counts{4, 2};
        QTest::newRow("partial: layer 0 completes") << ragged << qint64(8) << qint64(2) << Counts{5, 2};
        QTest::newRow("partial: both complete") << ragged << qint64(10) << qint64(2) << Counts{5, 3};
        QTest::newRow("partial: more than all") << ragged << qint64(100) << qint64(2) << Counts{5, 3};

        const Activation zeros = {{0, 0, 0, 0}, {0, 0, 0, 0}};
        QTest::newRow("all tied: lower layer first") << zeros << qint64(2) << qint64(2) << Counts{2, 0};
        QTest::newRow("all tied: prefix of lower layer") << zeros << qint64(4) << qint64(2) << Counts{4, 0};
        QTest::newRow("all tied: then next layer") << zeros << qint64(6) << qint64(2) << Counts{4, 2};

        QTest::newRow("no layers") << Activation{} << qint64(512) << qint64(256) << Counts{};
        QTest::newRow("empty layer") << Activation{{}, {1, 2}} << qint64(4) << qint64(2) << Counts{0, 2};

        // Default bucket: two layers of 512, the second twice as hot.
        const Activation wide = {std::vector<double>(512, 1.0), std::vector<double>(512, 2.0)};
        QTest::newRow("256: one bucket") << wide << qint64(256) << qint64(256) << Counts{0, 256};
        QTest::newRow("256: 511 is one bucket") << wide << qint64(511) << qint64(256) << Counts{0, 256};
        QTest::newRow("256: three buckets") << wide << qint64(768) << qint64(256) << Counts{256, 512};
        QTest::newRow("256: all") << wide << qint64(1024) << qint64(256) << Counts{512, 512};
    }

    void solve_hot_counts() {
        QFETCH(Activation, activation);
        QFETCH(qint64, capacity);
        QFETCH(qint64, bucket);
        QFETCH(Counts, expected);
        const Counts got = sparse::solve_hot_counts(activation, capacity, bucket);
        QCOMPARE(got, expected);
        int64_t placed = 0;
        for (int64_t c : got) placed += c;
        QVERIFY(placed <= capacity);
    }

    void solve_is_a_prefix_and_monotone() {
        // More capacity never takes neurons away from a layer.
        const Activation a = small_activation();
        Counts prev(a.size(), 0);
        for (int64_t cap = 0; cap <= 40; ++cap) {
            const Counts c = sparse::solve_hot_counts(a, cap, 2);
            for (size_t il = 0; il < a.size(); ++il) {
                QVERIFY2(c[il] >= prev[il], qPrintable(QString("capacity %1 layer %2").arg(cap).arg(il)));
                QVERIFY(c[il] % 2 == 0 || c[il] == int64_t(a[il].size()));
            }
            prev = c;
        }
    }

    void hot_neurons_data() {
        QTest::addColumn<std::vector<double>>("values");
        QTest::addColumn<qint64>("count");
        QTest::addColumn<std::vector<int32_t>>("expected");
        QTest::newRow("two hottest, ascending ids") << std::vector<double>{5, 1, 3, 2} << qint64(2)
                                                   << std::vector<int32_t>{0, 2};
        QTest::newRow("ties: lower id first") << std::vector<double>{1, 1, 1, 1} << qint64(2)
                                             << std::vector<int32_t>{0, 1};
        QTest::newRow("tie at the cut") << std::vector<double>{0, 3, 3, 1} << qint64(1) << std::vector<int32_t>{1};
        QTest::newRow("tie at the cut, later ids hotter") << std::vector<double>{2, 9, 2, 9, 2} << qint64(3)
                                                         << std::vector<int32_t>{0, 1, 3};
        QTest::newRow("none") << std::vector<double>{5, 1} << qint64(0) << std::vector<int32_t>{};
        QTest::newRow("all") << std::vector<double>{5, 1, 7} << qint64(3) << std::vector<int32_t>{0, 1, 2};
    }

    void hot_neurons() {
        QFETCH(std::vector<double>, values);
        QFETCH(qint64, count);
        QFETCH(std::vector<int32_t>, expected);
        const auto hot = sparse::hot_neurons({values}, {count});
        QCOMPARE(hot.size(), size_t(1));
        QCOMPARE(hot[0], expected);
    }

    void solver_rejects_bad_input_data() {
        QTest::addColumn<int>("which");
        QTest::addColumn<QString>("expected");
        QTest::newRow("negative activation") << 0 << "activation layer 1 neuron 2 = -1";
        QTest::newRow("NaN activation") << 1 << "activation layer 0 neuron 1 = nan";
        QTest::newRow("negative capacity") << 2 << "capacity = -5";
        QTest::newRow("zero bucket") << 3 << "bucket = 0";
        QTest::newRow("count above n_ff") << 4 << "layer 1 hot count 9 is outside [0, n_ff = 3]";
        QTest::newRow("count list too short") << 5 << "1 hot counts for 2 activation layers";
    }

    void solver_rejects_bad_input() {
        QFETCH(int, which);
        QFETCH(QString, expected);
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const std::string err = error_of([&] {
            switch (which) {
                case 0: sparse::solve_hot_counts({{1, 2, 3}, {1, 2, -1}}, 4, 2); break;
                case 1: sparse::solve_hot_counts({{1, nan}}, 4, 2); break;
                case 2: sparse::solve_hot_counts({{1, 2}}, -5, 2); break;
                case 3: sparse::solve_hot_counts({{1, 2}}, 4, 0); break;
                case 4: sparse::hot_neurons({{1, 2, 3}, {1, 2, 3}}, {1, 9}); break;
                case 5: sparse::hot_neurons({{1, 2, 3}, {1, 2, 3}}, {1}); break;
            }
        });
        QVERIFY2(QString::fromStdString(err).contains(expected), err.c_str());
    }

    // ---- PowerInfer's own files -------------------------------------------------------------

    void powerinfer_files_load_data() {
        QTest::addColumn<qint64>("capacity");
        QTest::addColumn<Counts>("counts");
        // Counts as PowerInfer's solver produced them (and as a Python re-run of the top-K gives).
        QTest::newRow("1536") << qint64(1536) << Counts{1024, 0, 0, 0, 256, 256};
        QTest::newRow("3072") << qint64(3072) << Counts{1024, 512, 256, 256, 512, 512};
        QTest::newRow("6144") << qint64(6144) << Counts{1024, 1024, 1024, 1024, 1024, 1024};
    }

    void powerinfer_files_load() {
        QFETCH(qint64, capacity);
        QFETCH(Counts, counts);
        const GpuIndex index = read_gpu_index(powerinfer_index(capacity), kTinyLayers, kTinyNff);
        QCOMPARE(index.n_layer(), kTinyLayers);
        QCOMPARE(index.n_ff, kTinyNff);
        QCOMPARE(index.vram_capacity, uint64_t(capacity) * 1000);  // what the generator passed as R
        QVERIFY(index.source.empty());
        for (int32_t il = 0; il < kTinyLayers; ++il) {
            QCOMPARE(int64_t(index.hot[size_t(il)].size()), counts[size_t(il)]);
            const auto mask = index.mask(il);
            int64_t marked = 0;
            for (int32_t v : mask) marked += v;
            QCOMPARE(marked, counts[size_t(il)]);
        }
    }

    void powerinfer_files_round_trip_byte_for_byte_data() { powerinfer_files_load_data(); }

    void powerinfer_files_round_trip_byte_for_byte() {
        QFETCH(qint64, capacity);
        const std::string theirs = powerinfer_index(capacity);
        const GpuIndex index = read_gpu_index(theirs, kTinyLayers, kTinyNff);
        const std::string ours = path("roundtrip-" + std::to_string(capacity) + ".gpuidx");
        write_gpu_index(ours, index);
        const auto a = read_all(theirs), b = read_all(ours);
        QVERIFY(!a.empty());
        QCOMPARE(b.size(), a.size());
        QVERIFY(a == b);
    }

    void solver_matches_powerinfer_data() { powerinfer_files_load_data(); }

    void solver_matches_powerinfer() {
        QFETCH(qint64, capacity);
        QFETCH(Counts, counts);
#ifndef EMBER_HAVE_ACTIVATION_FILE
        QFAIL("sparse/activation_file.h (read_activation_dir) has not landed yet: cannot read activation_N.pt");
#else
        Activation activation;
        try {
            activation = read_activation_dir(kData + "/activation", kTinyLayers, kTinyNff);
        } catch (const EngineError& e) {
            QFAIL(qPrintable(QString("read_activation_dir: ") + e.what()));
        }
        const Counts got = sparse::solve_hot_counts(activation, capacity);
        QCOMPARE(got, counts);
        const HotSets hot = sparse::hot_neurons(activation, got);
        const GpuIndex theirs = read_gpu_index(powerinfer_index(capacity), kTinyLayers, kTinyNff);
        for (int32_t il = 0; il < kTinyLayers; ++il)
            QVERIFY2(hot[size_t(il)] == theirs.hot[size_t(il)], qPrintable(QString("layer %1").arg(il)));

        // The whole file, written from Ember's own solution, is PowerInfer's byte for byte.
        GpuIndex mine;
        mine.n_ff = kTinyNff;
        mine.vram_capacity = uint64_t(capacity) * 1000;
        mine.hot = hot;
        const std::string ours = path("solved-" + std::to_string(capacity) + ".gpuidx");
        write_gpu_index(ours, mine);
        QVERIFY(read_all(ours) == read_all(powerinfer_index(capacity)));
#endif
    }

    void source_key_is_the_only_difference() {
        const std::string theirs = powerinfer_index(3072);
        GpuIndex index = read_gpu_index(theirs, kTinyLayers, kTinyNff);
        index.source = "ember-topk/1 model_bytes=1 model_mtime_ns=2 activation_fnv1a=3 vram_capacity=3072000 "
                       "capacity=3072 bucket=256";
        const std::string ours = path("with-source.gpuidx");
        write_gpu_index(ours, index);

        auto a = gguf::File::open(theirs);
        auto b = gguf::File::open(ours);
        QCOMPARE(b->magic(), std::string("PWRI"));
        QCOMPARE(b->version(), a->version());
        QCOMPARE(b->metadata().size(), a->metadata().size() + 1);
        for (size_t i = 0; i < a->metadata().size(); ++i) {
            QCOMPARE(b->metadata()[i].first, a->metadata()[i].first);
            const gguf::Value& va = a->metadata()[i].second;
            const gguf::Value& vb = b->metadata()[i].second;
            QCOMPARE(uint32_t(vb.type), uint32_t(va.type));
            if (std::holds_alternative<std::string>(va.data))
                QCOMPARE(std::get<std::string>(vb.data), std::get<std::string>(va.data));
            else
                QCOMPARE(std::get<int64_t>(vb.data), std::get<int64_t>(va.data));
        }
        QCOMPARE(b->metadata().back().first, std::string(kGpuIndexSourceKey));
        QCOMPARE(b->get_string(kGpuIndexSourceKey).value(), index.source);
        QCOMPARE(b->tensors().size(), a->tensors().size());
        for (size_t i = 0; i < a->tensors().size(); ++i) {
            const auto& ta = a->tensors()[i];
            const auto& tb = b->tensors()[i];
            QCOMPARE(tb.name, ta.name);
            QCOMPARE(tb.ne, ta.ne);
            QCOMPARE(tb.type, ta.type);
            QCOMPARE(tb.offset, ta.offset);
            QCOMPARE(tb.nbytes, ta.nbytes);
            QVERIFY(ta.nbytes == 0 || std::memcmp(ta.data, tb.data, ta.nbytes) == 0);
        }
        // Without the key the bytes are PowerInfer's again.
        index.source.clear();
        write_gpu_index(ours, index);
        QVERIFY(read_all(ours) == read_all(theirs));
    }

    void empty_layers_round_trip() {
        // ne = [0] gpu_bucket tensors everywhere (nothing hot), and one full layer.
        GpuIndex index;
        index.n_ff = 8;
        index.vram_capacity = 0;
        index.hot = {{}, {0, 1, 2, 3, 4, 5, 6, 7}, {}};
        const std::string p = path("empty.gpuidx");
        write_gpu_index(p, index);
        const GpuIndex back = read_gpu_index(p, 3, 8);
        QVERIFY(back.hot == index.hot);
        auto f = gguf::File::open(p, gguf::MappedFile::Mode::Map, {}, gguf::TypeIds::PowerInfer);
        QCOMPARE(f->tensors()[1].ne, std::vector<int64_t>{0});
        QCOMPARE(f->tensors()[1].nbytes, size_t(0));
        QCOMPARE(f->tensors()[1].offset, f->tensors()[2].offset);  // an empty blob takes no space
    }

    void write_rejects_bad_hot_sets() {
        GpuIndex index;
        index.n_ff = 8;
        index.hot = {{1, 1}};
        std::string err = error_of([&] { write_gpu_index(path("bad.gpuidx"), index); });
        QVERIFY2(err.find("bad.gpuidx") != std::string::npos && err.find("layer 0 element 1 = 1") != std::string::npos,
                 err.c_str());
        index.hot = {{8}};
        err = error_of([&] { write_gpu_index(path("bad.gpuidx"), index); });
        QVERIFY2(err.find("outside [0, n_ff = 8)") != std::string::npos, err.c_str());
    }

    // ---- Corrupt index files ----------------------------------------------------------------

    void corrupt_index_data() {
        QTest::addColumn<int>("corruption");
        QTest::addColumn<QString>("expected");
        QTest::newRow("wrong tensor count") << int(TooFewTensors) << "has 4 tensors, expected 2 * n_layer = 6";
        QTest::newRow("wrong n_ff") << int(WrongNff) << "'blk.0.gpu_idx' has 8 elements, expected n_ff = 16";
        QTest::newRow("value 2 in gpu_idx") << int(ValueTwo) << "'blk.1.gpu_idx' element 3 = 2, expected 0 or 1";
        QTest::newRow("unsorted bucket") << int(UnsortedBucket)
                                        << "'blk.2.gpu_bucket' element 1 = 2 follows 4: neuron ids must be ascending";
        QTest::newRow("duplicate in bucket") << int(DuplicateInBucket) << "'blk.2.gpu_bucket' element 1 = 2 follows 2";
        QTest::newRow("bucket not marked in gpu_idx")
            << int(BucketNotMarked) << "'blk.1.gpu_bucket' element 1 = neuron 5, which 'blk.1.gpu_idx' marks 0";
        QTest::newRow("bucket count differs from gpu_idx")
            << int(BucketCountMismatch) << "'blk.1.gpu_bucket' lists 1 neurons, but 'blk.1.gpu_idx' marks 2";
        QTest::newRow("bucket out of range") << int(BucketOutOfRange)
                                            << "'blk.0.gpu_bucket' element 0 = 8 is outside [0, n_ff = 8)";
        QTest::newRow("foreign architecture")
            << int(ForeignArchitecture) << "'general.architecture' = 'llama', expected 'generic.gpu_index'";
        QTest::newRow("block count differs from model")
            << int(BlockCountMismatch) << "'generic.gpu_index.block_count' = 4, the model has n_layer = 3";
        QTest::newRow("block count stored as u64")
            << int(BlockCountType) << "'generic.gpu_index.block_count' has type u64, expected u32";
        QTest::newRow("no vram capacity") << int(MissingCapacity) << "lacks metadata key 'split.vram_capacity'";
        QTest::newRow("tensors swapped")
            << int(SwappedTensors) << "tensor #0 'blk.0.gpu_bucket' is where 'blk.0.gpu_idx' must be";
        QTest::newRow("F32 instead of I32") << int(WrongTensorType)
                                           << "tensor #3 'blk.1.gpu_bucket' has type id 0, expected I32 (18)";
        QTest::newRow("2-D gpu_idx") << int(TwoDimensional) << "tensor #4 'blk.2.gpu_idx' has 2 dimensions";
    }

    void corrupt_index() {
        QFETCH(int, corruption);
        QFETCH(QString, expected);
        constexpr int32_t n_layer = 3;
        int64_t n_ff = 8;
        RawIndex r = valid_raw(n_layer, n_ff);  // layer 0: {0}; 1: {1, 3}; 2: {2, 4, 6}
        switch (Corruption(corruption)) {
            case TooFewTensors: r.tensors.resize(4); break;
            case WrongNff: n_ff = 16; break;
            case ValueTwo: r.tensors[2].values[3] = 2; break;
            case UnsortedBucket: r.tensors[5].values = {4, 2, 6}; break;
            case DuplicateInBucket: r.tensors[5].values = {2, 2, 6}; break;
            case BucketNotMarked: r.tensors[3].values = {1, 5}; break;
            case BucketCountMismatch:
                r.tensors[3].values = {1};
                r.tensors[3].ne = {1};
                break;
            case BucketOutOfRange: r.tensors[1].values = {8}; break;
            case ForeignArchitecture: r.kv[0].second = gguf::Value::string("llama"); break;
            case BlockCountMismatch: r.kv[1].second = gguf::Value::u32(4); break;
            case BlockCountType: r.kv[1].second = gguf::Value::u64(3); break;
            case MissingCapacity: r.kv.pop_back(); break;
            case SwappedTensors: std::swap(r.tensors[0], r.tensors[1]); break;
            case WrongTensorType: r.tensors[3].type = 0; break;
            case TwoDimensional: r.tensors[4].ne = {4, 2}; break;
        }
        const std::string p = path("corrupt-" + std::to_string(corruption) + ".gpuidx");
        write_raw(p, r);
        const std::string err = error_of([&] { read_gpu_index(p, n_layer, n_ff); });
        QVERIFY2(err.find(p) != std::string::npos, err.c_str());
        QVERIFY2(QString::fromStdString(err).contains(expected), err.c_str());

        // The reuse check turns the same problem into "regenerate", with the error as the reason.
        const GpuIndexReuse reuse = check_gpu_index(p, n_layer, n_ff, "x", false);
        QVERIFY(!reuse.reuse);
        QVERIFY2(QString::fromStdString(reuse.reason).contains(expected), reuse.reason.c_str());
    }

    void valid_raw_index_reads() {
        const std::string p = path("valid.gpuidx");
        write_raw(p, valid_raw(3, 8));
        const GpuIndex index = read_gpu_index(p, 3, 8);
        QCOMPARE(index.hot[0], std::vector<int32_t>{0});
        QCOMPARE(index.hot[2], (std::vector<int32_t>{2, 4, 6}));
    }

    // ---- Budget -----------------------------------------------------------------------------

    void plan_placement_data() {
        QTest::addColumn<quint64>("budget");
        QTest::addColumn<int>("n_attn");
        QTest::addColumn<int>("n_pred");
        QTest::addColumn<int>("n_norm");
        QTest::addColumn<bool>("output");
        QTest::addColumn<bool>("v");
        QTest::addColumn<bool>("k");
        QTest::addColumn<qint64>("capacity");
        QTest::addColumn<int>("n_gpu_layers");
        QTest::addColumn<QString>("explanation");
        // Margin 30; attention 4 x 100; predictors 4 x 20; norms 4 x 4; output 50 (dense 546);
        // V 80, K 80; 32 neurons of 3 bytes in buckets of 2.
        QTest::newRow("zero budget") << quint64(0) << 0 << 0 << 0 << false << false << false << qint64(0) << 0
                                     << "does not exceed the compute margin of 30 bytes: running everything on CPU";
        QTest::newRow("margin only") << quint64(30) << 0 << 0 << 0 << false << false << false << qint64(0) << 0
                                     << "does not exceed the compute margin";
        QTest::newRow("below first attention") << quint64(129) << 0 << 0 << 0 << false << false << false << qint64(0)
                                               << 0 << "budget too small for attention: running FFN on CPU only";
        QTest::newRow("one attention layer") << quint64(130) << 1 << 0 << 0 << false << false << false << qint64(0)
                                             << 1 << "budget too small for attention beyond layer 0";
        QTest::newRow("all attention") << quint64(430) << 4 << 0 << 0 << false << false << false << qint64(0) << 4
                                       << "budget too small for the predictors";
        QTest::newRow("two predictors") << quint64(470) << 4 << 2 << 0 << false << false << false << qint64(0) << 4
                                        << "predictor of layer 2 needs 20 bytes, 0 bytes left";
        QTest::newRow("all predictors") << quint64(510) << 4 << 4 << 0 << false << false << false << qint64(0) << 4
                                        << "budget too small for the FFN norms";
        QTest::newRow("all norms") << quint64(526) << 4 << 4 << 4 << false << false << false << qint64(0) << 4
                                   << "budget too small for the output layer";
        QTest::newRow("dense complete, no KV") << quint64(576) << 4 << 4 << 4 << true << false << false << qint64(0)
                                               << 5 << "KV cache stays on CPU";
        // Room for V but not K: neither goes (a lone V would be of no use to the device), and
        // FFN neurons get those bytes instead.
        QTest::newRow("V only") << quint64(656) << 4 << 4 << 4 << true << false << false << qint64(26) << 5
                                << "KV cache stays on CPU";
        QTest::newRow("V and K") << quint64(736) << 4 << 4 << 4 << true << true << true << qint64(0) << 7 << "";
        QTest::newRow("less than a bucket of neurons") << quint64(741) << 4 << 4 << 4 << true << true << true
                                                       << qint64(0) << 7 << "";
        QTest::newRow("one bucket") << quint64(742) << 4 << 4 << 4 << true << true << true << qint64(2) << 7 << "";
        QTest::newRow("three buckets and change") << quint64(758) << 4 << 4 << 4 << true << true << true << qint64(6)
                                                  << 7 << "";
        QTest::newRow("every neuron") << quint64(832) << 4 << 4 << 4 << true << true << true << qint64(32) << 7 << "";
        QTest::newRow("far more than needed") << (quint64(1) << 30) << 4 << 4 << 4 << true << true << true << qint64(32)
                                              << 7 << "";
    }

    void plan_placement() {
        QFETCH(quint64, budget);
        QFETCH(int, n_attn);
        QFETCH(int, n_pred);
        QFETCH(int, n_norm);
        QFETCH(bool, output);
        QFETCH(bool, v);
        QFETCH(bool, k);
        QFETCH(qint64, capacity);
        QFETCH(int, n_gpu_layers);
        QFETCH(QString, explanation);
        const PlacementCosts costs = small_costs();
        const Placement p = sparse::plan_placement(costs, budget);
        QCOMPARE(p.n_attn_layers, n_attn);
        QCOMPARE(p.n_predictor_layers, n_pred);
        QCOMPARE(p.n_ffn_norm_layers, n_norm);
        QCOMPARE(p.output_on_device, output);
        QCOMPARE(p.kv_v_on_device, v);
        QCOMPARE(p.kv_k_on_device, k);
        QCOMPARE(p.ffn_capacity_neurons, capacity);
        QCOMPARE(p.n_gpu_layers, n_gpu_layers);
        if (explanation.isEmpty())
            QVERIFY2(p.explanation.empty(), p.explanation.c_str());
        else
            QVERIFY2(QString::fromStdString(p.explanation).contains(explanation), p.explanation.c_str());
        QVERIFY(p.bytes_used <= budget);
        QCOMPARE(p.bytes_used, p.margin_bytes + p.dense_bytes + p.kv_bytes + p.ffn_bytes);
        if (p.dense_bytes == 0) QCOMPARE(p.bytes_used, uint64_t(0));
    }

    void budget_never_exceeded() {
        // Every budget from 0 to past "everything": the plan and the solved FFN rows stay inside
        // it, and the margin is always left free once anything is placed.
        const PlacementCosts costs = small_costs();
        const Activation activation = small_activation();
        for (uint64_t budget = 0; budget <= 900; ++budget) {
            const Placement p = sparse::plan_placement(costs, budget);
            const QString at = QString("budget %1").arg(budget);
            QVERIFY2(p.bytes_used <= budget, qPrintable(at));
            if (p.dense_bytes > 0) {
                QCOMPARE(p.margin_bytes, costs.margin_bytes);
                QVERIFY2(p.dense_bytes + p.kv_bytes + p.ffn_bytes <= budget - costs.margin_bytes, qPrintable(at));
            }
            QVERIFY2(p.ffn_bytes <= p.ffn_budget_bytes, qPrintable(at));
            const Counts counts = sparse::solve_hot_counts(activation, p.ffn_capacity_neurons, costs.bucket);
            QVERIFY2(ffn_hot_bytes(costs, counts) <= p.ffn_bytes, qPrintable(at));
            QVERIFY2(p.ffn_capacity_neurons % costs.bucket == 0, qPrintable(at));
        }
    }

    void margin_is_respected() {
        // The same budget with a larger margin leaves exactly that much less for neurons.
        PlacementCosts costs = small_costs();
        costs.margin_bytes = 0;
        const Placement no_margin = sparse::plan_placement(costs, 802);  // R = 96: 32 neurons
        costs.margin_bytes = 30;
        const Placement with_margin = sparse::plan_placement(costs, 802);  // R = 66: 22 neurons
        QCOMPARE(no_margin.ffn_capacity_neurons, int64_t(32));
        QCOMPARE(with_margin.ffn_capacity_neurons, int64_t(22));
        QCOMPARE(no_margin.ffn_budget_bytes - with_margin.ffn_budget_bytes, uint64_t(30));
        QVERIFY(with_margin.bytes_used <= 802 - 0);
        QCOMPARE(with_margin.bytes_used - with_margin.ffn_bytes, uint64_t(30 + 546 + 160));
    }

    void ragged_layers_and_dearest_neuron() {
        // n_ff 5 (buckets 2, 2, partial 1) and per-layer neuron costs 3 and 7: capacity is counted
        // at the dearest neuron, and the partial bucket can be placed.
        PlacementCosts c;
        c.attn_bytes = {1, 1};
        c.predictor_bytes = {0, 0};
        c.ffn_norm_bytes = {0, 0};
        c.neuron_bytes = {3, 7};
        c.n_ff = {5, 5};
        c.bucket = 2;
        const Placement p = sparse::plan_placement(c, 2 + 7 * 12);
        QCOMPARE(p.ffn_budget_bytes, uint64_t(84));
        QCOMPARE(p.ffn_capacity_neurons, int64_t(12));  // all 6 buckets, partial ones counted whole
        const Counts counts = sparse::solve_hot_counts({{5, 4, 3, 2, 1}, {1, 1, 1, 1, 1}}, p.ffn_capacity_neurons, 2);
        QCOMPARE(counts, (Counts{5, 5}));
        QVERIFY(ffn_hot_bytes(c, counts) <= p.ffn_bytes);
        QVERIFY(p.bytes_used <= 2 + 7 * 12);
    }

    void plan_rejects_inconsistent_costs() {
        PlacementCosts c = small_costs();
        c.neuron_bytes.pop_back();
        const std::string err = error_of([&] { sparse::plan_placement(c, 1000); });
        QVERIFY2(err.find("neuron_bytes has 3 layers, attn_bytes has 4") != std::string::npos, err.c_str());
    }

    void exact_costs_versus_powerinfer_formula() {
        // docs/FORMATS.md §7.6's example: ReluLLaMA-7B F16 (n_embd 4096, n_ff 11008, gated), R = 2 GiB.
        const uint64_t r = uint64_t(2) << 30;
        QCOMPARE(powerinfer_capacity(r, 11008, /*F16*/ 1, true), int64_t(86700));
        QCOMPARE(powerinfer_capacity(r, 11008, /*F16*/ 1, false), int64_t(2147483648ull / 44032 * 4));
        // Exact: 3 rows of 4096 F16 = 24576 bytes per neuron.
        QCOMPARE(neuron_row_bytes(4096, 1, true), uint64_t(24576));
        QCOMPARE(neuron_row_bytes(4096, /*Q4_0*/ 2, true), uint64_t(3 * 128 * 18));
        QCOMPARE(neuron_row_bytes(4096, /*Q4_0*/ 2, false), uint64_t(2 * 128 * 18));
        PlacementCosts c;
        c.attn_bytes = {0};
        c.predictor_bytes = {0};
        c.ffn_norm_bytes = {0};
        c.neuron_bytes = {neuron_row_bytes(4096, 1, true)};
        c.n_ff = {32 * 11008};  // one "layer" holding all 32 layers' neurons
        const Placement p = sparse::plan_placement(c, r);
        QCOMPARE(p.ffn_capacity_neurons, int64_t(2147483648ull / 24576 / 256 * 256));  // 87296
        QVERIFY(p.ffn_capacity_neurons > 86700 - 256);
        QVERIFY(p.ffn_bytes <= r);

        const std::string err = error_of([] { neuron_row_bytes(100, 2, true); });
        QVERIFY2(err.find("n_embd = 100") != std::string::npos, err.c_str());
    }

    void free_memory_budget_does_not_underflow() {
        QCOMPARE(budget_from_free_memory(0), uint64_t(0));
        QCOMPARE(budget_from_free_memory(uint64_t(100) << 20), uint64_t(0));
        QCOMPARE(budget_from_free_memory(uint64_t(256) << 20), uint64_t(0));
        QCOMPARE(budget_from_free_memory(uint64_t(1) << 30), uint64_t(768) << 20);
    }

    // ---- Re-planning ------------------------------------------------------------------------

    void diff_lists_only_changes() {
        const HotSets before = {{0, 1, 2, 3}, {5, 6}, {}};
        const HotSets after = {{0, 2, 3, 4}, {5, 6}, {7}};
        const PlacementDiff d = diff_placement(before, after);
        QCOMPARE(d.layers.size(), size_t(3));
        QCOMPARE(d.layers[0].to_device, std::vector<int32_t>{4});
        QCOMPARE(d.layers[0].to_host, std::vector<int32_t>{1});
        QVERIFY(d.layers[1].to_device.empty() && d.layers[1].to_host.empty());
        QCOMPARE(d.layers[2].to_device, std::vector<int32_t>{7});
        QVERIFY(d.layers[2].to_host.empty());
        QCOMPARE(d.n_to_device(), int64_t(2));
        QCOMPARE(d.n_to_host(), int64_t(1));
        QVERIFY(diff_placement(after, after).empty());
    }

    void diff_between_solutions() {
        // Growing and shrinking the capacity: the diff moves exactly the neurons that change
        // side, and applying it to the old sets gives the new ones.
        const Activation a = small_activation();
        for (int64_t cap_a : {0, 6, 14, 32})
            for (int64_t cap_b : {0, 4, 10, 32}) {
                const HotSets before = sparse::hot_neurons(a, sparse::solve_hot_counts(a, cap_a, 2));
                const HotSets after = sparse::hot_neurons(a, sparse::solve_hot_counts(a, cap_b, 2));
                const PlacementDiff d = diff_placement(before, after);
                for (size_t il = 0; il < a.size(); ++il) {
                    std::vector<bool> on(a[il].size(), false);
                    for (int32_t id : before[il]) on[size_t(id)] = true;
                    for (int32_t id : d.layers[il].to_device) {
                        QVERIFY(!on[size_t(id)]);  // was not there already
                        on[size_t(id)] = true;
                    }
                    for (int32_t id : d.layers[il].to_host) {
                        QVERIFY(on[size_t(id)]);
                        on[size_t(id)] = false;
                    }
                    std::vector<int32_t> applied;
                    for (size_t i = 0; i < on.size(); ++i)
                        if (on[i]) applied.push_back(int32_t(i));
                    QCOMPARE(applied, after[il]);
                    // Nothing listed twice, nothing unchanged listed.
                    QCOMPARE(int64_t(d.layers[il].to_device.size()) - int64_t(d.layers[il].to_host.size()),
                             int64_t(after[il].size()) - int64_t(before[il].size()));
                }
            }
    }

    void diff_rejects_unsorted() {
        const std::string err = error_of([] { diff_placement({{3, 1}}, {{1}}); });
        QVERIFY2(err.find("before layer 0 entry 1 = 1") != std::string::npos, err.c_str());
        const std::string err2 = error_of([] { diff_placement({{1}}, {{1}, {2}}); });
        QVERIFY2(err2.find("1 layers before, 2 after") != std::string::npos, err2.c_str());
    }

    // ---- Freshness --------------------------------------------------------------------------

    void source_string_tracks_every_input() {
        GpuIndexSource s;
        s.model_bytes = 5376256;
        s.model_mtime_ns = 1700000000123456789;
        s.activation_hash = hash_activation(small_activation());
        s.vram_capacity = 3072000;
        s.capacity_neurons = 3072;
        const std::string base = format_gpu_index_source(s);
        QVERIFY(base.starts_with("ember-topk/1 "));
        QVERIFY(base.find("capacity=3072") != std::string::npos);
        auto differs = [&](auto change) {
            GpuIndexSource t = s;
            change(t);
            return format_gpu_index_source(t) != base;
        };
        QVERIFY(differs([](GpuIndexSource& t) { t.model_bytes += 1; }));
        QVERIFY(differs([](GpuIndexSource& t) { t.model_mtime_ns += 1; }));
        QVERIFY(differs([](GpuIndexSource& t) { t.activation_hash ^= 1; }));
        QVERIFY(differs([](GpuIndexSource& t) { t.vram_capacity += 1; }));
        QVERIFY(differs([](GpuIndexSource& t) { t.capacity_neurons += 256; }));
        QVERIFY(differs([](GpuIndexSource& t) { t.bucket = 128; }));

        Activation a = small_activation();
        const uint64_t h = hash_activation(a);
        QCOMPARE(hash_activation(a), h);
        std::swap(a[0][0], a[0][1]);  // same sums, different statistics
        QVERIFY(hash_activation(a) != h);
        QVERIFY(hash_activation({{1, 2}, {3}}) != hash_activation({{1}, {2, 3}}));
    }

    void stamp_reads_the_model_file() {
        const std::string model = path("model.gguf");
        {
            std::ofstream out(model, std::ios::binary);
            out << "0123456789";
        }
        GpuIndexSource s;
        stamp_model_file(model, s);
        QCOMPARE(s.model_bytes, uint64_t(10));
        QVERIFY(s.model_mtime_ns != 0);
        const std::string err = error_of([&] { stamp_model_file(path("missing.gguf"), s); });
        QVERIFY2(err.find("missing.gguf") != std::string::npos, err.c_str());
        QCOMPARE(gpu_index_path("/m/llama-7b-relu.powerinfer.gguf"),
                 std::string("/m/llama-7b-relu.powerinfer.gguf.generated.gpuidx"));
    }

    void reuse_decision() {
        GpuIndex index;
        index.n_ff = 8;
        index.vram_capacity = 100;
        index.hot = {{0, 1}, {}};
        index.source = "ember-topk/1 a";
        const std::string p = path("reuse.gpuidx");
        write_gpu_index(p, index);

        GpuIndexReuse r = check_gpu_index(p, 2, 8, "ember-topk/1 a", false);
        QVERIFY2(r.reuse, r.reason.c_str());
        QVERIFY(r.index && r.index->hot == index.hot);

        r = check_gpu_index(p, 2, 8, "ember-topk/1 b", false);
        QVERIFY(!r.reuse && !r.index);
        QVERIFY2(r.reason.find("stale") != std::string::npos, r.reason.c_str());

        r = check_gpu_index(p, 2, 8, "ember-topk/1 a", true);
        QVERIFY(!r.reuse);
        QVERIFY2(r.reason.find("--reset-gpu-index") != std::string::npos, r.reason.c_str());

        r = check_gpu_index(path("nothing-here.gpuidx"), 2, 8, "ember-topk/1 a", false);
        QVERIFY(!r.reuse);
        QVERIFY2(r.reason.find("no GPU index") != std::string::npos, r.reason.c_str());

        // A model with another shape: the index fails validation and is regenerated.
        r = check_gpu_index(p, 3, 8, "ember-topk/1 a", false);
        QVERIFY(!r.reuse);
        QVERIFY2(r.reason.find("n_layer = 3") != std::string::npos, r.reason.c_str());

        // PowerInfer's own index carries no provenance: never reused as-is.
        r = check_gpu_index(powerinfer_index(1536), kTinyLayers, kTinyNff, "ember-topk/1 a", false);
        QVERIFY(!r.reuse);
        QVERIFY2(r.reason.find("written by PowerInfer") != std::string::npos, r.reason.c_str());
    }
};

QTEST_GUILESS_MAIN(TestPlacement)
#include "tst_placement.moc"
