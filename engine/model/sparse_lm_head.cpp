#include "model/sparse_lm_head.h"

#include <algorithm>

namespace ember::model {

SparseLmHeadScratch::SparseLmHeadScratch(const LmHeadProfiler& p, int64_t n_embd)
    : rank(size_t(p.to_rank.n_rows)), score(size_t(p.to_vocab.n_rows)) {
    x.reserve(1, n_embd);
    hidden.reserve(1, p.to_rank.n_rows);
    rows.reserve(size_t(p.to_vocab.n_rows));
}

int64_t sparse_lm_head(tensor::ThreadPool& pool, const tensor::WeightView& head, const LmHeadProfiler& p,
                       const float* x, float* logits, SparseLmHeadScratch& s, tensor::PreparedActivations& head_x) {
    const int64_t n_embd = head.n_cols, n_vocab = head.n_rows;
    s.x.prepare(p.to_rank.type, x, 1, n_embd);
    tensor::matmul_prepared(pool, p.to_rank, s.x.row(0), s.x.row_stride(), 1, s.rank.data());
    s.hidden.prepare(p.to_vocab.type, s.rank.data(), 1, p.to_rank.n_rows);
    tensor::matmul_prepared(pool, p.to_vocab, s.hidden.row(0), s.hidden.row_stride(), 1, s.score.data());
    s.rows.clear();
    for (int64_t v = 0; v < n_vocab; ++v)
        if (s.score[size_t(v)] > 0.0f) s.rows.push_back(int32_t(v));  // NaN is not above 0
    std::fill(logits, logits + n_vocab, 0.0f);
    head_x.prepare(head.type, x, 1, n_embd);
    tensor::matmul_rows(pool, head, head_x.row(0), s.rows.data(), int64_t(s.rows.size()), logits);
    return int64_t(s.rows.size());
}

}  // namespace ember::model
