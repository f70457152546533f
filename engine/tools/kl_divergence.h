#pragma once
// Comparing a run with a base run of the same text (a sparse or quantized model with its dense
// self): what the base keeps of each scored position, and the sums that give the mean KL
// divergence KL(base ‖ run), the share of positions whose most likely token agrees, and the
// change in perplexity, each with its uncertainty.

#include <cstdint>
#include <span>
#include <vector>

namespace ember::tools {

// Log-probabilities more than this far below the most likely token's are not kept: each such
// token weighs less than e^-20 (2e-9) of the top one's probability.
inline constexpr float kBaseLogProbWindow = 20.0f;

// One scored position of the base run. The log-probabilities are quantized to 16 bits over the
// window below the top one: log p(i) ≈ min_log_prob + scale · q[i], off by at most scale / 2
// (≈ 1.5e-4); q[i] = 0 marks a token below the window. The next token's nll and the most likely
// token are kept exactly, so a run against its own base gives Δppl = 0 and 100 % agreement.
struct BaseRow {
    double nll = 0.0;         // −log p(next token), as token_nll computes it
    int32_t top = 0;          // most likely token (the first one on a tie)
    float scale = 0.0f;
    float min_log_prob = 0.0f;
    std::vector<uint16_t> q;  // [n_vocab]
};

BaseRow make_base_row(std::span<const float> logits, int32_t next_token);

struct KlSums {
    double kld = 0.0, kld2 = 0.0;
    double nll = 0.0, nll2 = 0.0;            // this run
    double nll_base = 0.0, nll_base2 = 0.0;  // the base
    double nll_cross = 0.0;                  // Σ nll · nll_base, for the covariance in Δppl's uncertainty
    int64_t same_top = 0;
    int64_t count = 0;

    double mean_kld() const;
    double kld_error() const;
    double same_top_share() const;        // 0..1
    double same_top_error() const;
    double ppl() const;
    double ppl_base() const;
    double delta_ppl() const;             // ppl − ppl_base
    double delta_ppl_error() const;       // first order, with the covariance of the two runs' nll
};

// Adds one position: the base's row and this run's logits for the same position.
void add_kl_position(const BaseRow& base, std::span<const float> logits, int32_t next_token, KlSums& sums);

}  // namespace ember::tools
