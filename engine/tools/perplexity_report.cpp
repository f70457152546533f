#include "tools/perplexity_report.h"

#include <cstdarg>
#include <cstdio>

namespace ember::tools {

namespace {

std::string format(const char* fmt, ...) {
    va_list args, copy;
    va_start(args, fmt);
    va_copy(copy, args);
    std::string s(size_t(std::vsnprintf(nullptr, 0, fmt, copy)), '\0');
    va_end(copy);
    std::vsnprintf(s.data(), s.size() + 1, fmt, args);
    va_end(args);
    return s;
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') out += {'\\', char(c)};
        else if (c < 0x20) out += format("\\u%04x", c);
        else out += char(c);
    }
    return out + "\"";
}

}  // namespace

std::string report_text(const Report& r) {
    std::string out;
    if (r.kl) {
        const KlSums& k = *r.kl;
        out += format("KL divergence against %s, %lld positions:\n", r.kl_base.c_str(), (long long)k.count);
        out += format("Mean KLD: %.6f +/- %.6f\n", k.mean_kld(), k.kld_error());
        out += format("Same top token: %.3f +/- %.3f %%\n", 100.0 * k.same_top_share(), 100.0 * k.same_top_error());
        out += format("PPL(base): %.4f; PPL - PPL(base): %+.4f +/- %.4f\n", k.ppl_base(), k.delta_ppl(),
                      k.delta_ppl_error());
    }
    // llama.cpp's exact last line.
    out += format("Final estimate: PPL = %.4f +/- %.5f\n", r.sums.ppl(), r.sums.ppl_error());
    return out;
}

std::string report_json(const Report& r) {
    std::string out = "{";
    out += "\"model\": " + json_string(r.model);
    out += ", \"text\": " + (r.text.empty() ? std::string("null") : json_string(r.text));
    out += format(", \"n_ctx\": %d, \"chunks\": %d, \"tokens\": %lld, \"scored\": %lld", r.n_ctx, r.n_chunk,
                  (long long)r.n_tokens, (long long)r.sums.count);
    out += format(", \"ppl\": %.6f, \"ppl_error\": %.6f", r.sums.ppl(), r.sums.ppl_error());
    if (r.kl) {
        const KlSums& k = *r.kl;
        out += ", \"kl_base\": " + json_string(r.kl_base);
        out += format(", \"mean_kld\": %.8f, \"mean_kld_error\": %.8f", k.mean_kld(), k.kld_error());
        out += format(", \"same_top_percent\": %.4f, \"same_top_percent_error\": %.4f", 100.0 * k.same_top_share(),
                      100.0 * k.same_top_error());
        out += format(", \"ppl_base\": %.6f, \"delta_ppl\": %.6f, \"delta_ppl_error\": %.6f", k.ppl_base(),
                      k.delta_ppl(), k.delta_ppl_error());
    }
    return out + "}\n";
}

}  // namespace ember::tools
