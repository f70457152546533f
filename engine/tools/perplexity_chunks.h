#pragma once
// llama.cpp's perplexity procedure: the text, tokenized once, is cut into chunks of n_ctx tokens;
// each chunk is evaluated from an empty context with its first token replaced by BOS (when the
// model adds one), and only its second half is scored, so every scored token has at least n_ctx/2
// tokens before it: positions n_ctx/2 .. n_ctx−2, each predicting the token after it.

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>

#include "ember/session.h"

namespace ember::tools {

// The session failed (a message from the engine).
struct EvaluationError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline int32_t first_scored(int32_t n_ctx) { return n_ctx / 2; }
inline int32_t scored_per_chunk(int32_t n_ctx) { return n_ctx - 1 - first_scored(n_ctx); }

// Called for each scored position in order: its logits and the token that follows it in the text.
using ScorePosition = std::function<void(std::span<const float> logits, int32_t next_token)>;

// Evaluates one chunk (n_ctx tokens of the text) on a cleared session, n_batch tokens at a
// time as llama.cpp's batches are, asking for logits only of the batches holding scored positions.
void score_chunk(Session& session, std::span<const int32_t> chunk, int32_t n_batch, const ScorePosition& score);

}  // namespace ember::tools
