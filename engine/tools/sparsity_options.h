#pragma once
// --activation-sparsity, --sparsity-allocation and --sparsity-file, shared by ember-cli, ember-bench and
// ember-perplexity: a dense model made sparse by its calibration (ember-calibrate).

#include <optional>
#include <string>

#include "ember/model.h"
#include "sparse/sparsity_file.h"
#include "tools/arg_parse.h"

namespace ember::tools {

inline constexpr const char* kSparsityUsage =
    "  --activation-sparsity S  dense llama-family models: skip the share S (0 to 0.95) of FFN neurons\n"
    "                           whose |act(gate)| is smallest, by thresholds from ember-calibrate (default 0: off)\n"
    "  --sparsity-allocation uniform|greedy|measured\n"
    "                           S in every layer, or S on average, more where the skipped neurons\n"
    "                           carry less of the layer's |act(gate)| energy, or where the calibration\n"
    "                           measured the output moves least (default: the calibration's)\n"
    "  --sparsity-file PATH     that calibration (default: MODEL without .gguf + .sparsity.gguf)\n"
    "  --sparse-ffn-input       with --activation-sparsity: skip the same share of each FFN's smallest\n"
    "                           inputs too, reading only the kept inputs' gate weights\n"
    "  --sparse-attn-input      with --activation-sparsity: the same for the inputs of attention's\n"
    "                           Q, K, V and output products (attention then stays on the CPU)\n";

// The value of --sparsity-allocation (`flag`), which ember-calibrate takes too.
inline SparsityAllocation parse_allocation(const std::string& flag, const std::string& value) {
    const std::optional<SparsityAllocation> allocation = sparse::parse_sparsity_allocation(value);
    if (!allocation) throw UsageError(flag + ": '" + value + "' is not uniform, greedy or measured");
    return *allocation;
}

struct SparsityArgs {
    float level = 0.0f;
    std::optional<SparsityAllocation> allocation;  // unset: the calibration's
    std::string file;
    bool ffn_input = false;
    bool attn_input = false;

    // Consumes argv[i] (and its value) when it is one of these flags.
    bool parse(const std::string& a, int argc, char** argv, int& i) {
        if (a == "--activation-sparsity") {
            level = parse_float(a, next_value(argc, argv, i));
            if (level < 0.0f || level > 0.95f) throw UsageError(a + ": " + std::to_string(level) + " is outside 0 to 0.95");
            return true;
        }
        if (a == "--sparsity-allocation") {
            allocation = parse_allocation(a, next_value(argc, argv, i));
            return true;
        }
        if (a == "--sparse-ffn-input") {
            ffn_input = true;
            return true;
        }
        if (a == "--sparse-attn-input") {
            attn_input = true;
            return true;
        }
        if (a == "--sparsity-file") {
            file = next_value(argc, argv, i);
            return true;
        }
        return false;
    }
    void apply(ModelParams& mp) const {
        mp.activation_sparsity = level;
        mp.sparsity_allocation = allocation;
        mp.sparsity_file = file;
        mp.sparse_ffn_input = ffn_input;
        mp.sparse_attn_input = attn_input;
    }
};

}  // namespace ember::tools
