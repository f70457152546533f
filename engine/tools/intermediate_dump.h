#pragma once
// `--dump NAME[@LAYER] DIR`: named intermediates of the forward pass written to files, so a new
// architecture can be compared with its reference step by step.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ember/session.h"

namespace ember::tools {

struct DumpRequest {
    std::string name;              // an Intermediate name (ember/session.h)
    std::optional<int32_t> layer;  // none: every layer
    std::string dir;
};

// "NAME" or "NAME@LAYER"; throws UsageError naming the spec when it is malformed.
DumpRequest parse_dump(const std::string& spec, const std::string& dir);

// A callback writing each requested intermediate as DIR/NAME-LAYER-POS.f32 (raw little-endian
// floats, [n_tokens][n_cols]) beside DIR/NAME-LAYER-POS.json (name, layer, positions, shape);
// LAYER is "out" for those after the layers. Directories are created; a file that cannot be
// written ends the program with a message naming it.
IntermediateCallback dump_writer(std::vector<DumpRequest> requests);

}  // namespace ember::tools
