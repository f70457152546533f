#include "backend/arena/arena_layout.h"

#include <algorithm>
#include <stdexcept>

namespace ember::backend {

uint64_t ArenaLayout::aligned(uint64_t bytes) { return std::max<uint64_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign); }

uint64_t ArenaLayout::end() const {
    if (by_offset_.empty()) return 0;
    const Span& last = blocks_.at(by_offset_.rbegin()->second);
    return last.offset + last.size;
}

std::optional<ArenaLayout::Block> ArenaLayout::allocate(uint64_t bytes) {
    const uint64_t size = aligned(bytes);
    uint64_t gap_start = 0;
    for (const auto& [offset, b] : by_offset_) {
        if (offset - gap_start >= size) break;
        gap_start = offset + blocks_.at(b).size;
    }
    if (gap_start > capacity_ || capacity_ - gap_start < size) return std::nullopt;
    const Block b = next_++;
    blocks_[b] = {gap_start, size};
    by_offset_[gap_start] = b;
    used_ += size;
    return b;
}

void ArenaLayout::release(Block b) {
    const Span s = blocks_.at(b);
    by_offset_.erase(s.offset);
    blocks_.erase(b);
    used_ -= s.size;
}

bool ArenaLayout::resize(Block b, uint64_t bytes) {
    Span& s = blocks_.at(b);
    const uint64_t size = aligned(bytes);
    if (size > s.size) {
        auto after = by_offset_.upper_bound(s.offset);
        const uint64_t limit = after == by_offset_.end() ? capacity_ : after->first;
        if (limit - s.offset < size) return false;
    }
    used_ = used_ - s.size + size;
    s.size = size;
    return true;
}

std::vector<ArenaMove> ArenaLayout::compact() {
    std::vector<ArenaMove> moves;
    std::map<uint64_t, Block> packed;
    uint64_t cursor = 0;
    for (const auto& [offset, b] : by_offset_) {
        Span& s = blocks_.at(b);
        if (offset > cursor) {
            // Each piece's source starts where the previous piece's source ended, at least `shift`
            // bytes above its own destination, so no copy reads bytes an earlier one wrote.
            const uint64_t shift = offset - cursor;
            for (uint64_t done = 0; done < s.size; done += shift)
                moves.push_back({offset + done, cursor + done, std::min(shift, s.size - done)});
            s.offset = cursor;
        }
        packed[cursor] = b;
        cursor += s.size;
    }
    by_offset_ = std::move(packed);
    return moves;
}

std::vector<ArenaMove> ArenaLayout::make_room_after(Block b) {
    const uint64_t pivot = blocks_.at(b).offset;
    std::vector<ArenaMove> moves;
    std::map<uint64_t, Block> packed;
    uint64_t cursor = 0;
    for (const auto& [offset, id] : by_offset_) {
        if (offset > pivot) break;
        Span& s = blocks_.at(id);
        const uint64_t shift = offset - cursor;
        for (uint64_t done = 0; shift && done < s.size; done += shift)
            moves.push_back({offset + done, cursor + done, std::min(shift, s.size - done)});
        s.offset = cursor;
        packed[cursor] = id;
        cursor += s.size;
    }
    // From the top down, each block moves up; its pieces go back to front so none overwrites
    // bytes not yet copied.
    uint64_t ceiling = capacity_;
    for (auto it = by_offset_.rbegin(); it != by_offset_.rend() && it->first > pivot; ++it) {
        Span& s = blocks_.at(it->second);
        const uint64_t to = ceiling - s.size, shift = to - s.offset;
        for (uint64_t left = s.size; shift && left > 0;) {
            const uint64_t piece = std::min(shift, left);
            left -= piece;
            moves.push_back({s.offset + left, to + left, piece});
        }
        s.offset = to;
        packed[to] = it->second;
        ceiling = to;
    }
    by_offset_ = std::move(packed);
    return moves;
}

void ArenaLayout::set_capacity(uint64_t capacity) {
    if (end() > capacity) throw std::logic_error("arena blocks lie past the new capacity");
    capacity_ = capacity;
}

}  // namespace ember::backend
