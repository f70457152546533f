// The bookkeeping of a GPU device's one allocation (backend/arena/): blocks never overlap and
// stay inside the capacity, resizing in place only grows into free space, and compaction's moves,
// done with memcpy on a host buffer of the same size, keep every block's bytes (memcpy on
// overlapping ranges would also be caught by the sanitizer run).
#include <QtTest>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "backend/arena/arena_layout.h"

using ember::backend::ArenaLayout;
using ember::backend::ArenaMove;

namespace {

// A host stand-in for device memory, each live block filled with its own byte pattern.
struct Memory {
    ArenaLayout layout;
    std::vector<uint8_t> bytes;
    std::map<ArenaLayout::Block, uint8_t> pattern;

    explicit Memory(uint64_t capacity) : layout(capacity), bytes(capacity) {}

    bool add(uint64_t size, uint8_t fill) {
        const auto b = layout.allocate(size);
        if (!b) return false;
        pattern[*b] = fill;
        std::memset(bytes.data() + layout.offset(*b), fill, layout.size(*b));
        return true;
    }
    void apply(const std::vector<ArenaMove>& moves) {
        for (const ArenaMove& m : moves) {
            QVERIFY(m.from + m.bytes <= m.to || m.to + m.bytes <= m.from);
            std::memcpy(bytes.data() + m.to, bytes.data() + m.from, m.bytes);
        }
    }
    // Every block inside the capacity, apart from the others, holding its pattern.
    void check() const {
        std::vector<std::pair<uint64_t, uint64_t>> spans;
        uint64_t used = 0;
        for (const auto& [b, fill] : pattern) {
            const uint64_t off = layout.offset(b), size = layout.size(b);
            QCOMPARE(off % ArenaLayout::kAlign, 0u);
            QVERIFY(off + size <= layout.capacity());
            spans.emplace_back(off, size);
            used += size;
            for (uint64_t i = 0; i < size; ++i)
                if (bytes[off + i] != fill) QFAIL(qPrintable(QString("block %1 lost byte %2").arg(b).arg(i)));
        }
        QCOMPARE(layout.used(), used);
        std::sort(spans.begin(), spans.end());
        for (size_t i = 1; i < spans.size(); ++i) QVERIFY(spans[i - 1].first + spans[i - 1].second <= spans[i].first);
    }
};

}  // namespace

class TestArenaLayout : public QObject {
    Q_OBJECT

private slots:
    void allocations_take_the_lowest_gap_that_fits() {
        ArenaLayout a(4096);
        const auto x = a.allocate(1000), y = a.allocate(100), z = a.allocate(512);
        QVERIFY(x && y && z);
        QCOMPARE(a.offset(*x), 0u);
        QCOMPARE(a.size(*x), 1024u);  // rounded up to the alignment
        QCOMPARE(a.offset(*y), 1024u);
        QCOMPARE(a.offset(*z), 1280u);
        a.release(*x);
        const auto small = a.allocate(300);
        QVERIFY(small);
        QCOMPARE(a.offset(*small), 0u);
        QVERIFY(!a.allocate(4096 - 1792 + 1));  // the tail holds 2304 bytes, the gap at 512 holds 512
        QVERIFY(a.allocate(2304));
        QCOMPARE(a.used(), 512u + 256 + 512 + 2304);
    }

    void resizing_in_place_grows_only_into_free_space() {
        ArenaLayout a(2048);
        const auto x = a.allocate(512), y = a.allocate(512);
        QVERIFY(x && y);
        QVERIFY(!a.resize(*x, 600));  // y lies right after it
        QVERIFY(a.resize(*y, 1536));  // up to the capacity
        QVERIFY(!a.resize(*y, 1537));
        QVERIFY(a.resize(*x, 100));
        QCOMPARE(a.size(*x), 256u);
        QVERIFY(a.resize(*x, 512));  // back into what it freed
        QCOMPARE(a.used(), 2048u);
        QCOMPARE(a.end(), 2048u);
    }

