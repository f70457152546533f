#pragma once
// ember-perplexity's results as text (llama.cpp's last line, "Final estimate: PPL = X +/- Y",
// last) or as one JSON object for scripts.

#include <cstdint>
#include <optional>
#include <string>

#include "tools/kl_divergence.h"
#include "tools/perplexity_math.h"

namespace ember::tools {

struct Report {
    std::string model;
    std::string text;  // empty when the tokens came from the base file
    int32_t n_ctx = 0;
    int32_t n_chunk = 0;
    int64_t n_tokens = 0;  // of the text; without -f, those the base file holds
    NllSums sums;
    std::optional<KlSums> kl;  // with --kl-divergence
    std::string kl_base;
};

std::string report_text(const Report& r);
std::string report_json(const Report& r);

}  // namespace ember::tools
