// GGUF reader and writer: round trip of every metadata type, and corrupt files that must
// fail with an error naming the file and the field, never crash.
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <fstream>

#include "test_files.h"
#include "common/error.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"

using namespace ember;
using namespace ember::gguf;

namespace {

using test_files::read_all;
using test_files::write_all;

// A small valid file: two tensors and a handful of keys.
void write_sample(const std::string& path, uint32_t alignment = 32) {
    Writer w;
    w.set("general.architecture", Value::string("llama"));
    w.set("general.alignment", Value::u32(alignment));
    w.set("test.u32", Value::u32(7));
    std::vector<float> a(64), b(3);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(i) * 0.5f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = -float(i);
    std::vector<uint8_t> abytes(a.size() * 4), bbytes(b.size() * 4);
    std::memcpy(abytes.data(), a.data(), abytes.size());
    std::memcpy(bbytes.data(), b.data(), bbytes.size());
    w.add_tensor("a", {16, 4}, 0, std::move(abytes));
    w.add_tensor("b", {3}, 0, std::move(bbytes));
    w.write(path);
}

template <class T>
void put(std::vector<uint8_t>& bytes, size_t offset, T v) {
    std::memcpy(bytes.data() + offset, &v, sizeof v);
}

// Offsets in the sample file, derived from the layout: header (24 bytes), then the keys.
size_t first_key_length_offset() { return 24; }

}  // namespace

class TestGguf : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    std::string path(const char* name) const { return (dir_.path() + "/" + name).toStdString(); }

