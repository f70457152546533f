#pragma once
// Which type each tensor of a model gets when it is quantized to a named file type ("Q4_K_M"):
// llama.cpp's `llama-quantize` rules without an importance matrix, so a file Ember writes has
// the types (and, with tensor/quantize.h, the bytes) of the one upstream writes.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/dtype.h"

namespace ember::tensor {

struct QuantRecipe {
    std::string name;          // "Q4_K_M"
    DType base;                // the type of most matrices
    uint32_t file_type;        // general.file_type (llama.cpp's llama_ftype)
    enum class Mix { Pure, Small, Medium } mix;  // none, _S or _M: which matrices get more bits
};

// By llama-quantize's names, Q4_K and Q5_K standing for Q4_K_M and Q5_K_M as there.
std::optional<QuantRecipe> find_quant_recipe(std::string_view name);
// "Q4_0, Q4_1, …": every name find_quant_recipe knows.
std::string quant_recipe_names();

// What the rules read of the model besides a tensor's name.
struct RecipeModel {
    std::string arch;
    int n_layer = 0;
    int n_head = 0, n_head_kv = 0;
    int n_expert = 0;
};

struct RecipeTensor {
    std::string name;
    std::vector<int64_t> ne;
    DType type;  // as stored in the source file
};

// Where a tensor sits among the model's tensors, for the rules that give some layers more bits.
struct RecipePosition {
    int attn_v_index = 0, attn_v_count = 0;  // among the attn_v / attn_qkv / attn_kv_b matrices
    int ffn_down_index = 0;                  // among the ffn_down matrices (dense models)
    bool tied_embeddings = false;            // no output.weight: token_embd is the LM head too
};

// The type `tensor` gets: the source's own for tensors that stay as they are (vectors, norms,
// routers), otherwise the recipe's choice. A row length that the chosen type's block does not
// divide falls back as upstream falls back (Q4_K to Q5_0, …, then F16), or, with keep_unfit,
// keeps the source's type (PowerInfer files: the predictors' short rows).
DType recipe_type(const QuantRecipe& recipe, const RecipeModel& model, const RecipeTensor& tensor,
                  const RecipePosition& position, bool keep_unfit);

// recipe_type for every tensor of a file, in its order.
std::vector<DType> recipe_types(const QuantRecipe& recipe, const RecipeModel& model,
                                const std::vector<RecipeTensor>& tensors, bool keep_unfit);

}  // namespace ember::tensor
