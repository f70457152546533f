#pragma once
// The arithmetic of llama.cpp's perplexity, so Ember's figures compare with its and PowerInfer's
// to the printed digits: the negative log-likelihood of one token from a row of logits, and the
// running sums that give the perplexity and its uncertainty.

#include <cstdint>
#include <span>

namespace ember::tools {

// Index of the largest logit (the first one on a tie) and the row's log-sum-exp, computed as
// llama.cpp does: exp of each logit less the largest in float, summed in double.
struct RowSoftmax {
    int32_t top = 0;
    float max_logit = 0.0f;
    double log_sum_exp = 0.0;  // log Σ exp(logit - max_logit)

    // log p(token) = logit - max_logit - log_sum_exp; the subtraction of the two floats is
    // rounded to float first, as llama.cpp's is.
    double log_prob(float logit) const { return double(logit - max_logit) - log_sum_exp; }
};

// logits: [n_vocab], not empty.
RowSoftmax row_softmax(std::span<const float> logits);

// −log p(token | logits).
double token_nll(std::span<const float> logits, int32_t token);

// Sums over every scored token. ppl = exp(E[nll]); its uncertainty is llama.cpp's first-order
// one, ppl · sqrt((E[nll²] − E[nll]²) / (count − 1)).
struct NllSums {
    double nll = 0.0;
    double nll2 = 0.0;
    int64_t count = 0;

    void add(double v) {
        nll += v;
        nll2 += v * v;
        ++count;
    }
    double ppl() const;
    double ppl_error() const;  // 0 with fewer than two tokens
};

}  // namespace ember::tools
