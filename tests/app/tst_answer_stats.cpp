// An answer's statistics from the engine to the history: the engine's stop reasons map to the
// app's, the saved stop reasons are the words chats already hold, the line under an answer.
#include <QtTest>

#include "app/chat/answer_stats.h"

using ember::app::GenerationStats;
using Reason = GenerationStats::StopReason;

class TestAnswerStats : public QObject {
    Q_OBJECT

private slots:
    void stop_reasons_from_the_engine() {
        QCOMPARE(ember::app::stop_reason_of(ember::StopReason::EndOfGeneration, false), Reason::EndOfGeneration);
        QCOMPARE(ember::app::stop_reason_of(ember::StopReason::MaxTokens, false), Reason::TokenLimit);
        QCOMPARE(ember::app::stop_reason_of(ember::StopReason::ContextFull, false), Reason::ContextFull);
        QCOMPARE(ember::app::stop_reason_of(ember::StopReason::Cancelled, false), Reason::Cancelled);
        QCOMPARE(ember::app::stop_reason_of(ember::StopReason::CallbackStopped, false), Reason::Stopped);
        // Asked to stop, whatever the engine says it did.
        QCOMPARE(ember::app::stop_reason_of(ember::StopReason::Cancelled, true), Reason::Stopped);
        QCOMPARE(ember::app::stop_reason_of(ember::StopReason::EndOfGeneration, true), Reason::Stopped);
    }

    // Saved chats hold these words; changing one would make older answers read differently.
    void saved_stop_reasons_are_the_stored_words() {
        QCOMPARE(ember::app::stop_reason_text(Reason::EndOfGeneration), QStringLiteral("end of generation"));
        QCOMPARE(ember::app::stop_reason_text(Reason::TokenLimit), QStringLiteral("token limit"));
        QCOMPARE(ember::app::stop_reason_text(Reason::ContextFull), QStringLiteral("context full"));
        QCOMPARE(ember::app::stop_reason_text(Reason::Cancelled), QStringLiteral("cancelled"));
        QCOMPARE(ember::app::stop_reason_text(Reason::Stopped), QStringLiteral("stopped"));
    }

    void stored_and_shown() {
        GenerationStats s;
        s.prompt_tokens = 8;
        s.prompt_tokens_per_second = 90.04;
        s.generated_tokens = 12;
        s.tokens_per_second = 30.46;
        s.first_token_ms = 40.7;
        s.stop_reason = Reason::TokenLimit;
        const ember::store::GenerationStats stored = ember::app::stored_stats(s);
        QCOMPARE(stored.promptTokens, std::optional<qint64>(8));
        QCOMPARE(stored.genTokens, std::optional<qint64>(12));
        QCOMPARE(stored.ttftMs, std::optional<qint64>(40));
        QCOMPARE(stored.stopReason, QStringLiteral("token limit"));
        QCOMPARE(ember::app::stats_line(stored),
                 QStringLiteral("12 tokens · 30.5 tok/s · prompt 8 tokens at 90.0 tok/s · first token 40 ms · token limit"));

        const ember::store::GenerationStats failed = ember::app::failed_stats(QStringLiteral("no model is loaded"));
        QCOMPARE(failed.stopReason, QStringLiteral("error: no model is loaded"));
        QVERIFY(!failed.genTokens);
        QCOMPARE(ember::app::stats_line(failed), QStringLiteral("error: no model is loaded"));
    }
};

QTEST_GUILESS_MAIN(TestAnswerStats)
#include "tst_answer_stats.moc"
