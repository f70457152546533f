#include "ember/sparsity.h"

#include <filesystem>

#include "common/error.h"
#include "common/utf8_path.h"
#include "sparse/sparsity_file.h"

namespace ember {

std::string sparsity_calibration_path(const std::string& model_path) { return sparse::default_sparsity_path(model_path); }

Result<SparsityCalibrationInfo> read_sparsity_calibration(const Model& model, const std::string& path) {
    const ModelInfo& info = model.info();
    SparsityCalibrationInfo out;
    out.path = path.empty() ? sparse::default_sparsity_path(info.path) : path;
    try {
        std::error_code ec;
        if (!std::filesystem::exists(utf8_path(out.path), ec)) return Error{out.path + ": no calibration (made by ember-calibrate)"};
        const uint64_t model_bytes = std::filesystem::file_size(utf8_path(info.path), ec);
        if (ec) return Error{info.path + ": " + ec.message()};
        const sparse::SparsityCalibration c = sparse::read_sparsity_file(out.path, info.n_layer, info.n_ff, model_bytes);
        out.ppl_dense = c.quality.ppl_dense;
        out.n_scored = c.quality.n_scored;
        for (size_t i = 0; i < c.quality.levels.size(); ++i)
            out.levels.push_back({c.quality.levels[i], c.quality.ppl[i], c.quality.same_top[i],
                                  c.quality.speed.empty() ? 0.0f : c.quality.speed[i]});
        out.recommended = sparse::recommended_level(c);
        return out;
    } catch (const EngineError& e) {
        return e.error();
    }
}

}  // namespace ember