    void compaction_keeps_every_block_and_frees_the_tail() {
        Memory m(64 * 1024);
        for (int i = 0; i < 12; ++i) QVERIFY(m.add(1000 + 700 * uint64_t(i), uint8_t(i + 1)));
        for (auto it = m.pattern.begin(); it != m.pattern.end();) {
            if (it->first % 3 == 0) {
                m.layout.release(it->first);
                it = m.pattern.erase(it);
            } else {
                ++it;
            }
        }
        const uint64_t used = m.layout.used();
        QVERIFY(m.layout.end() > used);
        m.apply(m.layout.compact());
        m.check();
        QCOMPARE(m.layout.end(), used);
        QVERIFY(m.add(m.layout.capacity() - used, 0xEE));  // the whole rest is one gap now
        m.check();
    }

    void a_small_shift_moves_a_large_block_in_pieces() {
        Memory m(8192);
        QVERIFY(m.add(256, 1));
        QVERIFY(m.add(5000, 2));
        m.layout.release(m.pattern.begin()->first);
        m.pattern.erase(m.pattern.begin());
        const std::vector<ArenaMove> moves = m.layout.compact();
        QCOMPARE(moves.size(), size_t((5120 + 255) / 256));
        m.apply(moves);
        m.check();
    }

    void making_room_after_a_block_lets_it_grow_by_all_the_free_space() {
        Memory m(32 * 1024);
        for (int i = 0; i < 8; ++i) QVERIFY(m.add(1500 + 500 * uint64_t(i), uint8_t(i + 1)));
        auto it = m.pattern.begin();
        m.layout.release(std::next(it, 1)->first);
        m.layout.release(std::next(it, 6)->first);
        m.pattern.erase(std::next(it, 6));
        m.pattern.erase(std::next(it, 1));
        const ArenaLayout::Block grow = std::next(m.pattern.begin(), 2)->first;
        const uint64_t before = m.layout.size(grow), free = m.layout.capacity() - m.layout.used();
        QVERIFY(!m.layout.resize(grow, before + free));
        m.apply(m.layout.make_room_after(grow));
        m.check();
        QVERIFY(m.layout.resize(grow, before + free));
        std::memset(m.bytes.data() + m.layout.offset(grow) + before, m.pattern[grow], free);
        m.check();
        QCOMPARE(m.layout.used(), m.layout.capacity());
    }

    void capacity_cannot_cut_through_a_block() {
        ArenaLayout a(4096);
        const auto x = a.allocate(1024), y = a.allocate(1024);
        QVERIFY(x && y);
        a.release(*x);
        QVERIFY_THROWS_EXCEPTION(std::logic_error, a.set_capacity(1024));
        (void)a.compact();
        a.set_capacity(1024);
        QCOMPARE(a.capacity(), 1024u);
        QVERIFY(!a.allocate(1));
    }

    // Random allocations, resizes, releases and compactions, with the bytes checked after each.
    void random_use_never_loses_bytes() {
        std::mt19937 rng(7);
        Memory m(1 << 20);
        uint8_t fill = 1;
        for (int step = 0; step < 2000; ++step) {
            const int op = int(rng() % 10);
            if (op < 5) {
                (void)m.add(rng() % 40000, fill);
                fill = uint8_t(fill % 250 + 1);
            } else if (op < 7 && !m.pattern.empty()) {
                auto it = std::next(m.pattern.begin(), long(rng() % m.pattern.size()));
                m.layout.release(it->first);
                m.pattern.erase(it);
            } else if (op < 9 && !m.pattern.empty()) {
                auto it = std::next(m.pattern.begin(), long(rng() % m.pattern.size()));
                const uint64_t before = m.layout.size(it->first);
                if (m.layout.resize(it->first, rng() % 60000) && m.layout.size(it->first) > before)
                    std::memset(m.bytes.data() + m.layout.offset(it->first) + before, it->second,
                                m.layout.size(it->first) - before);
            } else if (op == 9 && !m.pattern.empty() && rng() % 2) {
                auto it = std::next(m.pattern.begin(), long(rng() % m.pattern.size()));
                m.apply(m.layout.make_room_after(it->first));
                const uint64_t before = m.layout.size(it->first);
                QVERIFY(m.layout.resize(it->first, before + m.layout.capacity() - m.layout.used()));
                QVERIFY(m.layout.resize(it->first, before));
            } else {
                m.apply(m.layout.compact());
                QCOMPARE(m.layout.end(), m.layout.used());
            }
            m.check();
            if (QTest::currentTestFailed()) return;
        }
    }
};

QTEST_GUILESS_MAIN(TestArenaLayout)
#include "tst_arena_layout.moc"
