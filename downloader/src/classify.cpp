#include "ember/hub/classify.h"

#include <algorithm>
#include <cctype>
#include <regex>

namespace ember::hub {
namespace {

constexpr uint64_t max_config_bytes = 1u << 20;

bool ends_with(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool in_activation(const std::string& path) { return path.rfind("activation/", 0) == 0; }
bool top_level(const std::string& path) { return path.find('/') == std::string::npos; }

}  // namespace

const char* to_string(FileKind kind) {
    switch (kind) {
        case FileKind::SparseModel: return "sparse";
        case FileKind::DenseModel: return "dense";
        case FileKind::Activation: return "activation";
        case FileKind::Config: return "config";
        case FileKind::Other: return "other";
    }
    return "?";
}

std::string quantization_from_name(const std::string& filename) {
    static const std::regex quant(R"((?:^|[._-])(I?Q[1-8](?:_[0-9A-Z]+)*|BF16|FP16|F16|FP32|F32)(?=[._-]|$))",
                                  std::regex::icase);
    std::string name = filename.substr(filename.find_last_of('/') + 1);
    if (ends_with(name, ".gguf")) name.resize(name.size() - 5);
    std::smatch m;
    if (!std::regex_search(name, m, quant)) return {};
    std::string q = m[1].str();
    std::transform(q.begin(), q.end(), q.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    return q;
}

RepoLayout classify(const std::vector<FileEntry>& files) {
    // PowerInfer's own repos mark sparse files "*.powerinfer.gguf" and may also hold dense GGUFs
    // (Bamboo); ProSparse's repos name none that way, and there every top-level GGUF beside an
    // activation/ folder is sparse.
    bool powerinfer_names = false, has_activation = false;
    for (const auto& f : files) {
        powerinfer_names = powerinfer_names || ends_with(f.path, ".powerinfer.gguf");
        has_activation = has_activation || in_activation(f.path);
    }
    RepoLayout layout;
    for (const auto& f : files) {
        if (in_activation(f.path)) {
            layout.activation.push_back(f);
        } else if (ends_with(f.path, ".gguf")) {
            bool sparse = powerinfer_names ? ends_with(f.path, ".powerinfer.gguf") : has_activation && top_level(f.path);
            (sparse ? layout.sparse_models : layout.dense_models).push_back({f, quantization_from_name(f.path)});
        } else if (top_level(f.path) && f.path[0] != '.' && !f.is_lfs() && f.size <= max_config_bytes) {
            layout.config.push_back(f);
        } else {
            layout.other.push_back(f);
        }
    }
    return layout;
}

FileKind kind_of(const RepoLayout& layout, const std::string& path) {
    auto is_model = [&](const ModelFile& m) { return m.entry.path == path; };
    auto is_file = [&](const FileEntry& f) { return f.path == path; };
    if (std::any_of(layout.sparse_models.begin(), layout.sparse_models.end(), is_model)) return FileKind::SparseModel;
    if (std::any_of(layout.dense_models.begin(), layout.dense_models.end(), is_model)) return FileKind::DenseModel;
    if (std::any_of(layout.activation.begin(), layout.activation.end(), is_file)) return FileKind::Activation;
    if (std::any_of(layout.config.begin(), layout.config.end(), is_file)) return FileKind::Config;
    return FileKind::Other;
}

Result<ModelDownload> plan_model_download(const RepoLayout& layout, const std::string& model_path) {
    auto find = [&](const std::vector<ModelFile>& list) {
        return std::find_if(list.begin(), list.end(), [&](const ModelFile& m) { return m.entry.path == model_path; });
    };
    ModelDownload plan;
    if (auto it = find(layout.sparse_models); it != layout.sparse_models.end()) {
        plan.files.push_back(it->entry);
        plan.files.insert(plan.files.end(), layout.activation.begin(), layout.activation.end());
    } else if (auto d = find(layout.dense_models); d != layout.dense_models.end()) {
        plan.files.push_back(d->entry);
    } else {
        return Error{"'" + model_path + "' is not a GGUF model file of this repo"};
    }
    plan.files.insert(plan.files.end(), layout.config.begin(), layout.config.end());
    for (const auto& f : plan.files) plan.total_bytes += f.size;
    return plan;
}

}  // namespace ember::hub
