#include "model/expert_residency.h"

#include <algorithm>

#include "common/error.h"
#include "model/architecture.h"
#include "sparse/expert_profile.h"

namespace ember::model {

void keep_all_but_experts_in_memory(const gguf::File& file, const gguf::MappedFile::Progress& progress) {
    std::vector<const gguf::TensorInfo*> parts;
    uint64_t total = 0;
    for (const gguf::TensorInfo& t : file.tensors())
        if (!t.name.ends_with("_exps.weight") && t.nbytes > 0) {
            parts.push_back(&t);
            total += t.nbytes;
        }
    std::sort(parts.begin(), parts.end(), [](const auto* a, const auto* b) { return a->data < b->data; });
    // Neighbours go as one run (with the padding between them), each run one read.
    uint64_t done = 0;
    for (size_t i = 0; i < parts.size();) {
        const uint8_t* begin = parts[i]->data;
        const uint8_t* end = begin + parts[i]->nbytes;
        done += parts[i]->nbytes;
        for (++i; i < parts.size() && parts[i]->data <= end + file.alignment(); ++i) {
            end = std::max(end, parts[i]->data + parts[i]->nbytes);
            done += parts[i]->nbytes;
        }
        file.make_resident(begin, size_t(end - begin));
        if (progress && !progress(float(double(done) / double(std::max<uint64_t>(total, 1)))))
            fail(file.path() + ": loading cancelled");
    }
}

ExpertResidency keep_experts_in_memory(const gguf::File& file, std::span<const MoeFfnWeights> layers, const HParams& hp,
                                       uint64_t budget) {
    ExpertResidency r;
    std::vector<float> share;  // [n_layer · n_expert], the profile's; empty: none usable
    const std::string profile_path = sparse::default_expert_profile_path(file.path());
    try {
        const sparse::ExpertProfile p =
            sparse::read_expert_profile(profile_path, hp.n_layer, hp.n_expert, hp.n_expert_used, hp.n_ff, file.file_size());
        for (const std::vector<float>& layer : p.share) share.insert(share.end(), layer.begin(), layer.end());
        r.order = "the most used first, by " + profile_path;
    } catch (const EngineError& e) {
        // Without a profile the order costs speed, not the load.
        r.order = std::string("layer by layer: ") + e.what();
    }
    std::vector<int32_t> order(size_t(hp.n_layer) * size_t(hp.n_expert));
    for (size_t i = 0; i < order.size(); ++i) order[i] = int32_t(i);
    if (!share.empty())
        std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return share[size_t(a)] > share[size_t(b)]; });

    r.on_demand.assign(size_t(hp.n_layer), std::vector<uint8_t>(size_t(hp.n_expert), 1));
    for (const int32_t i : order) {
        const int32_t il = i / hp.n_expert, e = i % hp.n_expert;
        const ExpertWeights w = expert_weights(layers[size_t(il)], hp, e);
        const uint64_t bytes = expert_bytes(w);
        r.bytes += bytes;
        if (r.bytes_in_memory + bytes > budget) continue;
        for (const tensor::WeightView* m : {&w.gate, &w.up, &w.down}) file.make_resident(m->data, size_t(matrix_bytes(*m)));
        r.bytes_in_memory += bytes;
        r.on_demand[size_t(il)][size_t(e)] = 0;
    }
    return r;
}

}  // namespace ember::model
