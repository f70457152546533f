#include "model/architecture.h"

#include <array>
#include <string_view>

#include "common/error.h"

namespace ember::model {
namespace {

struct Entry {
    std::string_view name;
    std::unique_ptr<Architecture> (*load)(const gguf::File&, const ModelParams&);
};

constexpr std::array<Entry, 3> kArchitectures{{
    {"llama", load_llama},
    {"bamboo", load_bamboo},
    {"falcon", load_falcon},
}};

}  // namespace

void Architecture::set_totals(const TensorBinder& bind, const tensor::WeightView& token_embd,
                              const tensor::WeightView& output, uint64_t ffn_bytes, uint64_t predictor_bytes,
                              int32_t ffn_matrices, tensor::DType weight_type) {
    totals_.weight_bytes = bind.bytes_bound();
    totals_.n_params = bind.params_bound();
    totals_.bytes_per_token =
        totals_.weight_bytes -
        (output.data == token_embd.data ? 0 : uint64_t(token_embd.row_bytes) * uint64_t(token_embd.n_rows - 1));
    totals_.ffn_bytes = ffn_bytes;
    totals_.predictor_bytes = predictor_bytes;
    totals_.ffn_matrices = ffn_matrices;
    totals_.weight_type = tensor::dtype_name(tensor::stored_type(weight_type));
}

std::unique_ptr<Architecture> load_architecture(const gguf::File& file, const ModelParams& params) {
    auto arch = file.get_string("general.architecture");
    if (!arch) fail(file.path() + ": missing metadata key 'general.architecture'");
    for (const auto& e : kArchitectures)
        if (e.name == *arch) return e.load(file, params);
    std::string known;
    for (const auto& e : kArchitectures) known += (known.empty() ? "" : ", ") + std::string(e.name);
    fail(file.path() + ": general.architecture '" + *arch + "' is not supported (supported: " + known + ")");
}

}  // namespace ember::model
