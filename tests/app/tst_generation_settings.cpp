// A chat's sampling settings as stored with it: JSON round trip, clamping, files written by
// older or newer versions (missing or ill-typed keys), and the seed rule.
#include <QJsonObject>
#include <QtTest>

#include "app/chat/generation_settings.h"

using ember::app::GenerationSettings;

class TestGenerationSettings : public QObject {
    Q_OBJECT

private slots:
    void round_trip() {
        GenerationSettings s;
        s.temperature = 1.25;
        s.top_k = 7;
        s.top_p = 0.5;
        s.min_p = 0.1;
        s.repeat_penalty = 1.3;
        s.max_tokens = 999;
        s.seed = 123456789012;
        s.context_length = 4096;
        QCOMPARE(ember::app::settings_from_json(ember::app::to_json(s), {}), s);
    }

    void missing_or_wrong_keys_keep_defaults() {
        GenerationSettings defaults;
        defaults.temperature = 0.3;
        const QJsonObject json{{"temperature", "hot"}, {"topK", 5}, {"future", true}};
        const GenerationSettings s = ember::app::settings_from_json(json, defaults);
        QCOMPARE(s.temperature, 0.3);
        QCOMPARE(s.top_k, 5);
        QCOMPARE(s.max_tokens, defaults.max_tokens);
        QCOMPARE(ember::app::settings_from_json({}, defaults), defaults);
    }

    void values_are_clamped() {
        const QJsonObject json{{"temperature", -3}, {"topP", 7}, {"repeatPenalty", 0.2}, {"maxTokens", 1e9},
                               {"seed", -50}, {"topK", 1e300}, {"contextLength", 10}};
        const GenerationSettings s = ember::app::settings_from_json(json, {});
        QCOMPARE(s.temperature, 0.0);
        QCOMPARE(s.top_p, 1.0);
        QCOMPARE(s.repeat_penalty, 1.0);
        QCOMPARE(s.max_tokens, 32768);
        QCOMPARE(s.seed, qint64(-1));
        QCOMPARE(s.top_k, 1000);
        QCOMPARE(s.context_length, 256);
        QCOMPARE(ember::app::settings_from_json({{"contextLength", 1e12}}, {}).context_length, 131072);
    }

    void seed_minus_one_is_random() {
        GenerationSettings s;
        QCOMPARE(ember::app::sampling_params(s, 77).seed, uint64_t(77));
        s.seed = 5;
        QCOMPARE(ember::app::sampling_params(s, 77).seed, uint64_t(5));
        s.temperature = 0.0;
        s.top_k = 3;
        const ember::SamplingParams p = ember::app::sampling_params(s, 0);
        QCOMPARE(p.temperature, 0.0f);
        QCOMPARE(p.top_k, 3);
    }
};

QTEST_GUILESS_MAIN(TestGenerationSettings)
#include "tst_generation_settings.moc"
