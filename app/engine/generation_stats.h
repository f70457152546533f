#pragma once
// What one answer took and why it ended: made by EngineWorker, passed on by EngineController and
// ChatController, readable in QML (a value type), saved with the answer.

#include <QMetaType>
#include <QtQml/qqmlregistration.h>

#include "ember/session.h"

namespace ember::app {

struct GenerationStats {
    Q_GADGET
    QML_VALUE_TYPE(generationStats)

    Q_PROPERTY(int promptTokens MEMBER prompt_tokens)
    Q_PROPERTY(double promptTokensPerSecond MEMBER prompt_tokens_per_second)
    Q_PROPERTY(int generatedTokens MEMBER generated_tokens)
    Q_PROPERTY(double tokensPerSecond MEMBER tokens_per_second)
    Q_PROPERTY(double firstTokenMs MEMBER first_token_ms)
    Q_PROPERTY(StopReason stopReason MEMBER stop_reason)
    Q_PROPERTY(double deviceShare MEMBER device_share)

public:
    // Stopped: the user stopped it; Cancelled: the session was cancelled some other way.
    enum class StopReason { EndOfGeneration, TokenLimit, ContextFull, Cancelled, Stopped };
    Q_ENUM(StopReason)

    int prompt_tokens = 0;
    double prompt_tokens_per_second = 0.0;
    int generated_tokens = 0;
    double tokens_per_second = 0.0;
    double first_token_ms = 0.0;
    StopReason stop_reason = StopReason::EndOfGeneration;
    // Of the active FFN neurons of every generated token, the share computed on the device.
    double device_share = 0.0;
};

// The engine's reason; `stopped_by_user` when the app asked the generation to stop.
GenerationStats::StopReason stop_reason_of(ember::StopReason reason, bool stopped_by_user);

}  // namespace ember::app

Q_DECLARE_METATYPE(ember::app::GenerationStats)
