#include "app/chat/answer_stats.h"

#include <QCoreApplication>

namespace ember::app {

QString stop_reason_text(GenerationStats::StopReason reason) {
    using R = GenerationStats::StopReason;
    switch (reason) {
        case R::EndOfGeneration: return QStringLiteral("end of generation");
        case R::TokenLimit: return QStringLiteral("token limit");
        case R::ContextFull: return QStringLiteral("context full");
        case R::Cancelled: return QStringLiteral("cancelled");
        case R::Stopped: return QStringLiteral("stopped");
    }
    return QStringLiteral("stopped");
}

store::GenerationStats stored_stats(const GenerationStats& s) {
    store::GenerationStats st;
    st.ttftMs = qint64(s.first_token_ms);
    st.promptTokens = s.prompt_tokens;
    st.promptTps = s.prompt_tokens_per_second;
    st.genTokens = s.generated_tokens;
    st.genTps = s.tokens_per_second;
    st.stopReason = stop_reason_text(s.stop_reason);
    return st;
}

store::GenerationStats failed_stats(const QString& error) {
    store::GenerationStats st;
    st.stopReason = QStringLiteral("error: ") + error;
    return st;
}

QString stats_line(const store::GenerationStats& s) {
    if (!s.genTokens) return s.stopReason;
    QString line = QCoreApplication::translate("AnswerStats", "%1 tokens · %2 tok/s")
                       .arg(*s.genTokens)
                       .arg(s.genTps.value_or(0.0), 0, 'f', 1);
    if (s.promptTokens && s.promptTps)
        line += QCoreApplication::translate("AnswerStats", " · prompt %1 tokens at %2 tok/s")
                    .arg(*s.promptTokens)
                    .arg(*s.promptTps, 0, 'f', 1);
    return line + QCoreApplication::translate("AnswerStats", " · first token %1 ms · %2")
                      .arg(s.ttftMs.value_or(0))
                      .arg(s.stopReason);
}

}  // namespace ember::app
