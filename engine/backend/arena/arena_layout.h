#pragma once
// Where a device's blocks lie in its one allocation (engine/backend/cuda/ holds everything it
// keeps in one arena, so the VRAM budget is what the process takes). Pure bookkeeping in byte
// offsets, so it is tested on the CPU; the device copies the bytes the moves it returns name.

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace ember::backend {

// One copy of `bytes` from offset `from` to offset `to` of the arena; the two ranges never
// overlap, so a plain memcpy (or cudaMemcpy) does it. Moves are done in the order given.
struct ArenaMove {
    uint64_t from = 0;
    uint64_t to = 0;
    uint64_t bytes = 0;
};

class ArenaLayout {
public:
    // Every block starts at a multiple of this (the widest vector load of any kernel).
    static constexpr uint64_t kAlign = 256;
    using Block = uint32_t;

    explicit ArenaLayout(uint64_t capacity = 0) : capacity_(capacity) {}

    // What a block of `bytes` takes: rounded up to kAlign, at least kAlign.
    static uint64_t aligned(uint64_t bytes);

    uint64_t capacity() const { return capacity_; }
    // Bytes taken by blocks, each rounded up to kAlign.
    uint64_t used() const { return used_; }
    // One past the last byte of the highest block (0 when empty).
    uint64_t end() const;

    // The lowest free range of `bytes`, or nothing when no gap is large enough (compact() may
    // make one). A block of 0 bytes still takes kAlign, so every block has its own offset.
    std::optional<Block> allocate(uint64_t bytes);
    void release(Block b);
    // Changes b's size where it lies: shrinking always succeeds, growing only into free space
    // right after it. Returns whether b now has `bytes`.
    bool resize(Block b, uint64_t bytes);

    uint64_t offset(Block b) const { return blocks_.at(b).offset; }
    uint64_t size(Block b) const { return blocks_.at(b).size; }

    // Packs the blocks from offset 0 in their address order, leaving all free space at the end.
    // A block shifted by less than its size moves in pieces of the shift, front to back.
    std::vector<ArenaMove> compact();
    // Moves the blocks so that all free space lies right after b: those up to b packed from
    // offset 0, those after it packed against the capacity (moved up, in pieces back to front).
    // b can then grow in place by all the free space.
    std::vector<ArenaMove> make_room_after(Block b);
    // Throws std::logic_error when a block would lie past the new capacity (compact first).
    void set_capacity(uint64_t capacity);

private:
    struct Span {
        uint64_t offset = 0;
        uint64_t size = 0;
    };
    uint64_t capacity_ = 0;
    uint64_t used_ = 0;
    Block next_ = 0;
    std::map<Block, Span> blocks_;
    std::map<uint64_t, Block> by_offset_;
};

}  // namespace ember::backend
