#include "sampling/stages.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ember::sampling {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

bool better(const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

float max_logit(const CandidateArray& c) {
    if (c.sorted) {
        return c.data[0].logit;
    }
    float m = kNegInf;
    for (size_t i = 0; i < c.size; ++i) {
        m = std::max(m, c.data[i].logit);
    }
    return m;
}

}  // namespace

CandidateArray load_candidates(std::span<const float> logits, std::span<Candidate> out) {
    for (size_t i = 0; i < logits.size(); ++i) {
        const float l = logits[i];
        out[i] = {static_cast<int32_t>(i), std::isnan(l) ? kNegInf : l, 0.0f};
    }
    return {out.data(), logits.size(), false};
}

void apply_repeat_penalty(CandidateArray& c, std::span<const int32_t> tokens, float penalty) {
    for (const int32_t t : tokens) {
        float& l = c.data[static_cast<size_t>(t)].logit;
        l = l > 0.0f ? l / penalty : l * penalty;
    }
}

int32_t argmax(const CandidateArray& c) {
    const Candidate* best = &c.data[0];
    for (size_t i = 1; i < c.size; ++i) {
        if (better(c.data[i], *best)) {
            best = &c.data[i];
        }
    }
    return best->id;
}

void apply_top_k(CandidateArray& c, int32_t k) {
    if (k <= 0 || static_cast<size_t>(k) >= c.size) {
        return;
    }
    // partial_sort is a heap select: no allocation, O(n log k).
    std::partial_sort(c.data, c.data + k, c.data + c.size, better);
    c.size = static_cast<size_t>(k);
    c.sorted = true;
}

void apply_top_p(CandidateArray& c, float p) {
    if (p >= 1.0f) {
        return;
    }
    if (!c.sorted) {
        std::sort(c.data, c.data + c.size, better);  // introsort: no allocation
        c.sorted = true;
    }
    softmax(c);
    double cum = 0.0;
    for (size_t i = 0; i < c.size; ++i) {
        cum += c.data[i].p;
        if (cum >= p) {
            c.size = i + 1;
            return;
        }
    }
    // Rounding kept the total just under p: keep everything.
}

void apply_min_p(CandidateArray& c, float p) {
    if (p <= 0.0f) {
        return;
    }
    // prob_i >= p * prob_max  <=>  logit_i >= logit_max + log(p); no softmax needed. The
    // threshold never exceeds the max, so the best token always survives.
    const double max = max_logit(c);
    const double threshold = std::min(max + std::log(static_cast<double>(p)), max);
    if (c.sorted) {
        size_t keep = 1;
        while (keep < c.size && c.data[keep].logit >= threshold) {
            ++keep;
        }
        c.size = keep;
        return;
    }
    size_t out = 0;
    for (size_t i = 0; i < c.size; ++i) {
        if (c.data[i].logit >= threshold) {
            c.data[out++] = c.data[i];
        }
    }
    c.size = out;
}

void apply_temperature(CandidateArray& c, float t) {
    // Shifting by the max first leaves softmax unchanged but keeps a small t from pushing
    // large finite logits to +inf (which would make distinct logits tie).
    const float max = max_logit(c);
    if (!std::isfinite(max)) {
        return;  // softmax handles an +inf max and an all -inf array without a scale
    }
    for (size_t i = 0; i < c.size; ++i) {
        c.data[i].logit = (c.data[i].logit - max) / t;
    }
}

void softmax(CandidateArray& c) {
    const float max = max_logit(c);
    double sum = 0.0;
    for (size_t i = 0; i < c.size; ++i) {
        const float l = c.data[i].logit;
        float e;
        if (max == std::numeric_limits<float>::infinity()) {
            e = l == max ? 1.0f : 0.0f;
        } else if (max == kNegInf) {
            e = 1.0f;
        } else {
            e = std::exp(l - max);
        }
        c.data[i].p = e;
        sum += e;
    }
    // sum >= 1: the max term contributes exp(0) = 1 (or 1 in the special cases).
    for (size_t i = 0; i < c.size; ++i) {
        c.data[i].p = static_cast<float>(c.data[i].p / sum);
    }
}

int32_t draw(const CandidateArray& c, double u) {
    double total = 0.0;
    for (size_t i = 0; i < c.size; ++i) {
        total += c.data[i].p;
    }
    const double target = u * total;
    double cum = 0.0;
    const Candidate* last_positive = nullptr;
    for (size_t i = 0; i < c.size; ++i) {
        if (c.data[i].p > 0.0f) {
            cum += c.data[i].p;
            last_positive = &c.data[i];
            if (cum > target) {
                return c.data[i].id;
            }
        }
    }
    // Rounding left the cumulative sum at or under the target.
    return last_positive ? last_positive->id : c.data[0].id;
}

}  // namespace ember::sampling
