#pragma once
// The sampling stages, each a small function over one candidates array (llama.cpp's
// llama_token_data_array, reduced). A stage that trims keeps a prefix of `size` entries and
// always keeps at least one. Ordering is "higher logit first, lower id on ties", a total
// order because NaN logits are turned into -inf on load; that makes every cut and every
// greedy pick deterministic.

#include <cstddef>
#include <cstdint>
#include <span>

namespace ember::sampling {

struct Candidate {
    int32_t id;
    float logit;
    float p;  // filled by softmax()
};

struct CandidateArray {
    Candidate* data;
    size_t size;
    bool sorted;  // data[0..size) in descending order (see above)
};

// Fills out[i] = {i, logits[i]} with NaN -> -inf. out.size() must equal logits.size().
CandidateArray load_candidates(std::span<const float> logits, std::span<Candidate> out);

// llama.cpp's repetition penalty on each id in `tokens` (distinct, in range). Needs the
// array as load_candidates() left it: data[i].id == i.
void apply_repeat_penalty(CandidateArray& c, std::span<const int32_t> tokens, float penalty);

// Highest logit, lowest id on ties; data[0].id if every logit is -inf.
int32_t argmax(const CandidateArray& c);

void apply_top_k(CandidateArray& c, int32_t k);  // k <= 0 or k >= size: no-op
void apply_top_p(CandidateArray& c, float p);    // p >= 1: no-op; keeps the shortest sorted
                                                 // prefix whose probability mass reaches p
void apply_min_p(CandidateArray& c, float p);    // p <= 0: no-op; drops tokens with
                                                 // prob < p * max prob
void apply_temperature(CandidateArray& c, float t);  // t > 0: logit -> (logit - max) / t
void softmax(CandidateArray& c);  // p of each candidate; +inf logits share all the mass,
                                  // all -inf gives a uniform distribution

// The first candidate (in array order) whose cumulative normalized probability exceeds
// u in [0, 1). Never returns a candidate with p == 0 unless all are 0.
int32_t draw(const CandidateArray& c, double u);

}  // namespace ember::sampling
