// The per-token path allocates nothing: global operator new (plain and nothrow, which
// std::stable_sort's buffer uses) is replaced by a counting one,
// and the count must not move between the second and the last token of a generation.
#include <QtTest>

#include <atomic>
#include <cstdlib>
#include <new>

#include "ember/model.h"
#include "ember/session.h"

namespace {
std::atomic<long> g_allocations{0};
}

void* operator new(std::size_t n) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(n ? n : 1);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

class TestSessionNoAlloc : public QObject {
    Q_OBJECT

private slots:
    void generation_allocates_nothing_per_token_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("threads");
        QTest::addColumn<float>("temperature");
        QTest::newRow("q4_0 greedy, 2 threads") << "tiny-llama-q4_0.gguf" << 2 << 0.0f;
        QTest::newRow("f16 sampled, 1 thread") << "tiny-llama-f16.gguf" << 1 << 0.8f;
        QTest::newRow("sparse bamboo, 2 threads") << "tiny-bamboo-f16.powerinfer.gguf" << 2 << 0.0f;
    }

    void generation_allocates_nothing_per_token() {
        QFETCH(QString, model);
        QFETCH(int, threads);
        QFETCH(float, temperature);
        const long before = g_allocations.load();
        ::operator delete(::operator new(16));  // the counter really counts in this binary
        QVERIFY(g_allocations.load() > before);

        auto m = ember::Model::load(std::string(EMBER_TEST_DATA_DIR) + "/models/" + model.toStdString());
        QVERIFY(m.ok());
        ember::SessionParams sp;
        sp.n_ctx = 128;
        sp.n_threads = threads;
        auto s = ember::Session::create(*m, sp);
        QVERIFY(s.ok());
        ember::GenerateParams gp;
        gp.n_predict = 40;
        gp.ignore_eos = true;
        gp.sampling.temperature = temperature;
        gp.sampling.seed = 7;
        long at_second = -1, at_last = -1;
        int seen = 0;
        const int32_t prompt[] = {1, 907, 261, 2020};
        auto r = (*s)->generate(prompt, gp, [&](const ember::TokenEvent&) {
            ++seen;
            if (seen == 2) at_second = g_allocations.load();
            if (seen == gp.n_predict) at_last = g_allocations.load();
            return true;
        });
        QVERIFY(r.ok());
        QCOMPARE(seen, gp.n_predict);
        QCOMPARE(at_last - at_second, 0L);
    }
};

QTEST_GUILESS_MAIN(TestSessionNoAlloc)
#include "tst_session_no_alloc.moc"