private slots:
    void round_trip_every_type() {
        Writer w;
        w.set("k.u8", Value{ValueType::U8, int64_t(200)});
        w.set("k.i8", Value{ValueType::I8, int64_t(-100)});
        w.set("k.u16", Value{ValueType::U16, int64_t(60000)});
        w.set("k.i16", Value{ValueType::I16, int64_t(-30000)});
        w.set("k.u32", Value::u32(4000000000u));
        w.set("k.i32", Value::i32(-2000000000));
        w.set("k.f32", Value::f32(1.5f));
        w.set("k.bool", Value::boolean(true));
        w.set("k.str", Value::string("héllo ▁world"));
        w.set("k.u64", Value::u64(0xFFFFFFFFFFFFFFF0ull));
        w.set("k.i64", Value{ValueType::I64, int64_t(-5)});
        w.set("k.f64", Value{ValueType::F64, 2.25});
        Array strings{ValueType::String, {"a", "", "ccc"}, {}, {}};
        w.set("k.astr", Value::array(strings));
        Array floats{ValueType::F32, {}, {}, {0.5, -1.0}};
        w.set("k.af32", Value::array(floats));
        Array ints{ValueType::I32, {}, {1, -2, 3}, {}};
        w.set("k.ai32", Value::array(ints));
        w.set("general.alignment", Value::u32(64));
        std::vector<uint8_t> t1(10 * 2, 0x11), t2(34 * 2, 0x22);
        w.add_tensor("half", {10}, 1, std::move(t1));
        w.add_tensor("q8", {32, 2}, 8, std::move(t2));
        w.add_tensor("empty", {0}, 18, std::vector<uint8_t>{});  // PowerInfer's GPU index has these
        w.write(path("all.gguf"), "PWRI");

        auto f = File::open(path("all.gguf"));
        QCOMPARE(f->magic(), std::string("PWRI"));
        QCOMPARE(f->version(), 3u);
        QCOMPARE(f->alignment(), 64u);
        QCOMPARE(f->metadata().size(), size_t(16));
        QCOMPARE(f->metadata()[0].first, std::string("k.u8"));
        QCOMPARE(*f->get_uint("k.u8"), uint64_t(200));
        QCOMPARE(*f->get_int("k.i8"), int64_t(-100));
        QCOMPARE(*f->get_uint("k.u16"), uint64_t(60000));
        QCOMPARE(*f->get_int("k.i16"), int64_t(-30000));
        QCOMPARE(*f->get_uint("k.u32"), uint64_t(4000000000u));
        QCOMPARE(*f->get_int("k.i32"), int64_t(-2000000000));
        QCOMPARE(*f->get_float("k.f32"), 1.5);
        QCOMPARE(*f->get_bool("k.bool"), true);
        QCOMPARE(*f->get_string("k.str"), std::string("héllo ▁world"));
        QCOMPARE(*f->get_uint("k.u64"), uint64_t(0xFFFFFFFFFFFFFFF0ull));
        QCOMPARE(*f->get_int("k.i64"), int64_t(-5));
        QCOMPARE(*f->get_float("k.f64"), 2.25);
        QCOMPARE(f->get_array("k.astr")->strings, strings.strings);
        QCOMPARE(f->get_array("k.af32")->floats, floats.floats);
        QCOMPARE(f->get_array("k.ai32")->ints, ints.ints);
        QVERIFY(!f->get_uint("absent"));

        QCOMPARE(f->data_offset() % 64, uint64_t(0));
        const TensorInfo* half = f->find_tensor("half");
        const TensorInfo* q8 = f->find_tensor("q8");
        QVERIFY(half && q8);
        QCOMPARE(half->nbytes, size_t(20));
        QCOMPARE(q8->nbytes, size_t(68));
        QCOMPARE(q8->offset % 64, uint64_t(0));
        QCOMPARE(q8->ne, (std::vector<int64_t>{32, 2}));
        QCOMPARE(int(half->data[0]), 0x11);
        QCOMPARE(int(q8->data[67]), 0x22);
        const TensorInfo* empty = f->find_tensor("empty");
        QVERIFY(empty);
        QCOMPARE(empty->nbytes, size_t(0));
        QCOMPARE(empty->ne, (std::vector<int64_t>{0}));
    }

    void wrong_type_names_the_key() {
        write_sample(path("s.gguf"));
        auto f = File::open(path("s.gguf"));
        try {
            (void)f->get_string("test.u32");
            QFAIL("expected an error");
        } catch (const EngineError& e) {
            QVERIFY(std::string(e.what()).find("test.u32") != std::string::npos);
            QVERIFY(std::string(e.what()).find("s.gguf") != std::string::npos);
        }
    }

    void corrupt_files_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("expected");
        QTest::newRow("empty file") << 0 << "truncated while reading magic";
        QTest::newRow("bad magic") << 1 << "not a GGUF file";
        QTest::newRow("version 1") << 2 << "unsupported GGUF version 1";
        QTest::newRow("huge tensor count") << 3 << "tensor count";
        QTest::newRow("string length past end") << 4 << "general.architecture";
        QTest::newRow("truncated data") << 5 << "tensor 'b'";
        QTest::newRow("offset past end") << 6 << "tensor 'a'";
        QTest::newRow("unknown dtype") << 7 << "unknown type id 99";
        QTest::newRow("too many dims") << 8 << "5 dimensions";
        QTest::newRow("misaligned offset") << 9 << "not a multiple of the alignment";
        QTest::newRow("truncated header") << 10 << "metadata count 3 exceeds";
        QTest::newRow("bad alignment") << 11 << "general.alignment";
        QTest::newRow("unknown value type") << 12 << "unknown value type 77";
        QTest::newRow("huge array count") << 13 << "more than the file can hold";
    }

    void corrupt_files() {
        QFETCH(int, kind);
        QFETCH(QString, expected);
        const std::string good = path("good.gguf");
        write_sample(good);
        std::vector<uint8_t> bytes = read_all(good);
        // Locate the tensor infos: they follow the three keys.
        auto f = File::open(good);
        const size_t tensor_a_info = [&] {
            size_t pos = 24;
            for (const auto& [k, v] : f->metadata()) {
                pos += 8 + k.size() + 4;
                pos += std::holds_alternative<std::string>(v.data) ? 8 + std::get<std::string>(v.data).size() : 4;
            }
            return pos;
        }();
        const size_t a_dims = tensor_a_info + 8 + 1;          // after name "a"
        const size_t a_type = a_dims + 4 + 2 * 8;
        const size_t a_offset = a_type + 4;
        const size_t key0_type = first_key_length_offset() + 8 + std::strlen("general.architecture");

        switch (kind) {
            case 0: bytes.clear(); break;
            case 1: bytes[0] = 'X'; break;
            case 2: put<uint32_t>(bytes, 4, 1); break;
            case 3: put<uint64_t>(bytes, 8, uint64_t(1) << 60); break;
            case 4: put<uint64_t>(bytes, key0_type + 4, uint64_t(1) << 40); break;
            case 5: bytes.resize(bytes.size() - 24); break;  // past b's 20 bytes of padding
            case 6: put<uint64_t>(bytes, a_offset, uint64_t(1) << 30); break;
            case 7: put<uint32_t>(bytes, a_type, 99); break;
            case 8: put<uint32_t>(bytes, a_dims, 5); break;
            case 9: put<uint64_t>(bytes, a_offset, 4); break;
            case 10: bytes.resize(30); break;
            case 11: {
                // general.alignment is the second key: its u32 value follows its name and type.
                const size_t key1 = key0_type + 4 + 8 + std::strlen("llama");
                put<uint32_t>(bytes, key1 + 8 + std::strlen("general.alignment") + 4, 24);
                break;
            }
            case 12: put<uint32_t>(bytes, key0_type, 77); break;
            case 13: {
                // Turn the first key into an array of u64 with an absurd count.
                put<uint32_t>(bytes, key0_type, 9);
                put<uint32_t>(bytes, key0_type + 4, 10);
                put<uint64_t>(bytes, key0_type + 8, uint64_t(1) << 61);
                break;
            }
        }
        const std::string bad = path("bad.gguf");
        write_all(bad, bytes);
        try {
            File::open(bad);
            QFAIL("expected an error");
        } catch (const EngineError& e) {
            const std::string msg = e.what();
            QVERIFY2(msg.find("bad.gguf") != std::string::npos, msg.c_str());
            QVERIFY2(msg.find(expected.toStdString()) != std::string::npos, msg.c_str());
        }
    }

    void missing_file_is_an_error() {
        try {
            File::open(path("nope.gguf"));
            QFAIL("expected an error");
        } catch (const EngineError& e) {
            QVERIFY(std::string(e.what()).find("nope.gguf") != std::string::npos);
        }
    }

    void writer_rejects_wrong_size() {
        Writer w;
        QVERIFY_THROWS_EXCEPTION(EngineError, w.add_tensor("x", {32}, 2, std::vector<uint8_t>(17)));
    }

    // A map's parts read into memory (for a mixture of experts kept partly on disk): each part
    // holds the file's bytes and may be re-laid until sealed; a part asked for again, or one
    // overlapping parts already read (here two that touch), keeps what was written into them.
    void a_map_reads_parts_into_memory() {
        const std::string path = dir_.path().toStdString() + "/parts.bin";
        std::vector<uint8_t> bytes(64 * 1024);
        for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 7 + i / 251);
        std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
        ember::gguf::MappedFile map(path, ember::gguf::MappedFile::Mode::Map);
        QVERIFY(map.writable_range(0, 16) == nullptr);  // pages of the file itself
        map.make_resident(5000, 3000);     // pages 1..2
        map.make_resident(12288, 100);     // page 3, touching them
        uint8_t* a = map.writable_range(5000, 3000);
        uint8_t* b = map.writable_range(12288, 100);
        QVERIFY(a && b);
        std::memset(a, 0xAB, 3000);
        std::memset(b, 0xCD, 100);
        map.make_resident(100, 20000);  // pages 0..4: around, over and past both
        QVERIFY(map.writable_range(0, 20480) != nullptr);
        for (size_t i = 0; i < bytes.size(); ++i) {
            const uint8_t want = i >= 5000 && i < 8000 ? 0xAB : i >= 12288 && i < 12388 ? 0xCD : bytes[i];
            if (map.data()[i] != want) QFAIL(qPrintable(QString("byte %1: %2, not %3").arg(i).arg(map.data()[i]).arg(want)));
        }
        QVERIFY(map.writable_range(20480, 16) == nullptr);
        map.seal();
        QVERIFY(map.writable_range(5000, 16) == nullptr);
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, map.make_resident(30000, 10));
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, ember::gguf::MappedFile(path, ember::gguf::MappedFile::Mode::Copy)
                                                         .make_resident(0, 10));
    }
};

QTEST_GUILESS_MAIN(TestGguf)
#include "tst_gguf.moc"
