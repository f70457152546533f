#pragma once
// Where ember-calibrate's files sit: beside the model, named after it, so that the engine finds
// them without being told.

#include <string>
#include <string_view>

namespace ember::sparse {

// `<model path without .gguf><suffix>`
inline std::string side_file_path(const std::string& model_path, std::string_view suffix) {
    constexpr std::string_view ext = ".gguf";
    const bool has_ext = model_path.size() > ext.size() && std::string_view(model_path).ends_with(ext);
    return (has_ext ? model_path.substr(0, model_path.size() - ext.size()) : model_path) + std::string(suffix);
}

}  // namespace ember::sparse
