// KV cache bookkeeping without a model: commit, truncate (regenerate/edit), clear, overflow.
#include <QtTest>

#include "common/error.h"
#include "model/kv_cache.h"

using ember::model::KvCache;

class TestKvCache : public QObject {
    Q_OBJECT

private slots:
    void commit_truncate_clear() {
        KvCache kv(2, 8, 4);
        QCOMPARE(kv.n_ctx(), 8);
        QCOMPARE(kv.n_past(), 0);
        QCOMPARE(kv.bytes(), size_t(2 * 2 * 8 * 4 * 2));
        kv.k(1, 5)[3] = 0x1234;
        kv.commit(6);
        QCOMPARE(kv.n_past(), 6);
        QCOMPARE(kv.free_cells(), 2);
        kv.truncate(3);
        QCOMPARE(kv.n_past(), 3);
        kv.truncate(10);  // never grows
        QCOMPARE(kv.n_past(), 3);
        kv.truncate(-1);
        QCOMPARE(kv.n_past(), 0);
        kv.commit(8);
        QCOMPARE(kv.free_cells(), 0);
        kv.clear();
        QCOMPARE(kv.n_past(), 0);
        QCOMPARE(kv.k(1, 5)[3], uint16_t(0x1234));  // storage is reused, not wiped
    }

    void layers_and_positions_do_not_overlap() {
        KvCache kv(3, 5, 2);
        for (int il = 0; il < 3; ++il)
            for (int pos = 0; pos < 5; ++pos) {
                kv.k(il, pos)[0] = uint16_t(100 * il + pos);
                kv.v(il, pos)[1] = uint16_t(1000 + 100 * il + pos);
            }
        for (int il = 0; il < 3; ++il)
            for (int pos = 0; pos < 5; ++pos) {
                QCOMPARE(kv.k(il, pos)[0], uint16_t(100 * il + pos));
                QCOMPARE(kv.v(il, pos)[1], uint16_t(1000 + 100 * il + pos));
            }
    }

    void overflow_is_an_error() {
        KvCache kv(1, 4, 2);
        kv.commit(3);
        try {
            kv.commit(2);
            QFAIL("expected an error");
        } catch (const ember::EngineError& e) {
            QVERIFY(QString(e.what()).contains("cannot add 2 tokens, 1 of 4 cells are free"));
        }
        QCOMPARE(kv.n_past(), 3);
    }
};

QTEST_GUILESS_MAIN(TestKvCache)
#include "tst_kv_cache.moc"
