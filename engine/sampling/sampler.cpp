#include "sampling/sampler.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "common/error.h"

namespace ember::sampling {

namespace {

std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

[[noreturn]] void bad_param(const char* field, double value, const char* expected) {
    fail(std::string("sampler: SamplerParams.") + field + " is " + number(value) + "; expected " +
         expected);
}

void validate(const SamplerParams& p, int32_t n_vocab) {
    if (n_vocab <= 0) {
        fail("sampler: n_vocab is " + std::to_string(n_vocab) + "; expected > 0");
    }
    if (!std::isfinite(p.temperature)) {
        bad_param("temperature", p.temperature, "a finite number (<= 0 for greedy)");
    }
    if (std::isnan(p.top_p)) {
        bad_param("top_p", p.top_p, "a number (>= 1 turns it off)");
    }
    if (std::isnan(p.min_p)) {
        bad_param("min_p", p.min_p, "a number (<= 0 turns it off)");
    }
    if (!std::isfinite(p.repeat_penalty) || p.repeat_penalty <= 0.0f) {
        bad_param("repeat_penalty", p.repeat_penalty, "a finite number > 0 (1 turns it off)");
    }
    if (p.repeat_last_n < 0) {
        bad_param("repeat_last_n", p.repeat_last_n, ">= 0 (0 turns the penalty off)");
    }
}

const SamplerParams& validated(const SamplerParams& p, int32_t n_vocab) {
    validate(p, n_vocab);
    return p;
}

}  // namespace

Sampler::Sampler(const SamplerParams& params, int32_t n_vocab)
    : params_(validated(params, n_vocab)),
      n_vocab_(n_vocab),
      candidates_(static_cast<size_t>(n_vocab)),
      history_(params.repeat_penalty != 1.0f ? params.repeat_last_n : 0, n_vocab),
      rng_(params.seed) {}

int32_t Sampler::sample(std::span<const float> logits) {
    if (logits.size() != candidates_.size()) {
        fail("sampler: logits has " + std::to_string(logits.size()) + " values; expected n_vocab " +
             std::to_string(n_vocab_));
    }
    CandidateArray c = load_candidates(logits, candidates_);
    apply_repeat_penalty(c, history_.distinct(), params_.repeat_penalty);
    if (params_.temperature <= 0.0f) {
        return argmax(c);
    }
    apply_top_k(c, params_.top_k);
    apply_top_p(c, params_.top_p);
    apply_min_p(c, params_.min_p);
    apply_temperature(c, params_.temperature);
    softmax(c);
    return draw(c, rng_.uniform());
}

void Sampler::accept(int32_t token) {
    if (token < 0 || token >= n_vocab_) {
        fail("sampler: accept() got token id " + std::to_string(token) + "; expected [0, " +
             std::to_string(n_vocab_) + ")");
    }
    history_.push(token);
}

void Sampler::reset() {
    history_.clear();
    rng_.seed_with(params_.seed);
}

}  // namespace ember::sampling
