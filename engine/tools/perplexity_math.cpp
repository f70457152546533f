#include "tools/perplexity_math.h"

#include <algorithm>
#include <cmath>

namespace ember::tools {

RowSoftmax row_softmax(std::span<const float> logits) {
    RowSoftmax r;
    r.max_logit = logits[0];
    for (size_t i = 1; i < logits.size(); ++i)
        if (logits[i] > r.max_logit) {
            r.max_logit = logits[i];
            r.top = int32_t(i);
        }
    double sum_exp = 0.0;
    for (float v : logits) sum_exp += std::exp(v - r.max_logit);
    r.log_sum_exp = std::log(sum_exp);
    return r;
}

double token_nll(std::span<const float> logits, int32_t token) {
    return -row_softmax(logits).log_prob(logits[size_t(token)]);
}

double NllSums::ppl() const { return std::exp(nll / double(count)); }

double NllSums::ppl_error() const {
    if (count < 2) return 0.0;
    const double mean = nll / double(count);
    const double var = nll2 / double(count) - mean * mean;
    return std::sqrt(std::max(var, 0.0) / double(count - 1)) * ppl();
}

}  // namespace ember::tools
