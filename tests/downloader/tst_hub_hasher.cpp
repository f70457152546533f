// The hashing thread: digests a file while it grows, restarts cleanly, and matches known values.
#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>

#include "hasher.h"

using namespace ember::hub;

class TestHubHasher : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    std::atomic<int> n_results_{0};

    std::string write(const char* name, const QByteArray& bytes) {
        std::string path = (dir_.path() + "/" + name).toStdString();
        QFile f(QString::fromStdString(path));
        f.open(QIODevice::WriteOnly);
        f.write(bytes);
        return path;
    }

    std::string digest(Hasher& h, Hasher::Stream& s) {
        std::optional<Result<std::string>> r;
        for (int i = 0; i < 500 && !r; ++i) {
            r = h.result(s);
            if (!r) QThread::msleep(10);
        }
        if (!r || !*r) return "<none>";
        return **r;
    }

private slots:
    void known_digests() {
        Hasher h([this] { ++n_results_; });
        auto abc = h.open(write("abc", "abc"), DigestKind::Sha256, 3);
        QVERIFY(abc.ok());
        h.advance(**abc, 3);
        h.finish(**abc);
        QCOMPARE(QString::fromStdString(digest(h, **abc)),
                 QString("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        // `git hash-object` of "hello\n".
        auto blob = h.open(write("hello", "hello\n"), DigestKind::GitBlobSha1, 6);
        QVERIFY(blob.ok());
        h.advance(**blob, 6);
        h.finish(**blob);
        QCOMPARE(QString::fromStdString(digest(h, **blob)), QString("ce013625030ba8dba906f756967f9e9ca394464a"));
        QVERIFY(n_results_ >= 2);
    }

    void follows_a_growing_file_and_restarts() {
        Hasher h([] {});
        QByteArray data(3 << 20, 'x');
        for (int i = 0; i < data.size(); ++i) data[i] = char(i * 7 + (i >> 9));
        std::string path = write("grow", {});
        auto s = h.open(path, DigestKind::Sha256, uint64_t(data.size()));
        QVERIFY(s.ok());
        int fd = ::open(path.c_str(), O_WRONLY);
        QVERIFY(fd >= 0);
        QCOMPARE(::write(fd, "garbage", 7), ssize_t(7));
        h.advance(**s, 7);
        h.restart(**s, [&] { QCOMPARE(::ftruncate(fd, 0), 0); });
        for (qsizetype off = 0; off < data.size(); off += 100000) {
            qsizetype n = std::min<qsizetype>(100000, data.size() - off);
            QCOMPARE(::pwrite(fd, data.constData() + off, size_t(n), off), ssize_t(n));
            h.advance(**s, uint64_t(off + n));
        }
        ::close(fd);
        h.finish(**s);
        QCOMPARE(QString::fromStdString(digest(h, **s)),
                 QString(QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex()));
        h.close(*s);
    }

    void missing_file_is_an_error() {
        Hasher h([] {});
        auto s = h.open((dir_.path() + "/nope").toStdString(), DigestKind::Sha256, 1);
        QVERIFY(!s.ok());
        QVERIFY(s.error().message.find("nope") != std::string::npos);
    }
};

QTEST_MAIN(TestHubHasher)
#include "tst_hub_hasher.moc"
