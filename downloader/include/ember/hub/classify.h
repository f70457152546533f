#pragma once
// What a repo's files are to the app: which GGUFs run sparse (PowerInfer) or dense, their
// quantization, the activation/ folder, and what "download this model" has to fetch.

#include <cstdint>
#include <string>
#include <vector>

#include "ember/hub/repo.h"
#include "ember/hub/result.h"

namespace ember::hub {

enum class FileKind {
    SparseModel,  // PowerInfer GGUF: runs with the repo's activation/ statistics
    DenseModel,   // plain GGUF
    Activation,   // activation/*: per-layer neuron statistics for the sparse models
    Config,       // small top-level files (config.json, README.md) a model folder keeps
    Other,        // everything else (.gitattributes, other formats)
};

const char* to_string(FileKind kind);

struct ModelFile {
    FileEntry entry;
    std::string quantization;  // upper case ("Q4_0", "F16"); empty when the name does not say
};

struct RepoLayout {
    std::vector<ModelFile> sparse_models;
    std::vector<ModelFile> dense_models;
    std::vector<FileEntry> activation;
    std::vector<FileEntry> config;
    std::vector<FileEntry> other;
};

RepoLayout classify(const std::vector<FileEntry>& files);
FileKind kind_of(const RepoLayout& layout, const std::string& path);

// "q4" (PowerInfer's INT4 naming) → "Q4"; "Q4_K_M", "f16", "BF16" … as written, upper-cased.
std::string quantization_from_name(const std::string& filename);

struct ModelDownload {
    std::vector<FileEntry> files;  // the GGUF, then activation/ (sparse models), then config
    uint64_t total_bytes = 0;
};

// The files one model needs. Fails when model_path is not a GGUF of the layout.
Result<ModelDownload> plan_model_download(const RepoLayout& layout, const std::string& model_path);

}  // namespace ember::hub
