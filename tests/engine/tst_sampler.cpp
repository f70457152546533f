// Tests for ember::sampling::Sampler: every stage on crafted logits where the surviving
// tokens or the probabilities are known exactly, seeding, non-finite logits, and the
// no-allocation claim of the per-token path (via a counting global operator new).

#include <QtTest>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <random>
#include <set>
#include <vector>

#include "common/error.h"
#include "sampling/sampler.h"

// ---- counting operator new ---------------------------------------------------------------
// Counts every operator new on the calling thread (thread-local, so Qt's watchdog thread
// cannot disturb a measurement). Standard containers, std::string and exceptions all come
// through here; plain malloc would not, and the sampler does not call it.

namespace {
thread_local std::size_t t_allocations = 0;

void* counted_alloc(std::size_t size) {
    ++t_allocations;
    if (void* p = std::malloc(size ? size : 1)) {
        return p;
    }
    throw std::bad_alloc();
}

void* counted_alloc_aligned(std::size_t size, std::align_val_t al) {
    ++t_allocations;
    const auto a = static_cast<std::size_t>(al);
    const std::size_t rounded = (std::max<std::size_t>(size, 1) + a - 1) / a * a;
    if (void* p = std::aligned_alloc(a, rounded)) {
        return p;
    }
    throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_alloc_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_alloc_aligned(n, a); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try { return counted_alloc(n); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    try { return counted_alloc(n); } catch (...) { return nullptr; }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

// ---- helpers -----------------------------------------------------------------------------

using ember::sampling::Sampler;
using ember::sampling::SamplerParams;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Every stage off, temperature 1: a plain softmax draw.
SamplerParams plain_params(uint64_t seed = 1234) {
    SamplerParams p;
    p.temperature = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.repeat_penalty = 1.0f;
    p.seed = seed;
    return p;
}

SamplerParams greedy_params(uint64_t seed = 1234) {
    SamplerParams p = plain_params(seed);
    p.temperature = 0.0f;
    return p;
}

std::vector<float> to_vector(const QList<float>& l) { return {l.begin(), l.end()}; }

// Logits whose softmax is exactly the given (normalized) probabilities.
std::vector<float> log_probs(const QList<float>& probs) {
    std::vector<float> out;
    for (float p : probs) {
        out.push_back(std::log(p));
    }
    return out;
}

std::vector<float> random_logits(int n, uint32_t seed, float scale = 3.0f) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> out(static_cast<size_t>(n));
    for (float& v : out) {
        v = dist(gen);
    }
    return out;
}

// The set of ids seen in n draws.
std::set<int> drawn_set(const SamplerParams& params, const std::vector<float>& logits, int n) {
    Sampler s(params, static_cast<int32_t>(logits.size()));
    std::set<int> seen;
    for (int i = 0; i < n; ++i) {
        seen.insert(s.sample(logits));
    }
    return seen;
}

std::set<int> to_set(const QList<int>& l) { return {l.begin(), l.end()}; }

// Build a readable failure message for two id sets.
QByteArray describe(const std::set<int>& got, const std::set<int>& want) {
    QByteArray m = "drawn {";
    for (int id : got) m += QByteArray::number(id) + ' ';
    m += "} expected {";
    for (int id : want) m += QByteArray::number(id) + ' ';
    return m + '}';
}

}  // namespace

class TestSampler : public QObject {
    Q_OBJECT

private slots:
    void invalidParams_data();
    void invalidParams();
    void callerErrors();

    void greedy_data();
    void greedy();
    void greedyIgnoresSeed();

    void repeatPenalty_data();
    void repeatPenalty();

    void topKOneIsGreedy_data();
    void topKOneIsGreedy();
    void topK_data();
    void topK();
    void topP_data();
    void topP();
    void minP_data();
    void minP();

    void temperature_data();
    void temperature();

    void seeding();

    void nonFiniteLogits_data();
    void nonFiniteLogits();

