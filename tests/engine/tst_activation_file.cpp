// PowerInfer activation statistics (torch.save'd 1-D tensors): the profiler's real files against
// numbers torch computed (tests/data/activation/expected.json, made by make_fixtures.py), every
// storage type, big-endian archives, zip64, storage offsets; hostile files, byte patches and
// pickles that must fail with an error naming the file and the problem, never crash; and
// read_activation_dir pairing activation_N.pt with layer N numerically.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "test_files.h"
#include "common/error.h"
#include "sparse/activation_file.h"
#include "sparse/pickle_vm.h"
#include "sparse/zip_reader.h"

using namespace ember;
using namespace ember::sparse;

namespace {

const std::string kData = EMBER_TEST_DATA_DIR;
std::string fixture(const QString& rel) { return kData + "/activation/" + rel.toStdString(); }
std::string real_dir() { return kData + "/tiny-relu-llama/activation"; }

const QJsonObject& expected() {
    static const QJsonObject obj = [] {
        QFile f(QString::fromStdString(fixture("expected.json")));
        if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open expected.json");
        return QJsonDocument::fromJson(f.readAll()).object();
    }();
    return obj;
}

using test_files::read_all;
using test_files::write_all;

// The EngineError message of f(); "" if it did not throw; any other exception is reported as such
// so that the caller's "contains" check fails with it in view.
template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const EngineError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("<not an EngineError> ") + e.what();
    }
    return {};
}

void verify_mentions(const std::string& message, const QStringList& needles) {
    QVERIFY2(!message.empty(), "expected an EngineError");
    QVERIFY2(message.rfind("<not an EngineError>", 0) != 0, message.c_str());
    for (const QString& n : needles)
        QVERIFY2(message.find(n.toStdString()) != std::string::npos,
                 qPrintable(QString::fromStdString(message) + "\n   does not mention: " + n));
}

// expected.json stores non-finite values as strings.
bool same_value(double got, const QJsonValue& want) {
    if (want.isString()) {
        const QString s = want.toString();
        if (s == "nan") return std::isnan(got);
        if (s == "inf") return got == std::numeric_limits<double>::infinity();
        if (s == "-inf") return got == -std::numeric_limits<double>::infinity();
        return false;
    }
    return want.isDouble() && got == want.toDouble() && std::signbit(got) == std::signbit(want.toDouble());
}

size_t find_sig(const std::vector<uint8_t>& b, uint32_t sig, size_t from = 0) {
    for (size_t k = from; k + 4 <= b.size(); ++k) {
        uint32_t v;
        std::memcpy(&v, b.data() + k, 4);
        if (v == sig) return k;
    }
    qFatal("signature not found");
}

size_t rfind_sig(const std::vector<uint8_t>& b, uint32_t sig) {
    for (size_t k = b.size() - 4 + 1; k-- > 0;) {
        uint32_t v;
        std::memcpy(&v, b.data() + k, 4);
        if (v == sig) return k;
    }
    qFatal("signature not found");
}

template <class T>
void put(std::vector<uint8_t>& b, size_t at, T v) {
    std::memcpy(b.data() + at, &v, sizeof v);
}

template <class T>
T get(const std::vector<uint8_t>& b, size_t at) {
    T v;
    std::memcpy(&v, b.data() + at, sizeof v);
    return v;
}

// ---- pickles written by hand (the sequence torch.save emits, protocol 2) ----

QByteArray op_int(int64_t n) {
    QByteArray b;
    if (n >= 0 && n < 256) return b.append('K').append(char(n));
    if (n >= 0 && n < 65536) return b.append('M').append(char(n & 0xff)).append(char(n >> 8));
    if (n >= INT32_MIN && n <= INT32_MAX) {
        b.append('J');
        const int32_t v = int32_t(n);
        b.append(reinterpret_cast<const char*>(&v), 4);
        return b;
    }
    b.append(char(0x8a)).append(char(8));
    return b.append(reinterpret_cast<const char*>(&n), 8);
}

QByteArray op_str(const QByteArray& s) {
    QByteArray b("X");
    const uint32_t n = uint32_t(s.size());
    b.append(reinterpret_cast<const char*>(&n), 4);
    return b + s;
}

QByteArray op_tuple(const std::vector<int64_t>& items) {
    QByteArray b("(");
    for (int64_t i : items) b += op_int(i);
    return b + "t";
}

