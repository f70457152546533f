#pragma once
// Everything a GPU device holds lives in one allocation of exactly its footprint (weights, KV
// cache, hot rows, scratch), laid out by ArenaLayout. A block's address is valid until the next
// call that may compact: take(), grow() and resize_memory() first finish the stream's work.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/arena/arena_layout.h"
#include "backend/cuda/gpu_buffer.h"

namespace ember::backend::gpu {

class Arena {
public:
    using Block = ArenaLayout::Block;

    Arena(std::string owner, gpuStream_t stream) : owner_(std::move(owner)), stream_(stream) {}

    uint64_t capacity() const { return layout_.capacity(); }
    uint8_t* at(Block b) const { return memory_.data() + layout_.offset(b); }

    // A block of `bytes`, compacting the arena when no gap is large enough; nothing when the
    // free space is too small even then.
    std::optional<Block> try_take(uint64_t bytes);
    // As try_take, or EngineError naming `what` and the sizes.
    Block take(uint64_t bytes, const std::string& what);
    void release(Block b) { layout_.release(b); }
    // Makes b `bytes` long, keeping its first min(old, new) bytes: in place where the space
    // after it is free, else by a copy into a free gap, else by moving the blocks above it. False,
    // b unchanged, when the arena's free space is too small.
    bool resize(Block& b, uint64_t bytes);

    // Replaces the allocation with one of `bytes`, the blocks keeping their contents (packed
    // at the front). The old and new allocations coexist for the copy when the GPU has room
    // for both; otherwise the contents wait in host memory. Throws EngineError when the
    // blocks do not fit in `bytes` or the GPU has not the memory (the old allocation stays).
    void resize_memory(uint64_t bytes);

private:
    // Does the layout's moves with nothing else queued.
    void apply(const std::vector<ArenaMove>& moves, const char* what);
    void compact();
    void finish(const char* what) const;

    std::string owner_;
    gpuStream_t stream_;
    DeviceBuffer memory_;
    ArenaLayout layout_;
};

}  // namespace ember::backend::gpu
