// ember-quantize IN OUT TYPE: llama.cpp's `llama-quantize` without an importance matrix, for the
// file types whose quantizers Ember has (Q4_0 … Q8_0, Q4_K_S/M, Q5_K_S/M, Q6_K). Which tensor gets
// which type is upstream's recipe (tensor/quant_recipe.h), PowerInfer's predictor and ffn_down_t
// matrices included; vectors and norms stay as they are. All metadata is copied,
// general.file_type is set, and a PowerInfer file keeps its PWRI magic.
#include <cctype>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "gguf/ggml_type.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "tensor/dtype.h"
#include "tensor/quant_recipe.h"
#include "tensor/quantize.h"
#include "tensor/thread_pool.h"

namespace {

using namespace ember;

// Dequantizes each row of `t` to F32 and quantizes it to `target`, rows spread over the pool.
std::vector<uint8_t> quantize_tensor(const gguf::File& file, const gguf::TensorInfo& t, tensor::DType target,
                                     tensor::ThreadPool& pool) {
    const auto source = tensor::dtype_from_ggml(t.type);
    if (!source)
        fail(file.path() + ": tensor '" + t.name + "' has type " + gguf::ggml_type_name(t.type) +
             ", which ember-quantize cannot read");
    const int64_t n_cols = t.ne[0];
    const int64_t n_rows = t.nelements() / n_cols;
    const size_t in_row = tensor::row_bytes(*source, n_cols);
    const size_t out_row = tensor::row_bytes(target, n_cols);
    std::vector<uint8_t> out(out_row * size_t(n_rows));
    const int64_t rows_per_task = 64;
    std::vector<std::vector<float>> rows(size_t(pool.size()), std::vector<float>(size_t(n_cols)));
    pool.run((n_rows + rows_per_task - 1) / rows_per_task, [&](int64_t task, int thread) {
        std::vector<float>& row = rows[size_t(thread)];
        for (int64_t r = task * rows_per_task; r < std::min(n_rows, (task + 1) * rows_per_task); ++r) {
            tensor::dequantize_row(*source, t.data + size_t(r) * in_row, row.data(), n_cols);
            tensor::quantize_row(target, row.data(), out.data() + size_t(r) * out_row, n_cols);
        }
    });
    return out;
}

tensor::RecipeModel recipe_model(const gguf::File& file) {
    tensor::RecipeModel m;
    m.arch = file.get_string("general.architecture").value_or("");
    const auto count = [&](const std::string& key) { return int(file.get_uint(m.arch + "." + key).value_or(0)); };
    m.n_layer = count("block_count");
    m.n_head = count("attention.head_count");
    m.n_head_kv = count("attention.head_count_kv");
    m.n_expert = count("expert_count");
    return m;
}

void quantize_file(const std::string& in_path, const std::string& out_path, const tensor::QuantRecipe& recipe) {
    auto file = gguf::File::open(in_path);
    std::vector<tensor::RecipeTensor> listed;
    for (const auto& t : file->tensors())
        listed.push_back({t.name, t.ne, tensor::dtype_from_ggml(t.type).value_or(tensor::DType::F32)});
    // PowerInfer's predictors have rows of the predictor's rank: those too short for a block stay
    // as they are, as PowerInfer's own quantizer leaves them.
    const bool powerinfer = file->magic() == "PWRI";
    const std::vector<tensor::DType> types = tensor::recipe_types(recipe, recipe_model(*file), listed, powerinfer);

    gguf::Writer w;
    for (const auto& [key, value] : file->metadata()) w.set(key, value);
    w.set("general.file_type", gguf::Value::u32(recipe.file_type));
    w.set("general.quantization_version", gguf::Value::u32(2));

    tensor::ThreadPool pool(tensor::default_thread_count());
    uint64_t bytes_in = 0, bytes_out = 0;
    for (size_t i = 0; i < file->tensors().size(); ++i) {
        const gguf::TensorInfo& t = file->tensors()[i];
        bytes_in += t.nbytes;
        // A type Ember cannot read (an i-quant, say) is copied as it is.
        if (tensor::dtype_from_ggml(t.type) && uint32_t(types[i]) != t.type) {
            std::vector<uint8_t> q = quantize_tensor(*file, t, types[i], pool);
            bytes_out += q.size();
            w.add_tensor(t.name, t.ne, uint32_t(types[i]), std::move(q));
        } else {
            bytes_out += t.nbytes;
            w.add_tensor(t.name, t.ne, t.type, std::span<const uint8_t>(t.data, t.nbytes));
        }
    }
    w.write(out_path, file->magic());
    std::fprintf(stderr, "ember-quantize: %s -> %s (%s): %.2f MiB -> %.2f MiB\n", in_path.c_str(), out_path.c_str(),
                 recipe.name.c_str(), double(bytes_in) / (1 << 20), double(bytes_out) / (1 << 20));
}

}  // namespace

int main(int argc, char** argv) {
    const std::string types = tensor::quant_recipe_names();
    if (argc != 4) {
        std::fprintf(stderr, "usage: ember-quantize IN.gguf OUT.gguf TYPE\n  TYPE: %s\n", types.c_str());
        return 2;
    }
    std::string name = argv[3];
    for (char& c : name) c = char(std::toupper(static_cast<unsigned char>(c)));
    const std::optional<tensor::QuantRecipe> recipe = tensor::find_quant_recipe(name);
    if (!recipe) {
        std::fprintf(stderr, "ember-quantize: type '%s' is not supported (%s)\n", argv[3], types.c_str());
        return 2;
    }
    try {
        quantize_file(argv[1], argv[2], *recipe);
    } catch (const EngineError& e) {
        std::fprintf(stderr, "ember-quantize: %s\n", e.what());
        return 1;
    }
    return 0;
}