    void drawBoundaries();
    void noAllocationPerToken();
};

// ---- parameter and caller errors ---------------------------------------------------------

void TestSampler::invalidParams_data() {
    QTest::addColumn<int>("field");  // which member to break
    QTest::addColumn<float>("value");
    QTest::addColumn<int>("n_vocab");
    QTest::addColumn<QString>("mentions");

    QTest::newRow("n_vocab 0") << -1 << 0.0f << 0 << "n_vocab is 0";
    QTest::newRow("n_vocab negative") << -1 << 0.0f << -5 << "n_vocab is -5";
    QTest::newRow("temperature nan") << 0 << kNaN << 10 << "temperature is nan";
    QTest::newRow("temperature inf") << 0 << kInf << 10 << "temperature is inf";
    QTest::newRow("top_p nan") << 1 << kNaN << 10 << "top_p is nan";
    QTest::newRow("min_p nan") << 2 << kNaN << 10 << "min_p is nan";
    QTest::newRow("repeat_penalty 0") << 3 << 0.0f << 10 << "repeat_penalty is 0";
    QTest::newRow("repeat_penalty -1") << 3 << -1.0f << 10 << "repeat_penalty is -1";
    QTest::newRow("repeat_penalty inf") << 3 << kInf << 10 << "repeat_penalty is inf";
    QTest::newRow("repeat_last_n -1") << 4 << -1.0f << 10 << "repeat_last_n is -1";
}

void TestSampler::invalidParams() {
    QFETCH(int, field);
    QFETCH(float, value);
    QFETCH(int, n_vocab);
    QFETCH(QString, mentions);

    SamplerParams p;
    switch (field) {
    case 0: p.temperature = value; break;
    case 1: p.top_p = value; break;
    case 2: p.min_p = value; break;
    case 3: p.repeat_penalty = value; break;
    case 4: p.repeat_last_n = static_cast<int32_t>(value); break;
    default: break;
    }
    try {
        Sampler s(p, n_vocab);
        QFAIL("constructor accepted invalid parameters");
    } catch (const ember::EngineError& e) {
        const QString msg = QString::fromUtf8(e.what());
        QVERIFY2(msg.contains(mentions), qPrintable(msg));
    }
}

void TestSampler::callerErrors() {
    Sampler s(plain_params(), 4);
    const std::vector<float> short_logits(3, 0.0f);
    QVERIFY_THROWS_EXCEPTION(ember::EngineError, s.sample(short_logits));
    QVERIFY_THROWS_EXCEPTION(ember::EngineError, s.accept(4));
    QVERIFY_THROWS_EXCEPTION(ember::EngineError, s.accept(-1));
    s.accept(3);  // in range: fine
}

// ---- greedy ------------------------------------------------------------------------------

void TestSampler::greedy_data() {
    QTest::addColumn<QList<float>>("logits");
    QTest::addColumn<int>("expected");

    QTest::newRow("max first") << QList<float>{5, 1, 2, 3} << 0;
    QTest::newRow("max last") << QList<float>{1, 2, 3, 5} << 3;
    QTest::newRow("max middle, negatives") << QList<float>{-4, -1, -0.5f, -2} << 2;
    QTest::newRow("tie picks lowest id") << QList<float>{1, 7, 3, 7, 7} << 1;
    QTest::newRow("tie at id 0") << QList<float>{2, 2, 2} << 0;
    QTest::newRow("-inf ignored") << QList<float>{-kInf, -3, -kInf} << 1;
    QTest::newRow("nan ignored") << QList<float>{kNaN, -3, kNaN, -4} << 1;
    QTest::newRow("+inf wins") << QList<float>{1e30f, kInf, 3} << 1;
    QTest::newRow("all -inf gives id 0") << QList<float>{-kInf, -kInf, -kInf} << 0;
    QTest::newRow("all nan gives id 0") << QList<float>{kNaN, kNaN} << 0;
    QTest::newRow("single token") << QList<float>{-1} << 0;
}

void TestSampler::greedy() {
    QFETCH(QList<float>, logits);
    QFETCH(int, expected);

    const std::vector<float> l = to_vector(logits);
    // Greedy ignores every filter: the defaults for top-k/top-p/min-p must not matter.
    SamplerParams p;
    p.temperature = 0.0f;
    p.repeat_penalty = 1.0f;
    Sampler s(p, static_cast<int32_t>(l.size()));
    QCOMPARE(s.sample(l), expected);
    p.temperature = -1.0f;
    Sampler negative(p, static_cast<int32_t>(l.size()));
    QCOMPARE(negative.sample(l), expected);
}

void TestSampler::greedyIgnoresSeed() {
    // Nearly flat logits: any seed-dependent draw would wander away from the argmax.
    std::vector<float> l = random_logits(1000, 7, 0.01f);
    const int32_t best = static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
    for (uint64_t seed : {0ull, 1ull, 42ull, 0xFFFFFFFFull, 0xDEADBEEFCAFEull}) {
        Sampler s(greedy_params(seed), 1000);
        for (int i = 0; i < 50; ++i) {
            QCOMPARE(s.sample(l), best);
        }
    }
}

// ---- repetition penalty ------------------------------------------------------------------

void TestSampler::repeatPenalty_data() {
    QTest::addColumn<QList<float>>("logits");
    QTest::addColumn<QList<int>>("accepted");
    QTest::addColumn<int>("last_n");
    QTest::addColumn<float>("penalty");
    QTest::addColumn<int>("expected");

    // 2.0 / 1.1 = 1.818 < 1.9: dividing a positive logit moves the argmax.
    const QList<float> pos{2.0f, 1.9f, 0.5f, -5, -5, -5, -5, -5};
    QTest::newRow("positive, no history") << pos << QList<int>{} << 64 << 1.1f << 0;
    QTest::newRow("positive, penalized") << pos << QList<int>{0} << 64 << 1.1f << 1;
    QTest::newRow("positive, penalty off") << pos << QList<int>{0} << 64 << 1.0f << 0;
    QTest::newRow("positive, last_n 0") << pos << QList<int>{0} << 0 << 1.1f << 0;
    // -1.0 * 1.1 = -1.1 < -1.05: a negative logit is multiplied (dividing would raise it).
    const QList<float> neg{-1.0f, -1.05f, -3, -5, -5, -5, -5, -5};
    QTest::newRow("negative, no history") << neg << QList<int>{} << 64 << 1.1f << 0;
    QTest::newRow("negative, penalized") << neg << QList<int>{0} << 64 << 1.1f << 1;
    // Token 0 falls out of a window of 2 after two newer tokens; a window of 3 still has it.
    QTest::newRow("outside window") << pos << QList<int>{0, 5, 6} << 2 << 1.1f << 0;
    QTest::newRow("inside window") << pos << QList<int>{0, 5, 6} << 3 << 1.1f << 1;
    QTest::newRow("window wraps twice") << pos << QList<int>{0, 5, 6, 0, 7, 5, 6} << 2 << 1.1f << 0;
    QTest::newRow("re-entered window") << pos << QList<int>{5, 6, 0, 7, 0} << 2 << 1.1f << 1;
    // 2.0 / 1.1 = 1.818 > 1.7, but 2.0 / 1.1^3 = 1.503 < 1.7: a repeated token counts once.
    const QList<float> once{2.0f, 1.7f, 0.5f, -5, -5, -5, -5, -5};
    QTest::newRow("distinct once") << once << QList<int>{0, 0, 0} << 64 << 1.1f << 0;
    // A penalty < 1 rewards repetition: 1.9 / 0.9 = 2.11 > 2.0.
    QTest::newRow("penalty below 1") << pos << QList<int>{1} << 64 << 0.9f << 1;
}

void TestSampler::repeatPenalty() {
    QFETCH(QList<float>, logits);
    QFETCH(QList<int>, accepted);
    QFETCH(int, last_n);
    QFETCH(float, penalty);
    QFETCH(int, expected);

    const std::vector<float> l = to_vector(logits);
    SamplerParams p = greedy_params();
    p.repeat_penalty = penalty;
    p.repeat_last_n = last_n;
    Sampler s(p, static_cast<int32_t>(l.size()));
    for (int t : accepted) {
        s.accept(t);
    }
    QCOMPARE(s.sample(l), expected);

    // reset() forgets the history.
    s.reset();
    QCOMPARE(s.sample(l), static_cast<int>(std::max_element(l.begin(), l.end()) - l.begin()));
}

// ---- top-k, top-p, min-p -----------------------------------------------------------------

void TestSampler::topKOneIsGreedy_data() {
    QTest::addColumn<float>("temperature");
    QTest::addColumn<bool>("tie");
    for (float t : {0.1f, 0.8f, 1.0f, 5.0f, 100.0f}) {
        QTest::addRow("T=%g", double(t)) << t << false;
        QTest::addRow("T=%g, tie", double(t)) << t << true;
    }
}

void TestSampler::topKOneIsGreedy() {
    QFETCH(float, temperature);
    QFETCH(bool, tie);

    std::vector<float> l = random_logits(500, 99, 1.0f);
    int expected = static_cast<int>(std::max_element(l.begin(), l.end()) - l.begin());
    if (tie) {
        // Two new maxima; the later id with the same logit must not win.
        const float top = l[static_cast<size_t>(expected)] + 1.0f;
        l[100] = top;
        l[400] = top;
        expected = 100;
    }

    SamplerParams p = plain_params();
    p.temperature = temperature;
    p.top_k = 1;
    p.top_p = 0.5f;  // later stages must not change a single survivor
    p.min_p = 0.5f;
    Sampler s(p, 500);
    Sampler g(greedy_params(), 500);
    QCOMPARE(g.sample(l), expected);
    for (int i = 0; i < 200; ++i) {
        QCOMPARE(s.sample(l), expected);
    }
}

void TestSampler::topK_data() {
    QTest::addColumn<QList<float>>("probs");
    QTest::addColumn<int>("k");
    QTest::addColumn<QList<int>>("survivors");

    const QList<float> probs{0.05f, 0.3f, 0.5f, 0.15f};
    QTest::newRow("k=2") << probs << 2 << QList<int>{1, 2};
    QTest::newRow("k=3") << probs << 3 << QList<int>{1, 2, 3};
    QTest::newRow("k=4 (all)") << probs << 4 << QList<int>{0, 1, 2, 3};
    QTest::newRow("k=100 (all)") << probs << 100 << QList<int>{0, 1, 2, 3};
    QTest::newRow("k=0 (off)") << probs << 0 << QList<int>{0, 1, 2, 3};
    // Equal logits at the cut: the lower id survives.
    QTest::newRow("tie at cut") << QList<float>{0.1f, 0.3f, 0.3f, 0.3f} << 2 << QList<int>{1, 2};
}

void TestSampler::topK() {
    QFETCH(QList<float>, probs);
    QFETCH(int, k);
    QFETCH(QList<int>, survivors);

    SamplerParams p = plain_params();
    p.top_k = k;
    const std::set<int> got = drawn_set(p, log_probs(probs), 2000);
    const std::set<int> want = to_set(survivors);
    QVERIFY2(got == want, describe(got, want).constData());
}

void TestSampler::topP_data() {
    QTest::addColumn<QList<float>>("probs");
    QTest::addColumn<float>("top_p");
    QTest::addColumn<float>("temperature");
    QTest::addColumn<QList<int>>("survivors");

    // Sorted: id2 0.5, id1 0.3, id3 0.15, id0 0.05; cumulative 0.5, 0.8, 0.95, 1.0.
    const QList<float> probs{0.05f, 0.3f, 0.5f, 0.15f};
    QTest::newRow("p=0.4") << probs << 0.4f << 1.0f << QList<int>{2};
    QTest::newRow("p=0.75") << probs << 0.75f << 1.0f << QList<int>{1, 2};
    QTest::newRow("p=0.85") << probs << 0.85f << 1.0f << QList<int>{1, 2, 3};
    QTest::newRow("p=0.99") << probs << 0.99f << 1.0f << QList<int>{0, 1, 2, 3};
    QTest::newRow("p=1 (off)") << probs << 1.0f << 1.0f << QList<int>{0, 1, 2, 3};
    QTest::newRow("p=0 keeps one") << probs << 0.0f << 1.0f << QList<int>{2};
    // Top-p runs before temperature: at T=5 applied first, {2,1} would hold only 57% of the
    // mass and id 3 would survive too.
    QTest::newRow("p=0.75, T=5") << probs << 0.75f << 5.0f << QList<int>{1, 2};
    // At T=0.2 applied first, id 2 alone would hold 92% and id 1 would be cut.
    QTest::newRow("p=0.75, T=0.2") << probs << 0.75f << 0.2f << QList<int>{1, 2};
}

void TestSampler::topP() {
    QFETCH(QList<float>, probs);
    QFETCH(float, top_p);
    QFETCH(float, temperature);
    QFETCH(QList<int>, survivors);

    SamplerParams p = plain_params();
    p.top_p = top_p;
    p.temperature = temperature;
    const std::set<int> got = drawn_set(p, log_probs(probs), 2000);
    const std::set<int> want = to_set(survivors);
    QVERIFY2(got == want, describe(got, want).constData());
}

void TestSampler::minP_data() {
    QTest::addColumn<QList<float>>("probs");
    QTest::addColumn<float>("min_p");
    QTest::addColumn<float>("temperature");
    QTest::addColumn<QList<int>>("survivors");

    // p_max = 0.4 (id 1).
    const QList<float> probs{0.06f, 0.4f, 0.04f, 0.3f, 0.2f};
    QTest::newRow("min_p=0.2 (cut 0.08)") << probs << 0.2f << 1.0f << QList<int>{1, 3, 4};
    QTest::newRow("min_p=0.6 (cut 0.24)") << probs << 0.6f << 1.0f << QList<int>{1, 3};
    QTest::newRow("min_p=0.9 (cut 0.36)") << probs << 0.9f << 1.0f << QList<int>{1};
    QTest::newRow("min_p=1 keeps max") << probs << 1.0f << 1.0f << QList<int>{1};
    QTest::newRow("min_p=5 keeps max") << probs << 5.0f << 1.0f << QList<int>{1};
    QTest::newRow("min_p=0.12 (cut 0.048)") << probs << 0.12f << 1.0f << QList<int>{0, 1, 3, 4};
    QTest::newRow("min_p=0 (off)") << probs << 0.0f << 1.0f << QList<int>{0, 1, 2, 3, 4};
    // Min-p runs before temperature: at T=5 applied first every ratio would exceed 0.2.
    QTest::newRow("min_p=0.2, T=5") << probs << 0.2f << 5.0f << QList<int>{1, 3, 4};
}

void TestSampler::minP() {
    QFETCH(QList<float>, probs);
    QFETCH(float, min_p);
    QFETCH(float, temperature);
    QFETCH(QList<int>, survivors);

    SamplerParams p = plain_params();
    p.min_p = min_p;
    p.temperature = temperature;
    const std::set<int> got = drawn_set(p, log_probs(probs), 2000);
    const std::set<int> want = to_set(survivors);
    QVERIFY2(got == want, describe(got, want).constData());

    // Same survivors when the array was sorted by an earlier stage (top-k) first.
    p.top_k = 5;
    const std::set<int> sorted_got = drawn_set(p, log_probs(probs), 2000);
    QVERIFY2(sorted_got == want, describe(sorted_got, want).constData());
}

// ---- temperature -------------------------------------------------------------------------

void TestSampler::temperature_data() {
    QTest::addColumn<float>("temperature");
    for (float t : {0.25f, 0.5f, 0.8f, 1.0f, 2.0f, 4.0f}) {
        QTest::addRow("T=%g", double(t)) << t;
    }
}

void TestSampler::temperature() {
    QFETCH(float, temperature);

    // Two tokens, logits {1, 0}: P(token 0) = softmax(logits / T)[0] = 1 / (1 + exp(-1 / T)).
    const std::vector<float> l{1.0f, 0.0f};
    const double expected = 1.0 / (1.0 + std::exp(-1.0 / temperature));
    constexpr int n = 20000;
    SamplerParams p = plain_params(20240601);
    p.temperature = temperature;
    Sampler s(p, 2);
    int zeros = 0;
    for (int i = 0; i < n; ++i) {
        zeros += s.sample(l) == 0 ? 1 : 0;
    }
    // Binomial count: the frequency lies within 5 sigma except with probability ~6e-7.
    const double freq = double(zeros) / n;
    const double sigma = std::sqrt(expected * (1.0 - expected) / n);
    QVERIFY2(std::abs(freq - expected) <= 5.0 * sigma,
             qPrintable(QStringLiteral("frequency %1, expected %2 +- %3 (5 sigma)")
                            .arg(freq)
                            .arg(expected)
                            .arg(5.0 * sigma)));
}

// ---- seeding -----------------------------------------------------------------------------

void TestSampler::seeding() {
    // Default params (every stage on) over 100 moderately flat logits, accepting each token
    // so the repetition penalty feeds back into later draws.
    const std::vector<float> l = random_logits(100, 3, 0.5f);
    auto run = [&](Sampler& s) {
        std::vector<int32_t> out;
        for (int i = 0; i < 200; ++i) {
            const int32_t t = s.sample(l);
            s.accept(t);
            out.push_back(t);
        }
        return out;
    };
    SamplerParams p;
    p.seed = 42;
    Sampler a(p, 100);
    Sampler b(p, 100);
    const std::vector<int32_t> first = run(a);
    QCOMPARE(run(b), first);
    QVERIFY(std::set<int32_t>(first.begin(), first.end()).size() > 10);  // really random

    p.seed = 43;
    Sampler c(p, 100);
    QVERIFY(run(c) != first);

    // reset() clears the history and re-seeds: the run repeats exactly.
    a.reset();
    QCOMPARE(run(a), first);
    QCOMPARE(a.params().seed, uint64_t(42));
}

// ---- NaN and inf ------------------------------------------------------------------------

void TestSampler::nonFiniteLogits_data() {
    QTest::addColumn<QList<float>>("logits");
    QTest::addColumn<QList<int>>("allowed");

    QTest::newRow("nan and -inf mixed") << QList<float>{-kInf, 0.5f, kNaN, -kInf, 0.2f}
                                        << QList<int>{1, 4};
    QTest::newRow("one finite") << QList<float>{-kInf, kNaN, -kInf, 3.0f, -kInf} << QList<int>{3};
    QTest::newRow("all -inf") << QList<float>{-kInf, -kInf, -kInf, -kInf}
                              << QList<int>{0, 1, 2, 3};
    QTest::newRow("all nan") << QList<float>{kNaN, kNaN, kNaN} << QList<int>{0, 1, 2};
    QTest::newRow("+inf takes all") << QList<float>{0, kInf, 1e30f, kInf, kNaN}
                                    << QList<int>{1, 3};
    QTest::newRow("huge finite") << QList<float>{3e38f, -3e38f, 3e38f, -kInf}
                                 << QList<int>{0, 2};
}

void TestSampler::nonFiniteLogits() {
    QFETCH(QList<float>, logits);
    QFETCH(QList<int>, allowed);

    const std::vector<float> l = to_vector(logits);
    const std::set<int> want = to_set(allowed);
    SamplerParams defaults;  // every stage on, repetition penalty included
    SamplerParams tiny_t = plain_params();
    tiny_t.temperature = 1e-30f;
    for (const SamplerParams& p : {plain_params(), defaults, tiny_t, greedy_params()}) {
        Sampler s(p, static_cast<int32_t>(l.size()));
        for (int i = 0; i < 500; ++i) {
            const int32_t t = s.sample(l);
            QVERIFY2(want.count(t) == 1, qPrintable(QStringLiteral("drew id %1").arg(t)));
            s.accept(t);
        }
    }
}

// ---- draw --------------------------------------------------------------------------------

void TestSampler::drawBoundaries() {
    using namespace ember::sampling;
    Candidate data[] = {{7, 0, 0.0f}, {3, 0, 0.25f}, {9, 0, 0.0f}, {4, 0, 0.75f}, {5, 0, 0.0f}};
    const CandidateArray c{data, 5, false};
    QCOMPARE(draw(c, 0.0), 3);           // u = 0 never picks a zero-probability token
    QCOMPARE(draw(c, 0.2499), 3);
    QCOMPARE(draw(c, 0.25), 4);          // cumulative 0.25 is not > 0.25
    QCOMPARE(draw(c, 0.9999999999), 4);  // the trailing zero is never chosen
}

// ---- allocation --------------------------------------------------------------------------

void TestSampler::noAllocationPerToken() {
    // The hook must be live, or a zero count would prove nothing.
    const std::size_t before_probe = t_allocations;
    { auto probe = std::make_unique<int>(1); QVERIFY(probe); }
    if (t_allocations == before_probe) {
        QSKIP("operator new is not replaced in this build (sanitizer runtime?)");
    }

    constexpr int32_t n_vocab = 32000;
    const std::vector<float> l = random_logits(n_vocab, 11, 2.0f);
    SamplerParams full_sort;  // top_k off: top-p sorts the whole vocabulary
    full_sort.top_k = 0;
    SamplerParams unsorted = plain_params();  // min-p compacts an unsorted array
    unsorted.min_p = 0.1f;
    unsorted.repeat_penalty = 1.3f;
    for (const SamplerParams& p : {SamplerParams{}, full_sort, unsorted, greedy_params()}) {
        Sampler s(p, n_vocab);
        const std::size_t before = t_allocations;
        for (int i = 0; i < 1000; ++i) {
            s.accept(s.sample(l));
        }
        s.reset();
        const std::size_t count = t_allocations - before;
        QCOMPARE(count, std::size_t(0));
    }
}

QTEST_GUILESS_MAIN(TestSampler)
#include "tst_sampler.moc"
