#pragma once
// --ffn-act relu|silu, shared by the tools that load a model: the FFN activation of dense llama
// files, which do not record it.

#include <string>

#include "ember/model.h"
#include "tools/arg_parse.h"

namespace ember::tools {

inline FfnActivation parse_ffn_act(const std::string& flag, const std::string& value) {
    if (value == "relu") return FfnActivation::Relu;
    if (value == "silu") return FfnActivation::Silu;
    throw UsageError(flag + ": '" + value + "' is not relu or silu");
}

}  // namespace ember::tools
