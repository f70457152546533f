#include "tensor/quant_recipe.h"

#include <array>
#include <cstdio>

namespace ember::tensor {
namespace {

using Mix = QuantRecipe::Mix;

const std::array<QuantRecipe, 9> kRecipes = {{
    {"Q4_0", DType::Q4_0, 2, Mix::Pure},
    {"Q4_1", DType::Q4_1, 3, Mix::Pure},
    {"Q8_0", DType::Q8_0, 7, Mix::Pure},
    {"Q5_0", DType::Q5_0, 8, Mix::Pure},
    {"Q5_1", DType::Q5_1, 9, Mix::Pure},
    {"Q4_K_S", DType::Q4_K, 14, Mix::Small},
    {"Q4_K_M", DType::Q4_K, 15, Mix::Medium},
    {"Q5_K_S", DType::Q5_K, 16, Mix::Small},
    {"Q5_K_M", DType::Q5_K, 17, Mix::Medium},
}};
const QuantRecipe kQ6K = {"Q6_K", DType::Q6_K, 18, Mix::Pure};

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// ggml's count of dimensions: trailing sizes of 1 do not count.
size_t dimensions(const std::vector<int64_t>& ne) {
    size_t n = ne.size();
    while (n > 1 && ne[n - 1] == 1) --n;
    return n;
}

// Matrices only, and not those llama.cpp keeps as they are: norms, MoE routers, the small
// per-layer tensors of Gemma 3n, position and token-type tables, convolution kernels.
bool quantizable(const RecipeTensor& t) {
    const std::string_view name = t.name;
    if (dimensions(t.ne) < 2 || !name.ends_with("weight")) return false;
    for (std::string_view keep : {"_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
                                  "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "attn_rel_b.weight"})
        if (contains(name, keep)) return false;
    return name != "position_embd.weight" && name != "token_types.weight";
}

enum class Role { Output, TokenEmbd, AttnQkv, AttnKvB, AttnV, AttnK, AttnQ, AttnOutput, FfnUp, FfnGate, FfnDown, Other };

// By substring and in this order, as llama.cpp categorizes (ffn_up_exps is FfnUp, ffn_down_t
// FfnDown). A fused attn_qkv follows attn_v's rules.
Role role_of(std::string_view name) {
    if (name == "output.weight") return Role::Output;
    if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return Role::TokenEmbd;
    if (contains(name, "attn_qkv.weight")) return Role::AttnQkv;
    if (contains(name, "attn_kv_b.weight")) return Role::AttnKvB;
    if (contains(name, "attn_v.weight")) return Role::AttnV;
    if (contains(name, "attn_k.weight")) return Role::AttnK;
    if (contains(name, "attn_q.weight")) return Role::AttnQ;
    if (contains(name, "attn_output.weight")) return Role::AttnOutput;
    if (contains(name, "ffn_up")) return Role::FfnUp;
    if (contains(name, "ffn_gate")) return Role::FfnGate;
    if (contains(name, "ffn_down")) return Role::FfnDown;
    return Role::Other;
}

bool attn_v_like(Role r) { return r == Role::AttnV || r == Role::AttnQkv || r == Role::AttnKvB; }

// The first and last eighth of the layers and every third layer between.
bool more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// "blk.12.ffn_down_exps.weight" -> 12; -1 without a layer.
int layer_of(const std::string& name) {
    int layer = -1;
    return std::sscanf(name.c_str(), "blk.%d.", &layer) == 1 ? layer : -1;
}

DType mixed_type(const QuantRecipe& r, const RecipeModel& m, const RecipeTensor& t, const RecipePosition& p) {
    const Role role = role_of(t.name);
    const bool falcon = m.arch == "falcon";
    const bool medium = r.mix == Mix::Medium, small = r.mix == Mix::Small;
    if (role == Role::Output || (role == Role::TokenEmbd && p.tied_embeddings)) {
        if (falcon || t.ne[0] % block_size(r.base) != 0) return DType::Q8_0;
        return r.base == DType::Q8_0 ? DType::Q8_0 : DType::Q6_K;
    }
    if (attn_v_like(role)) {
        DType type = r.base;
        if (medium && more_bits(p.attn_v_index, p.attn_v_count)) type = DType::Q6_K;
        else if (small && r.base == DType::Q4_K && p.attn_v_index < 4) type = DType::Q5_K;
        // Llama 2/3 70B and Qwen 2 72B: eight heads share each V row, so V is small enough for more bits.
        const bool is_70b = m.n_layer == 80 && ((m.arch == "llama" && m.n_head != m.n_head_kv) || m.arch == "qwen2");
        if (is_70b && type == DType::Q4_K) type = DType::Q5_K;
        if (m.n_expert == 8) type = DType::Q8_0;
        return type;
    }
    if (role == Role::AttnK && m.n_expert == 8) return DType::Q8_0;
    if (role == Role::FfnDown) {
        const int i = m.n_expert > 1 ? layer_of(t.name) : p.ffn_down_index;
        const int n = m.n_layer;
        if (medium && r.base == DType::Q4_K) {
            if (!falcon) return more_bits(i, n) ? DType::Q6_K : r.base;
            return i < n / 16 ? DType::Q6_K : more_bits(i, n) ? DType::Q5_K : DType::Q4_K;
        }
        if (medium && r.base == DType::Q5_K) return more_bits(i, n) ? DType::Q6_K : r.base;
        if (small && r.base == DType::Q4_K && !falcon && i < n / 8) return DType::Q5_K;
        return r.base;
    }
    if (role == Role::AttnOutput && !falcon && m.n_expert == 8 && r.base == DType::Q4_K && r.mix != Mix::Pure)
        return DType::Q5_K;
    return r.base;
}

// A 256-block type on rows it does not divide: the 32-block type upstream falls back to.
DType fallback(DType t, int64_t row) {
    if (row % block_size(t) == 0) return t;
    DType smaller = t;
    switch (t) {
        case DType::Q2_K: case DType::Q3_K: smaller = DType::Q4_0; break;
        case DType::IQ4_XS: smaller = DType::IQ4_NL; break;
        case DType::Q4_K: smaller = DType::Q5_0; break;
        case DType::Q5_K: smaller = DType::Q5_1; break;
        case DType::Q6_K: smaller = DType::Q8_0; break;
        default: break;
    }
    return row % block_size(smaller) == 0 ? smaller : DType::F16;
}

}  // namespace

std::optional<QuantRecipe> find_quant_recipe(std::string_view name) {
    if (name == kQ6K.name) return kQ6K;
    // llama-quantize's short names for the _M mixes.
    if (name == "Q4_K") return find_quant_recipe("Q4_K_M");
    if (name == "Q5_K") return find_quant_recipe("Q5_K_M");
    for (const QuantRecipe& r : kRecipes)
        if (r.name == name) return r;
    return std::nullopt;
}

std::string quant_recipe_names() {
    std::string names;
    for (const QuantRecipe& r : kRecipes) names += r.name + ", ";
    return names + kQ6K.name;
}

DType recipe_type(const QuantRecipe& recipe, const RecipeModel& model, const RecipeTensor& tensor,
                  const RecipePosition& position, bool keep_unfit) {
    if (!quantizable(tensor)) return tensor.type;
    const DType chosen = mixed_type(recipe, model, tensor, position);
    if (tensor.ne[0] % block_size(chosen) == 0) return chosen;
    return keep_unfit ? tensor.type : fallback(chosen, tensor.ne[0]);
}

std::vector<DType> recipe_types(const QuantRecipe& recipe, const RecipeModel& model,
                                const std::vector<RecipeTensor>& tensors, bool keep_unfit) {
    RecipePosition position;
    position.tied_embeddings = true;
    for (const RecipeTensor& t : tensors) {
        if (t.name == "output.weight") position.tied_embeddings = false;
        if (attn_v_like(role_of(t.name))) ++position.attn_v_count;
    }
    std::vector<DType> types;
    for (const RecipeTensor& t : tensors) {
        types.push_back(recipe_type(recipe, model, t, position, keep_unfit));
        // Upstream counts only the matrices it quantizes.
        if (!quantizable(t)) continue;
        const Role role = role_of(t.name);
        if (attn_v_like(role)) ++position.attn_v_index;
        if (role == Role::FfnDown) ++position.ffn_down_index;
    }
    return types;
}

}  // namespace ember::tensor
