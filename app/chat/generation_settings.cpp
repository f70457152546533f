#include "app/chat/generation_settings.h"

#include <algorithm>

namespace ember::app {
namespace {

double number(const QJsonObject& json, const char* key, double fallback) {
    const QJsonValue v = json.value(QLatin1String(key));
    return v.isDouble() ? v.toDouble() : fallback;
}

}  // namespace

GenerationSettings clamped(GenerationSettings s) {
    s.temperature = std::clamp(s.temperature, 0.0, 2.0);
    s.top_k = std::clamp(s.top_k, 0, 1000);
    s.top_p = std::clamp(s.top_p, 0.0, 1.0);
    s.min_p = std::clamp(s.min_p, 0.0, 1.0);
    s.repeat_penalty = std::clamp(s.repeat_penalty, 1.0, 2.0);
    s.max_tokens = std::clamp(s.max_tokens, 1, 32768);
    s.seed = std::clamp<qint64>(s.seed, -1, (qint64(1) << 53) - 1);  // exact in a JSON number
    s.context_length = std::clamp(s.context_length, 256, 131072);
    return s;
}

QJsonObject to_json(const GenerationSettings& s) {
    return {{"temperature", s.temperature}, {"topK", s.top_k},         {"topP", s.top_p},
            {"minP", s.min_p},              {"repeatPenalty", s.repeat_penalty}, {"maxTokens", s.max_tokens},
            {"seed", double(s.seed)},       {"contextLength", s.context_length}};
}

GenerationSettings settings_from_json(const QJsonObject& json, const GenerationSettings& defaults) {
    GenerationSettings s;
    s.temperature = number(json, "temperature", defaults.temperature);
    s.top_k = int(std::clamp(number(json, "topK", defaults.top_k), -1.0, 1e6));
    s.top_p = number(json, "topP", defaults.top_p);
    s.min_p = number(json, "minP", defaults.min_p);
    s.repeat_penalty = number(json, "repeatPenalty", defaults.repeat_penalty);
    s.max_tokens = int(std::clamp(number(json, "maxTokens", defaults.max_tokens), 0.0, 1e6));
    s.seed = qint64(std::clamp(number(json, "seed", double(defaults.seed)), -2.0, 1e16));
    s.context_length = int(std::clamp(number(json, "contextLength", defaults.context_length), 0.0, 1e7));
    return clamped(s);
}

SamplingParams sampling_params(const GenerationSettings& s, uint64_t random_seed) {
    SamplingParams p;
    p.temperature = float(s.temperature);
    p.top_k = s.top_k;
    p.top_p = float(s.top_p);
    p.min_p = float(s.min_p);
    p.repeat_penalty = float(s.repeat_penalty);
    p.seed = s.seed < 0 ? random_seed : uint64_t(s.seed);
    return p;
}

}  // namespace ember::app
