#include "tools/kl_divergence.h"

#include <algorithm>
#include <cmath>

#include "tools/perplexity_math.h"

namespace ember::tools {

namespace {

// sqrt(var / (n − 1)) for sums of x and x² over n values.
double mean_error(double sum, double sum2, int64_t n) {
    if (n < 2) return 0.0;
    const double mean = sum / double(n);
    return std::sqrt(std::max(sum2 / double(n) - mean * mean, 0.0) / double(n - 1));
}

}  // namespace

BaseRow make_base_row(std::span<const float> logits, int32_t next_token) {
    const RowSoftmax s = row_softmax(logits);
    BaseRow row;
    row.top = s.top;
    row.nll = -s.log_prob(logits[size_t(next_token)]);
    float min_logit = s.max_logit;
    for (float v : logits) min_logit = std::min(min_logit, v);
    min_logit = std::max(min_logit, s.max_logit - kBaseLogProbWindow);
    row.min_log_prob = float(s.log_prob(min_logit));
    row.scale = (s.max_logit - min_logit) / 65535.0f;
    row.q.assign(logits.size(), 0);
    if (row.scale > 0.0f)
        for (size_t i = 0; i < logits.size(); ++i)
            if (logits[i] > min_logit)
                row.q[i] = uint16_t(std::lround(std::min((logits[i] - min_logit) / row.scale, 65535.0f)));
    return row;
}

void add_kl_position(const BaseRow& base, std::span<const float> logits, int32_t next_token, KlSums& sums) {
    const RowSoftmax s = row_softmax(logits);
    // KL(base ‖ run) = Σ p_base(i) · (log p_base(i) − log p_run(i)) over the tokens the base kept.
    double kld = 0.0;
    for (size_t i = 0; i < logits.size(); ++i) {
        if (base.q[i] == 0 && base.scale > 0.0f) continue;
        const double log_p_base = double(base.min_log_prob) + double(base.scale) * base.q[i];
        kld += std::exp(log_p_base) * (log_p_base - s.log_prob(logits[i]));
    }
    const double nll = -s.log_prob(logits[size_t(next_token)]);
    sums.kld += kld;
    sums.kld2 += kld * kld;
    sums.nll += nll;
    sums.nll2 += nll * nll;
    sums.nll_base += base.nll;
    sums.nll_base2 += base.nll * base.nll;
    sums.nll_cross += nll * base.nll;
    sums.same_top += s.top == base.top;
    ++sums.count;
}

double KlSums::mean_kld() const { return kld / double(count); }
double KlSums::kld_error() const { return mean_error(kld, kld2, count); }
double KlSums::same_top_share() const { return double(same_top) / double(count); }

double KlSums::same_top_error() const {
    if (count < 2) return 0.0;
    const double p = same_top_share();
    return std::sqrt(p * (1.0 - p) / double(count - 1));
}

double KlSums::ppl() const { return std::exp(nll / double(count)); }
double KlSums::ppl_base() const { return std::exp(nll_base / double(count)); }
double KlSums::delta_ppl() const { return ppl() - ppl_base(); }

double KlSums::delta_ppl_error() const {
    if (count < 2) return 0.0;
    const double n = double(count);
    const double m = nll / n, mb = nll_base / n;
    const double var = nll2 / n - m * m, var_b = nll_base2 / n - mb * mb, cov = nll_cross / n - m * mb;
    const double p = ppl(), pb = ppl_base();
    // Δ = exp(m) − exp(mb): the gradient is (p, −pb).
    return std::sqrt(std::max(p * p * var + pb * pb * var_b - 2.0 * p * pb * cov, 0.0) / (n - 1.0));
}

}  // namespace ember::tools
