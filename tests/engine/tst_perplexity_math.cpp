// ember-perplexity's arithmetic and base file (engine/tools/perplexity_math.h, kl_divergence.h,
// kl_base_file.h), checked against sums written out independently in long double.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <string>
#include <vector>

#include "random_vectors.h"
#include "test_files.h"
#include "tools/kl_base_file.h"
#include "tools/kl_divergence.h"
#include "tools/perplexity_math.h"

namespace {

using namespace ember::tools;

constexpr size_t kVocab = 4096;

// Logits spread like a small model's: N(0, 3).
std::vector<float> logits(uint32_t seed) {
    std::vector<float> v = test_helpers::random_vector(kVocab, seed);
    for (float& x : v) x *= 3.0f;
    return v;
}

std::vector<long double> exact_log_probs(const std::vector<float>& l) {
    long double max = l[0], sum = 0;
    for (float x : l) max = std::max<long double>(max, x);
    for (float x : l) sum += std::exp((long double)x - max);
    std::vector<long double> lp(l.size());
    for (size_t i = 0; i < l.size(); ++i) lp[i] = (long double)l[i] - max - std::log(sum);
    return lp;
}

template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const BaseFileError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

class TestPerplexityMath : public QObject {
    Q_OBJECT

private slots:
    void token_nll_is_minus_log_softmax() {
        for (uint32_t seed = 1; seed <= 5; ++seed) {
            const std::vector<float> l = logits(seed);
            const auto lp = exact_log_probs(l);
            for (int32_t tok : {0, 17, 4095}) {
                // llama.cpp's float subtraction and expf leave a few float ulps of the nll.
                QVERIFY2(std::fabs(token_nll(l, tok) + double(lp[size_t(tok)])) < 1e-5, qPrintable(QString::number(seed)));
            }
        }
    }

    void top_is_the_first_largest_logit() {
        std::vector<float> l(8, 1.0f);
        l[3] = 2.0f;
        l[6] = 2.0f;
        QCOMPARE(row_softmax(l).top, 3);
    }

    void nll_sums_give_llama_cpps_estimate() {
        NllSums s;
        for (double v : {1.0, 2.0, 3.0, 4.0}) s.add(v);
        // mean 2.5, E[x²] 7.5, variance 1.25: uncertainty sqrt(1.25 / 3) · e^2.5.
        QCOMPARE(s.count, int64_t(4));
        QVERIFY(std::fabs(s.ppl() - std::exp(2.5)) < 1e-12);
        QVERIFY(std::fabs(s.ppl_error() - std::sqrt(1.25 / 3.0) * std::exp(2.5)) < 1e-12);
    }

    void base_row_keeps_log_probs_to_half_a_step() {
        const std::vector<float> l = logits(7);
        const auto lp = exact_log_probs(l);
        const BaseRow row = make_base_row(l, 42);
        QCOMPARE(row.top, row_softmax(l).top);
        QCOMPARE(row.nll, token_nll(l, 42));
        QVERIFY(row.scale > 0.0f && row.scale <= kBaseLogProbWindow / 65535.0f * 1.0001f);
        const long double top_lp = lp[size_t(row.top)];
        for (size_t i = 0; i < kVocab; ++i) {
            if (lp[i] <= top_lp - kBaseLogProbWindow) {
                QCOMPARE(row.q[i], uint16_t(0));
                continue;
            }
            const long double stored = (long double)row.min_log_prob + (long double)row.scale * row.q[i];
            QVERIFY2(std::fabs(double(stored - lp[i])) <= row.scale / 2 + 1e-5, qPrintable(QString::number(i)));
        }
    }

    void kl_of_a_position_matches_the_exact_sum() {
        const std::vector<float> base = logits(11);
        const std::vector<float> run = logits(12);
        std::vector<float> near = base;
        for (size_t i = 0; i < kVocab; ++i) near[i] += 0.1f * test_helpers::random_vector(kVocab, 13)[i];
        for (const std::vector<float>* r : std::vector<const std::vector<float>*>{&run, &near, &base}) {
            const auto p = exact_log_probs(base), q = exact_log_probs(*r);
            long double kl = 0;
            for (size_t i = 0; i < kVocab; ++i) kl += std::exp(p[i]) * (p[i] - q[i]);
            KlSums sums;
            add_kl_position(make_base_row(base, 5), *r, 5, sums);
            // The stored log-probabilities are off by at most half a step (1.5e-4).
            QVERIFY2(std::fabs(sums.mean_kld() - double(kl)) < 3e-4,
                     qPrintable(QString("%1 vs %2").arg(sums.mean_kld()).arg(double(kl))));
            QCOMPARE(sums.same_top, int64_t(row_softmax(base).top == row_softmax(*r).top));
        }
    }

