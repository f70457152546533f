#pragma once
// A mixture of experts kept partly on disk (ModelParams::expert_memory_bytes): everything but
// the experts, and the experts used most within a byte budget, are read into memory at load;
// the other experts stay pages of the mapped file, read when a token is routed to them, and the
// executor asks for them as soon as the router has chosen (SmallThinker's router runs before
// attention, so the reads overlap it).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/expert_ffn.h"
#include "model/hparams.h"

namespace ember::model {

struct ExpertResidency {
    std::vector<std::vector<uint8_t>> on_demand;  // [n_layer][n_expert]: 1 where read from the file when routed
    uint64_t bytes_in_memory = 0;                 // the experts' bytes kept in memory
    uint64_t bytes = 0;                           // all the experts' bytes
    std::string order;                            // what chose them: the routing profile, or why none
};

// Reads every tensor of `file`, a map, into memory but the experts' (`*_exps.weight`), reporting
// the fraction read to `progress`.
void keep_all_but_experts_in_memory(const gguf::File& file, const gguf::MappedFile::Progress& progress);

// Keeps in memory the experts that fit in `budget` bytes, those the routing profile beside the
// model (sparse/expert_profile.h) says are used most first, layer by layer without a usable one.
// layers[il] are layer il's experts, bound in `file`, a map.
ExpertResidency keep_experts_in_memory(const gguf::File& file, std::span<const MoeFfnWeights> layers, const HParams& hp,
                                       uint64_t budget);

}  // namespace ember::model
