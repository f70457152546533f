#include "backend/cuda/gpu_arena.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/error.h"

namespace ember::backend::gpu {

void Arena::finish(const char* what) const { check(gpuStreamSynchronize(stream_), what); }

void Arena::compact() { apply(layout_.compact(), "compacting device memory"); }

std::optional<Arena::Block> Arena::try_take(uint64_t bytes) {
    if (auto b = layout_.allocate(bytes)) return b;
    if (layout_.capacity() - layout_.used() < ArenaLayout::aligned(bytes)) return std::nullopt;
    compact();
    return layout_.allocate(bytes);
}

Arena::Block Arena::take(uint64_t bytes, const std::string& what) {
    if (auto b = try_take(bytes)) return *b;
    fail(owner_ + ": " + what + " (" + std::to_string(bytes) + " bytes) does not fit in the " +
         std::to_string(layout_.capacity()) + " bytes of device memory held, " + std::to_string(layout_.used()) +
         " in use");
}

void Arena::apply(const std::vector<ArenaMove>& moves, const char* what) {
    finish("finishing queued work before moving device memory");
    for (const ArenaMove& m : moves)
        check(gpuMemcpyAsync(memory_.data() + m.to, memory_.data() + m.from, m.bytes, gpuMemcpyDeviceToDevice, stream_), what);
    finish(what);
}

bool Arena::resize(Block& b, uint64_t bytes) {
    if (layout_.resize(b, bytes)) return true;
    const uint64_t keep = layout_.size(b);
    if (bytes - keep > layout_.capacity() - layout_.used()) return false;
    // A free gap that holds the whole block costs one copy of it; otherwise the blocks above it
    // move up until the free space lies right after it.
    if (const std::optional<Block> next = layout_.allocate(bytes)) {
        apply({{layout_.offset(b), layout_.offset(*next), keep}}, "moving a block of device memory");
        layout_.release(b);
        b = *next;
        return true;
    }
    apply(layout_.make_room_after(b), "making room in device memory");
    return layout_.resize(b, bytes);
}

void Arena::resize_memory(uint64_t bytes) {
    if (bytes == layout_.capacity()) return;
    compact();
    const uint64_t live = layout_.end();
    if (live > bytes)
        fail(owner_ + ": " + std::to_string(live) + " bytes held do not fit in " + std::to_string(bytes));
    DeviceBuffer next;
    try {
        next = DeviceBuffer(bytes);
    } catch (const EngineError&) {
        // No room for both: the contents wait on the host while the allocation is replaced.
        std::vector<uint8_t> held(live);
        if (live) check(gpuMemcpy(held.data(), memory_.data(), live, gpuMemcpyDeviceToHost), "saving device memory");
        const uint64_t old = memory_.bytes();
        memory_ = DeviceBuffer();
        try {
            next = DeviceBuffer(bytes);
        } catch (const EngineError&) {
            memory_ = DeviceBuffer(old);
            if (live) check(gpuMemcpy(memory_.data(), held.data(), live, gpuMemcpyHostToDevice), "restoring device memory");
            throw;
        }
        if (live) check(gpuMemcpy(next.data(), held.data(), live, gpuMemcpyHostToDevice), "restoring device memory");
        memory_ = std::move(next);
        layout_.set_capacity(bytes);
        return;
    }
    if (live) check(gpuMemcpyAsync(next.data(), memory_.data(), live, gpuMemcpyDeviceToDevice, stream_), "moving device memory");
    finish("moving device memory");
    memory_ = std::move(next);
    layout_.set_capacity(bytes);
}

}  // namespace ember::backend::gpu