QByteArray tensor_pickle(int64_t numel, int64_t offset, std::vector<int64_t> shape, std::vector<int64_t> stride,
                         const QByteArray& storage = "FloatStorage", const QByteArray& key = "0") {
    return QByteArray("\x80\x02") + "ctorch._utils\n_rebuild_tensor_v2\n" + "((" + op_str("storage") + "ctorch\n" +
           storage + "\n" + op_str(key) + op_str("cpu") + op_int(numel) + "tQ" + op_int(offset) + op_tuple(shape) +
           op_tuple(stride) + "\x89" + "ccollections\nOrderedDict\n)R" + "tR.";
}

TensorRecord run(const QByteArray& pkl) {
    return run_tensor_pickle({reinterpret_cast<const uint8_t*>(pkl.constData()), size_t(pkl.size())}, "test.pkl");
}

QByteArray u32le(uint32_t v) { return QByteArray(reinterpret_cast<const char*>(&v), 4); }
QByteArray u64le(uint64_t v) { return QByteArray(reinterpret_cast<const char*>(&v), 8); }

}  // namespace

class TestActivationFile : public QObject {
    Q_OBJECT

private:
    QTemporaryDir tmp_;
    std::string tmp(const std::string& name) const { return tmp_.path().toStdString() + "/" + name; }

private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        QVERIFY2(expected().contains("real") && expected().contains("vectors"), "expected.json missing or malformed");
    }

    // ---- the profiler's files ----

    void real_files_data() {
        QTest::addColumn<QString>("name");
        for (int il = 0; il < 6; ++il) {
            const QString name = QString("activation_%1.pt").arg(il);
            QTest::newRow(qPrintable(name)) << name;
        }
    }
    void real_files() {
        QFETCH(QString, name);
        const auto v = read_torch_vector(real_dir() + "/" + name.toStdString());
        const QJsonObject e = expected()["real"].toObject()[name].toObject();
        QVERIFY(!e.isEmpty());
        QCOMPARE(int64_t(v.size()), int64_t(e["count"].toInteger()));
        QVERIFY(v.front() == e["first"].toDouble());
        QVERIFY(v.back() == e["last"].toDouble());
        const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
        QVERIFY(*lo == e["min"].toDouble());
        QVERIFY(*hi == e["max"].toDouble());
        QCOMPARE(int64_t(hi - v.begin()), int64_t(e["argmax"].toInteger()));
        QCOMPARE(int64_t(std::count_if(v.begin(), v.end(), [](double x) { return x != 0; })), int64_t(e["nonzero"].toInteger()));
        double sum = 0;
        for (double x : v) sum += x;
        QVERIFY2(std::abs(sum - e["sum"].toDouble()) <= 1e-12 * std::abs(e["sum"].toDouble()), qPrintable(QString::number(sum, 'g', 17)));
        const QJsonObject samples = e["samples"].toObject();
        QVERIFY(!samples.isEmpty());
        for (auto it = samples.begin(); it != samples.end(); ++it) QVERIFY(v.at(size_t(it.key().toInt())) == it.value().toDouble());
    }

    // ---- valid fixtures: every storage type, byte orders, prefixes, zip64, offset view ----

    void vectors_data() {
        QTest::addColumn<QString>("file");
        for (const char* f : {"dtype_float32.pt", "dtype_float64.pt", "dtype_float16.pt", "dtype_bfloat16.pt", "dtype_int64.pt",
                              "dtype_int32.pt", "dtype_int16.pt", "dtype_int8.pt", "dtype_uint8.pt", "dtype_bool.pt",
                              "big_float32.pt", "big_float64.pt", "big_float16.pt", "big_bfloat16.pt", "big_int64.pt",
                              "big_int32.pt", "big_int16.pt", "little_explicit.pt", "archive_prefix.pt", "zip64.pt",
                              "offset_view.pt", "protocol4.pt", "empty.pt", "handmade.pt"})
            QTest::newRow(f) << f;
    }
    void vectors() {
        QFETCH(QString, file);
        const QJsonValue want = expected()["vectors"].toObject()[file];
        QVERIFY2(want.isArray(), "no expected values in expected.json");
        const QJsonArray values = want.toArray();
        const auto got = read_torch_vector(fixture(file));
        QCOMPARE(int64_t(got.size()), int64_t(values.size()));
        for (qsizetype k = 0; k < values.size(); ++k)
            QVERIFY2(same_value(got[size_t(k)], values[k]),
                     qPrintable(QString("element %1: got %2").arg(k).arg(got[size_t(k)], 0, 'g', 17)));
    }

    // The storage offset really is applied (not just a copy torch made).
    void offset_view_keeps_base_storage() {
        const auto bytes = read_all(fixture("offset_view.pt"));
        const StoredZip zip(bytes, "offset_view.pt");
        const ZipMember* m = zip.find("offset_view/data/0");
        QVERIFY(m);
        QCOMPARE(m->size, uint64_t(20 * 4));
        const auto v = read_torch_vector(fixture("offset_view.pt"));
        QCOMPARE(v.size(), size_t(8));
        QVERIFY(v.front() == 5.0 && v.back() == 12.0);
    }

    // Torch's own file with the plain end record saturated: the zip64 record it always writes is used.
    void saturated_end_record_uses_zip64() {
        const std::string real = real_dir() + "/activation_3.pt";
        auto b = read_all(real);
        const size_t eocd = rfind_sig(b, 0x06054b50);
        put<uint16_t>(b, eocd + 8, 0xFFFF);
        put<uint16_t>(b, eocd + 10, 0xFFFF);
        put<uint32_t>(b, eocd + 12, 0xFFFFFFFF);
        put<uint32_t>(b, eocd + 16, 0xFFFFFFFF);
        const auto v = parse_torch_vector(b, "patched");
        QCOMPARE(v, read_torch_vector(real));
    }

    // ---- hostile files ----

    void hostile_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("needles");
        QTest::newRow("truncated") << "hostile/truncated.pt" << QStringList{"no zip end-of-central-directory record"};
        QTest::newRow("bad central directory offset") << "hostile/bad_cd_offset.pt"
            << QStringList{"central directory (offset ", "runs past the end-of-central-directory record"};
        QTest::newRow("deflate") << "hostile/deflate.pt"
            << QStringList{"member 'dtype_float32/data/0' uses compression method 8 (deflate)"};
        QTest::newRow("GLOBAL os system") << "hostile/global_os_system.pt"
            << QStringList{"member 'global_os_system/data.pkl'", "GLOBAL at offset 2", "global 'os.system' is not allowed"};
        QTest::newRow("unknown opcode") << "hostile/unknown_opcode.pt"
            << QStringList{"member 'unknown_opcode/data.pkl'", "unknown pickle opcode 0xff at offset 2"};
        QTest::newRow("2-D tensor") << "hostile/tensor_2d.pt" << QStringList{"2-D tensor of shape (2, 3)", "expected a 1-D vector"};
        QTest::newRow("0-D tensor") << "hostile/scalar.pt" << QStringList{"0-D tensor of shape ()"};
        QTest::newRow("strided view") << "hostile/strided.pt" << QStringList{"not contiguous (stride 2, expected 1)"};
        QTest::newRow("dict") << "hostile/dict.pt" << QStringList{"STOP at offset", "the pickled object is a dict, not a tensor"};
        QTest::newRow("shape past storage") << "hostile/shape_past_storage.pt"
            << QStringList{"storage offset 0 + 16 elements runs past the 8 elements of FloatStorage '0'"};
        QTest::newRow("storage member short") << "hostile/storage_short.pt"
            << QStringList{"member 'storage_short/data/0' holds 32 bytes; FloatStorage of 16 elements needs 16 x 4 bytes"};
        QTest::newRow("huge element count") << "hostile/huge_count.pt"
            << QStringList{"the vector claims 1099511627776 elements; the limit is 134217728"};
        QTest::newRow("missing storage member") << "hostile/missing_storage.pt"
            << QStringList{"no member 'missing_storage/data/1' for FloatStorage '1'"};
        QTest::newRow("storage key with a path") << "hostile/bad_key.pt" << QStringList{"storage key '../x'"};
        QTest::newRow("no data.pkl") << "hostile/no_pickle.pt" << QStringList{"no member named '<prefix>/data.pkl'"};
        QTest::newRow("bad byteorder") << "hostile/bad_byteorder.pt"
            << QStringList{"member 'bad_byteorder/byteorder' holds 'middle'", "expected 'little' or 'big'"};
        QTest::newRow("bad version") << "hostile/bad_version.pt"
            << QStringList{"member 'bad_version/version' holds '99?'", "format version"};
        QTest::newRow("bool byte 7") << "hostile/bool_byte.pt"
            << QStringList{"element 2 of the BoolStorage vector is byte 7"};
        QTest::newRow("missing file") << "hostile/does_not_exist.pt" << QStringList{"cannot open"};
        QTest::newRow("a directory") << "dirs" << QStringList{"not a regular file"};
    }
    void hostile() {
        QFETCH(QString, file);
        QFETCH(QStringList, needles);
        const std::string path = fixture(file);
        verify_mentions(error_of([&] { read_torch_vector(path); }), QStringList{QString::fromStdString(path)} + needles);
    }

    // ---- byte patches of a file torch wrote (data descriptors, alignment padding, zip64 end records) ----

    void patched_data() {
        QTest::addColumn<QString>("patch");
        QTest::addColumn<QStringList>("needles");
        QTest::newRow("empty") << "empty" << QStringList{"0 bytes is too small for a zip archive"};
        QTest::newRow("trailing bytes") << "trailing" << QStringList{"no zip end-of-central-directory record"};
        QTest::newRow("local signature") << "local_sig"
            << QStringList{"member 'dtype_float32/data.pkl': bad local header signature", "at offset 0"};
        QTest::newRow("central signature") << "central_sig" << QStringList{"central directory entry 0 at offset", "bad signature"};
        QTest::newRow("local header offset") << "local_offset"
            << QStringList{"member 'dtype_float32/data.pkl': local header offset 2147483392 is outside the member data"};
        QTest::newRow("member size") << "member_size"
            << QStringList{"member 'dtype_float32/data/0': 268435456 bytes at offset", "run past the member data"};
        QTest::newRow("crc") << "crc" << QStringList{"member 'dtype_float32/data.pkl': CRC-32 mismatch"};
        QTest::newRow("local method") << "local_method"
            << QStringList{"local header says compression method 8, the central directory says 0"};
        QTest::newRow("entry count") << "entries" << QStringList{"central directory entry 3 at offset", "truncated"};
        QTest::newRow("too many entries") << "many_entries" << QStringList{"central directory claims 65000 members; the limit is 4096"};
        QTest::newRow("encrypted") << "encrypted" << QStringList{"member 'dtype_float32/data.pkl' is encrypted"};
        QTest::newRow("directory size") << "cd_size" << QStringList{"but its 3 entries use"};
        QTest::newRow("zip64 without locator") << "zip64_no_locator" << QStringList{"has saturated fields but no zip64 locator"};
        QTest::newRow("zip64 record offset") << "zip64_offset" << QStringList{"zip64 end-of-central-directory offset", "is outside the archive"};
        QTest::newRow("multi-disk") << "disk" << QStringList{"multi-disk zip archives are not supported"};
    }
    void patched() {
        QFETCH(QString, patch);
        QFETCH(QStringList, needles);
        auto b = read_all(fixture("dtype_float32.pt"));
        const size_t eocd = rfind_sig(b, 0x06054b50);
        const size_t cd = find_sig(b, 0x02014b50);
        const size_t cd1 = find_sig(b, 0x02014b50, cd + 4);
        if (patch == "empty") b.clear();
        else if (patch == "trailing") b.insert(b.end(), {1, 2, 3, 4, 5});
        else if (patch == "local_sig") b[0] ^= 0xff;
        else if (patch == "central_sig") b[cd] ^= 0xff;
        else if (patch == "local_offset") put<uint32_t>(b, cd + 42, 0x7fffff00);
        else if (patch == "member_size") put<uint32_t>(b, cd1 + 20, 0x10000000), put<uint32_t>(b, cd1 + 24, 0x10000000);
        else if (patch == "crc") b[30 + get<uint16_t>(b, 26) + get<uint16_t>(b, 28) + 5] ^= 0x01;
        else if (patch == "local_method") put<uint16_t>(b, 8, 8);
        else if (patch == "entries") put<uint16_t>(b, eocd + 8, 50), put<uint16_t>(b, eocd + 10, 50);
        else if (patch == "many_entries") put<uint16_t>(b, eocd + 8, 65000), put<uint16_t>(b, eocd + 10, 65000);
        else if (patch == "encrypted") put<uint16_t>(b, cd + 8, uint16_t(get<uint16_t>(b, cd + 8) | 1));
        else if (patch == "cd_size") put<uint32_t>(b, eocd + 12, get<uint32_t>(b, eocd + 12) + 4);
        else if (patch == "zip64_no_locator") put<uint32_t>(b, eocd + 16, 0xFFFFFFFF), b[eocd - 20] ^= 0xff;
        else if (patch == "zip64_offset") put<uint32_t>(b, eocd + 16, 0xFFFFFFFF), put<uint64_t>(b, eocd - 20 + 8, 1ull << 62);
        else if (patch == "disk") put<uint16_t>(b, eocd + 4, 1);
        else QFAIL("unknown patch");
        const std::string path = tmp("patched_" + patch.toStdString() + ".pt");
        write_all(path, b);
        verify_mentions(error_of([&] { read_torch_vector(path); }), QStringList{QString::fromStdString(path)} + needles);
    }

    // Every truncation and single-byte corruption of three differently written files: each
    // either reads or throws EngineError; nothing else (run under ASan for the memory side).
    void mutations_never_crash() {
        for (const char* f : {"dtype_float32.pt", "handmade.pt", "zip64.pt"}) {
            const auto orig = read_all(fixture(f));
            QVERIFY(!orig.empty());
            int failures = 0;
            for (size_t n = 0; n < orig.size(); ++n) {
                const std::vector<uint8_t> cut(orig.begin(), orig.begin() + ptrdiff_t(n));
                const std::string msg = error_of([&] { parse_torch_vector(cut, f); });
                QVERIFY2(msg.rfind("<not an EngineError>", 0) != 0, msg.c_str());
                failures += !msg.empty();
            }
            QCOMPARE(failures, int(orig.size()));  // a truncated archive never reads
            for (size_t k = 0; k < orig.size(); ++k) {
                for (uint8_t x : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xff)}) {
                    auto m = orig;
                    m[k] ^= x;
                    const std::string msg = error_of([&] { parse_torch_vector(m, f); });
                    QVERIFY2(msg.rfind("<not an EngineError>", 0) != 0, msg.c_str());
                }
            }
        }
    }

    // The same for pickles (inside an archive the CRC stops most corruptions before the
    // machine sees them): protocol 2 and 4 streams torch wrote, truncated and with each byte
    // replaced by values that are opcodes, lengths and sign bits.
    void pickle_mutations_never_crash() {
        for (const char* f : {"dtype_float32.pt", "protocol4.pt"}) {
            const auto bytes = read_all(fixture(f));
            const StoredZip zip(bytes, f);
            const ZipMember* m = nullptr;
            for (const ZipMember& member : zip.members())
                if (member.name.ends_with("data.pkl")) m = &member;
            QVERIFY(m);
            const auto span = zip.read(*m);
            const std::vector<uint8_t> orig(span.begin(), span.end());
            QVERIFY(error_of([&] { run_tensor_pickle(orig, f); }).empty());
            for (size_t n = 0; n < orig.size(); ++n) {
                const std::vector<uint8_t> cut(orig.begin(), orig.begin() + ptrdiff_t(n));
                verify_mentions(error_of([&] { run_tensor_pickle(cut, f); }), {QString(f)});
            }
            for (size_t k = 0; k < orig.size(); ++k) {
                for (uint8_t x : {0x00, 0x01, 0x28, 0x2e, 0x4a, 0x58, 0x71, 0x74, 0x7f, 0x80, 0x8a, 0x93, 0x94, 0x95, 0xff}) {
                    auto mut = orig;
                    mut[k] = x;
                    const std::string msg = error_of([&] { run_tensor_pickle(mut, f); });
                    QVERIFY2(msg.rfind("<not an EngineError>", 0) != 0, msg.c_str());
                }
            }
        }
    }

    // ---- the pickle machine on its own ----

    void pickle_accepts_torch_sequence() {
        const TensorRecord t = run(tensor_pickle(20, 5, {8}, {1}, "HalfStorage", "7"));
        QCOMPARE(t.storage_type, StorageType::Half);
        QCOMPARE(t.storage_key, std::string("7"));
        QCOMPARE(t.location, std::string("cpu"));
        QCOMPARE(t.storage_numel, int64_t(20));
        QCOMPARE(t.storage_offset, int64_t(5));
        QCOMPARE(t.shape, std::vector<int64_t>{8});
        QCOMPARE(t.stride, std::vector<int64_t>{1});
        const TensorRecord big = run(tensor_pickle(int64_t(1) << 40, 0, {int64_t(1) << 40}, {1}, "LongStorage"));
        QCOMPARE(big.storage_numel, int64_t(1) << 40);
        QCOMPARE(big.storage_type, StorageType::Long);
    }

    void pickle_rejects_data() {
        QTest::addColumn<QByteArray>("pickle");
        QTest::addColumn<QStringList>("needles");
        const QByteArray rebuild = "ctorch._utils\n_rebuild_tensor_v2\n";
        const QByteArray pid = "((" + op_str("storage") + "ctorch\nFloatStorage\n" + op_str("0") + op_str("cpu");
        QTest::newRow("empty") << QByteArray() << QStringList{"test.pkl: pickle ends at offset 0 without STOP"};
        QTest::newRow("STOP on empty stack") << QByteArray("\x80\x02.") << QStringList{"STOP at offset 2: stack underflow"};
        QTest::newRow("protocol 9") << QByteArray("\x80\x09") << QStringList{"PROTO at offset 0: protocol 9 is not supported"};
        QTest::newRow("memo miss") << QByteArray("h\x05") << QStringList{"BINGET at offset 0: memo key 5 is not defined"};
        QTest::newRow("TUPLE without MARK") << QByteArray("Nt") << QStringList{"TUPLE at offset 1: no MARK is open"};
        QTest::newRow("TUPLE1 underflow") << QByteArray("\x85") << QStringList{"TUPLE1 at offset 0: stack underflow"};
        QTest::newRow("pop past MARK") << QByteArray("N(\x85") << QStringList{"TUPLE1 at offset 2: pops past a MARK"};
        QTest::newRow("string past end") << QByteArray("X\x10\x00\x00\x00" "abc", 8)
                                         << QStringList{"BINUNICODE at offset 0: needs 16 bytes, only 3 left"};
        QTest::newRow("string too long") << QByteArray("X\xff\xff\xff\x7f")
                                         << QStringList{"string of 2147483647 bytes exceeds the limit of 4096"};
        QTest::newRow("BINUNICODE8 length") << QByteArray("\x8d") + u64le(~uint64_t(0))
                                            << QStringList{"BINUNICODE8 at offset 0: string of 18446744073709551615 bytes"};
        QTest::newRow("frame past end") << QByteArray("\x95") + u64le(1000) << QStringList{"FRAME at offset 0: frame of 1000 bytes"};
        QTest::newRow("LONG1 of 9 bytes") << QByteArray("\x8a\x09" "123456789") << QStringList{"integer of 9 bytes does not fit 64 bits"};
        QTest::newRow("GLOBAL unterminated") << QByteArray("ctorch") << QStringList{"GLOBAL at offset 0: module is not newline-terminated"};
        QTest::newRow("GLOBAL control byte") << QByteArray("cto\x01rch\nx\n") << QStringList{"has a non-printable byte"};
        QTest::newRow("STACK_GLOBAL builtins.eval") << QByteArray("\x8c\x08" "builtins" "\x8c\x04" "eval" "\x93")
                                                    << QStringList{"STACK_GLOBAL at offset 16", "global 'builtins.eval' is not allowed"};
        QTest::newRow("STACK_GLOBAL non-string") << QByteArray("NN\x93") << QStringList{"needs two strings, got None and None"};
        QTest::newRow("GLOBAL subprocess") << QByteArray("csubprocess\nPopen\n") << QStringList{"global 'subprocess.Popen' is not allowed"};
        QTest::newRow("GLOBAL torch lookalike") << QByteArray("ctorch._utils\n_rebuild_parameter\n")
                                                << QStringList{"global 'torch._utils._rebuild_parameter' is not allowed"};
        QTest::newRow("GLOBAL torch.load") << QByteArray("ctorch\nload\n") << QStringList{"global 'torch.load' is not allowed"};
        QTest::newRow("REDUCE of a storage type") << QByteArray("ctorch\nFloatStorage\n)R")
                                                  << QStringList{"REDUCE at offset 21: REDUCE may not call 'torch.FloatStorage'"};
        QTest::newRow("REDUCE of None") << QByteArray("N)R") << QStringList{"REDUCE at offset 2: cannot call a None"};
        QTest::newRow("REDUCE with non-tuple args") << rebuild + "N" + "R"
                                                    << QStringList{"arguments of 'torch._utils._rebuild_tensor_v2' must be a tuple"};
        QTest::newRow("bad persistent id") << op_str("abc") + "Q" << QStringList{"BINPERSID at offset 8: persistent id must be"};
        QTest::newRow("persistent id with a str type") << QByteArray("((") + op_str("storage") + op_str("x") + op_str("0") + op_str("cpu") + "K\x01tQ"
                                             << QStringList{"persistent id must be", "str 'x'"};
        QTest::newRow("negative storage size") << pid + op_int(-1) + "tQ" << QStringList{"storage '0' has negative size -1"};
        QTest::newRow("negative storage offset") << rebuild + pid + "K\x08tQ" + op_int(-1) + "K\x08\x85K\x01\x85tR"
                                                 << QStringList{"negative storage offset -1"};
        QTest::newRow("negative size") << rebuild + pid + "K\x08tQ" + op_int(0) + op_int(-3) + "\x85K\x01\x85tR"
                                       << QStringList{"shape holds negative value -3"};
        QTest::newRow("shape/stride mismatch") << rebuild + pid + "K\x08tQ" + op_int(0) + "K\x08\x85K\x01K\x01\x86tR"
                                               << QStringList{"shape has 1 dimensions, stride 2"};
        QTest::newRow("storage arg not storage") << rebuild + "(N" + op_int(0) + "K\x08\x85K\x01\x85tR"
                                                 << QStringList{"storage argument is a None"};
        QTest::newRow("no arguments") << rebuild + ")R" << QStringList{"takes 4 to 7 arguments, got 0"};
        QTest::newRow("nesting") << QByteArray(")") + QByteArray(20, '\x85') << QStringList{"tuples nest deeper than 16"};
        QTest::newRow("stack limit") << QByteArray(1100, 'N') << QStringList{"stack exceeds 1024 values"};
        QByteArray memo("N");
        for (uint32_t k = 0; k < 1100; ++k) memo += "r" + u32le(k);
        QTest::newRow("memo limit") << memo << QStringList{"memo exceeds 1024 entries"};
        QTest::newRow("MARK limit") << QByteArray(70, '(') << QStringList{"more than 64 open MARKs"};
        QTest::newRow("result not a tensor") << QByteArray("\x80\x02N.") << QStringList{"the pickled object is a None, not a tensor"};
        QTest::newRow("leftover values") << QByteArray("NN.") << QStringList{"1 value(s) left on the stack"};
        QTest::newRow("open MARK at STOP") << QByteArray("(N.") << QStringList{"1 MARK(s) still open"};
        QTest::newRow("INST") << QByteArray("i") << QStringList{"unsupported pickle opcode 0x69 (INST) at offset 0"};
        QTest::newRow("EXT1") << QByteArray("\x80\x02\x82\x01") << QStringList{"unsupported pickle opcode 0x82 (EXT1) at offset 2"};
        QTest::newRow("unknown byte") << QByteArray("N\xfe") << QStringList{"unknown pickle opcode 0xfe at offset 1"};
        QTest::newRow("SETITEMS odd") << QByteArray("}(Nu") << QStringList{"odd number of keys and values"};
        QTest::newRow("APPENDS on a dict") << QByteArray("}(e") << QStringList{"applies to a list, not a dict"};
        QTest::newRow("too big") << QByteArray(2 << 20, 'N') << QStringList{"pickle is 2097152 bytes; the limit is 1048576"};
    }
    void pickle_rejects() {
        QFETCH(QByteArray, pickle);
        QFETCH(QStringList, needles);
        verify_mentions(error_of([&] { run(pickle); }), QStringList{"test.pkl: "} + needles);
    }

    // ---- activation folders ----

    void activation_dir_real() {
        const auto layers = read_activation_dir(real_dir(), 6, 1024);
        QCOMPARE(layers.size(), size_t(6));
        for (int il = 0; il < 6; ++il) {
            const QJsonObject e = expected()["real"].toObject()[QString("activation_%1.pt").arg(il)].toObject();
            double sum = 0;
            for (double x : layers[size_t(il)]) sum += x;
            QVERIFY2(std::abs(sum - e["sum"].toDouble()) <= 1e-12 * e["sum"].toDouble(), qPrintable(QString("layer %1").arg(il)));
            QVERIFY(layers[size_t(il)].front() == e["first"].toDouble());
            QVERIFY(layers[size_t(il)].back() == e["last"].toDouble());
        }
    }

    // activation_10.pt is layer 10 (a string sort would make it layer 2).
    void activation_dir_numeric_order() {
        const std::string dir = fixture("dirs/twelve");
        const auto layers = read_activation_dir(dir, 12, 16);
        QCOMPARE(layers.size(), size_t(12));
        for (size_t il = 0; il < 12; ++il)
            for (size_t j = 0; j < 16; ++j) QVERIFY2(layers[il][j] == double(100 * il + j), qPrintable(QString("layer %1").arg(il)));
        // Fewer layers than files: the rest are not read.
        QCOMPARE(read_activation_dir(dir + "/", 11, 16).size(), size_t(11));
        // LongStorage counts convert too.
        const auto counts = read_activation_dir(fixture("dirs/int64"), 1, 16);
        QVERIFY(counts[0][15] == 45.0);
    }

    void activation_dir_errors_data() {
        QTest::addColumn<QString>("dir");  // relative to tests/data/activation, or "real"
        QTest::addColumn<int>("n_layer");
        QTest::addColumn<qlonglong>("n_ff");
        QTest::addColumn<QString>("file");  // the file the message must name ("" = the directory)
        QTest::addColumn<QStringList>("needles");
        QTest::newRow("wrong length") << "dirs/wrong_length" << 2 << 16LL << "activation_1.pt"
                                      << QStringList{"holds 15 values; layer 1 needs n_ff = 16"};
        QTest::newRow("missing layer") << "dirs/missing_layer" << 3 << 16LL << "activation_1.pt"
                                       << QStringList{"missing; no activation statistics for layer 1 of 3"};
        QTest::newRow("negative value") << "dirs/negative" << 2 << 16LL << "activation_1.pt"
                                        << QStringList{"value 5 is -1; activation statistics must be finite and non-negative"};
        QTest::newRow("infinite value") << "dirs/not_finite" << 1 << 16LL << "activation_0.pt" << QStringList{"value 3 is inf"};
        QTest::newRow("real, wrong n_ff") << "real" << 6 << 2048LL << "activation_0.pt"
                                          << QStringList{"holds 1024 values; layer 0 needs n_ff = 2048"};
        QTest::newRow("real, one layer too many") << "real" << 7 << 1024LL << "activation_6.pt"
                                                  << QStringList{"missing; no activation statistics for layer 6 of 7"};
        QTest::newRow("n_layer 0") << "real" << 0 << 1024LL << "" << QStringList{"n_layer 0 is out of range"};
        QTest::newRow("n_ff 0") << "real" << 6 << 0LL << "" << QStringList{"n_ff 0 is out of range"};
        QTest::newRow("not a directory") << "nowhere" << 1 << 16LL << "" << QStringList{"not a directory"};
        QTest::newRow("hostile file inside") << "hostile-copy" << 1 << 16LL << "activation_0.pt"
                                             << QStringList{"global 'os.system' is not allowed"};
    }
    void activation_dir_errors() {
        QFETCH(QString, dir);
        QFETCH(int, n_layer);
        QFETCH(qlonglong, n_ff);
        QFETCH(QString, file);
        QFETCH(QStringList, needles);
        std::string path = dir == "real" ? real_dir() : fixture(dir);
        if (dir == "hostile-copy") {
            path = tmp("hostile-copy");
            QVERIFY(QDir().mkpath(QString::fromStdString(path)));
            write_all(path + "/activation_0.pt", read_all(fixture("hostile/global_os_system.pt")));
        }
        const std::string named = file.isEmpty() ? path : path + "/" + file.toStdString();
        verify_mentions(error_of([&] { read_activation_dir(path, n_layer, n_ff); }), QStringList{QString::fromStdString(named)} + needles);
    }
};

QTEST_GUILESS_MAIN(TestActivationFile)
#include "tst_activation_file.moc"