    void a_run_against_its_own_base_changes_nothing() {
        KlSums sums;
        for (uint32_t seed = 20; seed < 30; ++seed) {
            const std::vector<float> l = logits(seed);
            add_kl_position(make_base_row(l, int32_t(seed)), l, int32_t(seed), sums);
        }
        QCOMPARE(sums.same_top, int64_t(10));
        QCOMPARE(sums.delta_ppl(), 0.0);
        QCOMPARE(sums.delta_ppl_error(), 0.0);
        QVERIFY(std::fabs(sums.mean_kld()) < 1e-4);
    }

    void delta_ppl_error_against_a_constant_base_is_the_runs_own() {
        // With the base's nll constant, Δppl varies only with this run's mean nll.
        KlSums k;
        NllSums n;
        const double nll[] = {1.0, 2.5, 3.0, 4.5, 2.0};
        for (double v : nll) {
            n.add(v);
            k.nll += v;
            k.nll2 += v * v;
            k.nll_base += 3.0;
            k.nll_base2 += 9.0;
            k.nll_cross += 3.0 * v;
            ++k.count;
        }
        QVERIFY(std::fabs(k.delta_ppl() - (n.ppl() - std::exp(3.0))) < 1e-12);
        QVERIFY(std::fabs(k.delta_ppl_error() - n.ppl_error()) < 1e-9);
    }

    void base_file_round_trip() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("base.kld").toStdString();
        const BaseHeader h{uint32_t(kVocab), 0x1234, 8, 16};
        std::vector<int32_t> tokens(16);
        for (int i = 0; i < 16; ++i) tokens[size_t(i)] = i * 100;
        std::vector<BaseRow> rows;
        {
            BaseFileWriter w(path, h, tokens);
            for (uint64_t i = 0; i < h.n_chunk() * h.rows_per_chunk(); ++i) {
                rows.push_back(make_base_row(logits(100 + uint32_t(i)), int32_t(i)));
                w.write_row(rows.back());
            }
            w.finish();
        }
        BaseFileReader r(path);
        QCOMPARE(r.header().n_vocab, uint32_t(kVocab));
        QCOMPARE(r.header().vocab_hash, uint64_t(0x1234));
        QCOMPARE(r.header().n_ctx, uint32_t(8));
        QCOMPARE(r.tokens(), tokens);
        for (const BaseRow& want : rows) {
            BaseRow got;
            r.read_row(got);
            QCOMPARE(got.nll, want.nll);
            QCOMPARE(got.top, want.top);
            QCOMPARE(got.scale, want.scale);
            QCOMPARE(got.min_log_prob, want.min_log_prob);
            QVERIFY(got.q == want.q);
        }
    }

    void base_file_refusals() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("base.kld").toStdString();
        const BaseHeader h{uint32_t(kVocab), 1, 8, 8};
        {
            BaseFileWriter w(path, h, std::vector<int32_t>(8, 3));
            for (int i = 0; i < 3; ++i) w.write_row(make_base_row(logits(uint32_t(i)), 0));
            w.finish();
        }
        const std::vector<uint8_t> good = test_files::read_all(path);
        auto refused = [&](std::vector<uint8_t> bytes) {
            test_files::write_all(path, bytes);
            return QString::fromStdString(error_of([&] { BaseFileReader r(path); }));
        };
        QVERIFY(refused(good).isEmpty());
        QString e = refused(std::vector<uint8_t>(good.begin(), good.end() - 10));
        QVERIFY2(e.contains(QString::fromStdString(path)) && e.contains("truncated or corrupt") &&
                     e.contains(QString::number(good.size() - 10)) && e.contains(QString::number(good.size())),
                 qPrintable(e));
        std::vector<uint8_t> bad = good;
        bad[0] = 'X';
        QVERIFY2(refused(bad).contains("no EMBERKLB magic"), qPrintable(refused(bad)));
        bad = good;
        bad[8] = 2;  // version
        QVERIFY2(refused(bad).contains("version 2"), qPrintable(refused(bad)));
        bad = good;
        bad[36] = 0xFF;  // the first token (after 36 header bytes): 3 becomes 65535, beyond the vocabulary
        bad[37] = 0xFF;
        QVERIFY2(refused(bad).contains("outside the vocabulary"), qPrintable(refused(bad)));
        QVERIFY(refused({}).contains("no EMBERKLB magic"));
        const QString missing = QString::fromStdString(error_of([&] { BaseFileReader r(path + ".missing"); }));
        QVERIFY2(missing.contains("base.kld.missing: cannot read"), qPrintable(missing));
    }

    void vocab_hash_tells_vocabularies_apart() {
        VocabHash a, b, c;
        for (const char* t : {"a", "bc"}) a.add(t);
        for (const char* t : {"ab", "c"}) b.add(t);
        for (const char* t : {"a", "bc"}) c.add(t);
        QVERIFY(a.value() != b.value());
        QCOMPARE(a.value(), c.value());
    }
};

QTEST_GUILESS_MAIN(TestPerplexityMath)
#include "tst_perplexity_math.moc"
