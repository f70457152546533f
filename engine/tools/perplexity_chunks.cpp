#include "tools/perplexity_chunks.h"

#include <algorithm>
#include <vector>

namespace ember::tools {

void score_chunk(Session& session, std::span<const int32_t> chunk, int32_t n_batch, const ScorePosition& score) {
    const Model& model = session.model();
    const int32_t n_ctx = int32_t(chunk.size());
    const int32_t first = first_scored(n_ctx);
    std::vector<int32_t> input(chunk.begin(), chunk.end());
    // The chunk starts mid-text; BOS tells the model a text begins, as llama.cpp does.
    if (model.add_bos()) input[0] = model.bos();
    session.clear();
    for (int32_t b0 = 0; b0 < n_ctx; b0 += n_batch) {
        const int32_t n = std::min(n_batch, n_ctx - b0);
        const bool scored = b0 + n > first;
        const Status st = session.evaluate(std::span<const int32_t>(input).subspan(size_t(b0), size_t(n)), scored);
        if (!st) throw EvaluationError(st.error().message);
        if (!scored) continue;
        for (int32_t pos = std::max(b0, first); pos < std::min(b0 + n, n_ctx - 1); ++pos)
            score(session.logits(pos - b0), chunk[size_t(pos) + 1]);
    }
}

}  // namespace ember::tools
