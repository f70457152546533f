#pragma once
// What a loaded Model holds: the mapped file, the architecture bound to it, the tokenizer.

#include <memory>

#include "ember/model.h"
#include "gguf/gguf_reader.h"
#include "model/architecture.h"
#include "tokenizer/tokenizer.h"

namespace ember {

struct Model::Impl {
    std::unique_ptr<gguf::File> file;
    std::unique_ptr<model::Architecture> arch;
    std::unique_ptr<tokenizer::Tokenizer> tokenizer;
    ModelInfo info;
};

}  // namespace ember
