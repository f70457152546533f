#pragma once
// A chat's sampling settings, stored with the chat (ChatOptions::settings, a JSON object) so a
// reopened chat continues the way it was set up.

#include <QJsonObject>

#include <cstdint>

#include "ember/sampling_params.h"

namespace ember::app {

struct GenerationSettings {
    double temperature = 0.7;
    int top_k = 40;
    double top_p = 0.95;
    double min_p = 0.05;
    double repeat_penalty = 1.1;
    int max_tokens = 256;
    qint64 seed = -1;  // -1: a new random seed for every answer
    int context_length = 2048;  // tokens the session holds; the KV cache grows with it

    friend bool operator==(const GenerationSettings&, const GenerationSettings&) = default;
};

// Every value within the range the settings panel offers.
GenerationSettings clamped(GenerationSettings s);

QJsonObject to_json(const GenerationSettings& s);
// Missing or ill-typed keys keep `defaults`' values; out-of-range values are clamped.
GenerationSettings settings_from_json(const QJsonObject& json, const GenerationSettings& defaults);

// The engine's sampling parameters; `random_seed` is used when s.seed is -1.
SamplingParams sampling_params(const GenerationSettings& s, uint64_t random_seed);

}  // namespace ember::app
