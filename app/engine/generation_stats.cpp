#include "app/engine/generation_stats.h"

namespace ember::app {

GenerationStats::StopReason stop_reason_of(ember::StopReason reason, bool stopped_by_user) {
    using R = GenerationStats::StopReason;
    if (stopped_by_user) return R::Stopped;
    switch (reason) {
        case ember::StopReason::EndOfGeneration: return R::EndOfGeneration;
        case ember::StopReason::MaxTokens: return R::TokenLimit;
        case ember::StopReason::ContextFull: return R::ContextFull;
        case ember::StopReason::Cancelled: return R::Cancelled;
        case ember::StopReason::CallbackStopped: return R::Stopped;
    }
    return R::Stopped;
}

}  // namespace ember::app
