#include "tools/hf_vocab.h"

#include <fstream>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "tokenizer/vocab.h"

namespace ember::tools {
namespace {

using nlohmann::json;

json read_json(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path + ": cannot open");
    try {
        return json::parse(in);
    } catch (const json::exception& e) {
        fail(path + ": not JSON: " + e.what());
    }
}

// A special token in tokenizer_config.json: a string, an {"content": ...} object, or null.
std::string token_text(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
    return {};
}

// Whether the normalizer puts "▁" before the text (Llama 2's) or not (Gemma's).
bool prepends_space(const json& normalizer) {
    if (!normalizer.is_object()) return false;
    if (normalizer.value("type", "") == "Prepend") return true;
    for (const json& n : normalizer.value("normalizers", json::array()))
        if (prepends_space(n)) return true;
    return false;
}

}  // namespace

int64_t write_hf_vocab(gguf::Writer& w, const std::string& dir, const std::string& pre) {
    const std::string tokenizer_path = dir + "/tokenizer.json";
    const json tj = read_json(tokenizer_path);
    const json config = read_json(dir + "/tokenizer_config.json");
    if (!tj.contains("model") || tj["model"].value("type", "") != "BPE" || !tj["model"].contains("vocab") ||
        !tj["model"].contains("merges"))
        fail(tokenizer_path + ": model is not a BPE with vocab and merges");
    const bool spm = tj["model"].value("byte_fallback", false);
    const std::string unk = tj["model"].value("unk_token", json()).is_string() ? tj["model"]["unk_token"].get<std::string>() : "";

    std::map<int64_t, std::pair<std::string, int>> by_id;  // id -> piece, GGUF token type
    constexpr int kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kByte = 6;
    for (const auto& [piece, id] : tj["model"]["vocab"].items())
        by_id[id.get<int64_t>()] = {piece, spm && tokenizer::is_byte_piece(piece) ? kByte : kNormal};
    for (const json& t : tj.value("added_tokens", json::array()))
        by_id[t.at("id").get<int64_t>()] = {t.at("content").get<std::string>(), t.value("special", false) ? kControl : kUserDefined};
    if (by_id.empty() || by_id.begin()->first != 0) fail(tokenizer_path + ": token ids do not start at 0");
    if (spm)
        for (auto& [id, entry] : by_id)
            if (entry.first == unk) entry.second = kUnknown;
    const int64_t n_vocab = by_id.rbegin()->first + 1;

    gguf::Array tokens{gguf::ValueType::String, {}, {}, {}};
    gguf::Array types{gguf::ValueType::I32, {}, {}, {}};
    std::map<std::string, int64_t> ids;
    for (int64_t i = 0; i < n_vocab; ++i) {
        const auto it = by_id.find(i);
        // A gap gets a padding token, as llama.cpp's converter writes one.
        const std::string piece = it != by_id.end() ? it->second.first : "[PAD" + std::to_string(i) + "]";
        tokens.strings.push_back(piece);
        types.ints.push_back(it != by_id.end() ? it->second.second : kUserDefined);
        ids[piece] = i;
    }
    std::vector<std::string> merge_list;
    for (const json& m : tj["model"]["merges"]) {
        if (m.is_string()) merge_list.push_back(m.get<std::string>());
        else if (m.is_array() && m.size() == 2) merge_list.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
        else fail(tokenizer_path + ": a merge is neither \"a b\" nor [a, b]");
    }

    if (spm) {
        // Pieces no merge makes (characters, bytes, added tokens) never win a merge.
        gguf::Array scores{gguf::ValueType::F32, {}, {}, std::vector<double>(size_t(n_vocab), -double(merge_list.size()))};
        for (size_t rank = merge_list.size(); rank-- > 0;) {
            std::string piece = merge_list[rank];
            piece.erase(piece.find(' '), 1);
            if (const auto it = ids.find(piece); it != ids.end()) scores.floats[size_t(it->second)] = -double(rank);
        }
        w.set("tokenizer.ggml.model", gguf::Value::string("llama"));
        w.set("tokenizer.ggml.tokens", gguf::Value::array(std::move(tokens)));
        w.set("tokenizer.ggml.scores", gguf::Value::array(std::move(scores)));
        w.set("tokenizer.ggml.token_type", gguf::Value::array(std::move(types)));
        w.set("tokenizer.ggml.add_space_prefix", gguf::Value::boolean(prepends_space(tj.value("normalizer", json()))));
    } else {
        gguf::Array merges{gguf::ValueType::String, std::move(merge_list), {}, {}};
        w.set("tokenizer.ggml.model", gguf::Value::string("gpt2"));
        w.set("tokenizer.ggml.pre", gguf::Value::string(pre));
        w.set("tokenizer.ggml.tokens", gguf::Value::array(std::move(tokens)));
        w.set("tokenizer.ggml.token_type", gguf::Value::array(std::move(types)));
        w.set("tokenizer.ggml.merges", gguf::Value::array(std::move(merges)));
    }
    const auto special = [&](const char* field, const char* key) {
        const std::string text = config.contains(field) ? token_text(config[field]) : std::string();
        if (text.empty()) return false;
        const auto it = ids.find(text);
        if (it == ids.end()) fail(dir + "/tokenizer_config.json: " + field + " '" + text + "' is not a token");
        w.set(key, gguf::Value::u32(uint32_t(it->second)));
        return true;
    };
    const bool has_bos = special("bos_token", "tokenizer.ggml.bos_token_id");
    special("eos_token", "tokenizer.ggml.eos_token_id");
    special("pad_token", "tokenizer.ggml.padding_token_id");
    if (spm) special("unk_token", "tokenizer.ggml.unknown_token_id");
    // Without add_bos_token, a tokenizer that names a BOS token adds it (Llama 3's post-processor).
    const bool add_bos = config.contains("add_bos_token") ? config["add_bos_token"].get<bool>() : has_bos;
    w.set("tokenizer.ggml.add_bos_token", gguf::Value::boolean(add_bos));
    if (config.contains("add_eos_token"))
        w.set("tokenizer.ggml.add_eos_token", gguf::Value::boolean(config["add_eos_token"].get<bool>()));
    return n_vocab;
}

}  // namespace ember::tools
