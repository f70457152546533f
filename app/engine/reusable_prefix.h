#pragma once
// How much of a session's cache a new prompt may keep.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::app {

// The tokens `prompt` shares with `context` (what the cache holds: the earlier turns), less one
// where that is the whole prompt, so at least one token is evaluated and there are logits to
// sample from.
inline size_t reusable_prefix(const std::vector<int32_t>& context, const std::vector<int32_t>& prompt) {
    size_t keep = 0;
    while (keep < context.size() && keep < prompt.size() && context[keep] == prompt[keep]) ++keep;
    return std::min(keep, prompt.empty() ? 0 : prompt.size() - 1);
}

}  // namespace ember::app
