#include "tools/memory_bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "common/cpu_hints.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ember::tools {
namespace {

// Eight independent sums so the loop is bound by loads, not by one add chain; the compiler
// vectorizes it.
uint64_t sum_words(const uint64_t* p, size_t n) {
    uint64_t s[8] = {};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k) s[k] += p[i + size_t(k)];
    for (; i < n; ++i) s[0] += p[i];
    uint64_t total = 0;
    for (uint64_t v : s) total += v;
    return total;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Huge pages where the kernel allows them, as the engine asks for a model read into memory:
// scattered reads pay for address translation, so the page size matters to them.
void advise_huge_pages([[maybe_unused]] void* p, [[maybe_unused]] size_t bytes) {
#if defined(MADV_HUGEPAGE)
    const uintptr_t huge = uintptr_t(2) << 20;
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + huge - 1) & ~(huge - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(huge - 1);
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

// Threads wait here between the phases of a layer, as the engine's pool does; spinning, since
// a phase lasts tens of microseconds.
class SpinBarrier {
public:
    explicit SpinBarrier(int n) : n_(n) {}
    void arrive_and_wait() {
        const int gen = generation_.load(std::memory_order_acquire);
        if (waiting_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
            waiting_.store(0, std::memory_order_relaxed);
            generation_.fetch_add(1, std::memory_order_acq_rel);
            return;
        }
        while (generation_.load(std::memory_order_acquire) == gen) std::this_thread::yield();
    }

private:
    const int n_;
    std::atomic<int> waiting_{0};
    std::atomic<int> generation_{0};
};

}  // namespace

double measure_read_bandwidth(size_t bytes, int n_threads, int reps) {
    const size_t words = bytes / 8;
    std::vector<uint64_t> buffer(words);
    for (size_t i = 0; i < words; ++i) buffer[i] = i;  // touch every page before timing
    std::vector<double> rates;
    volatile uint64_t sink = 0;
    for (int r = 0; r < reps; ++r) {
        std::vector<uint64_t> partial(static_cast<size_t>(n_threads));
        const auto start = std::chrono::steady_clock::now();
        std::vector<std::thread> threads;
        for (int t = 0; t < n_threads; ++t) {
            threads.emplace_back([&, t] {
                const size_t begin = words * size_t(t) / size_t(n_threads);
                const size_t end = words * size_t(t + 1) / size_t(n_threads);
                partial[size_t(t)] = sum_words(buffer.data() + begin, end - begin);
            });
        }
        for (auto& th : threads) th.join();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        for (uint64_t v : partial) sink = sink + v;
        rates.push_back(double(words * 8) / s / 1e9);
    }
    return median(rates);
}

TokenReadRates measure_token_reads(const TokenReads& t, int n_threads, int reps, size_t max_bytes) {
    const size_t row_words = size_t((t.row_bytes + 7) / 8);
    const size_t dense_words = size_t((t.dense_bytes_per_layer + 7) / 8);
    const size_t matrix_words = row_words * size_t(t.n_ff);
    const size_t layer_words = dense_words + matrix_words * size_t(t.ffn_matrices);
    const int32_t n_layer = int32_t(std::clamp<size_t>(max_bytes / (layer_words * 8), 1, size_t(t.n_layer)));
    const size_t words = layer_words * size_t(n_layer);
    std::unique_ptr<uint64_t[]> buffer(new uint64_t[words]);
    advise_huge_pages(buffer.get(), words * 8);
    for (size_t i = 0; i < words; ++i) buffer[i] = i;  // touch every page before timing

    // Each pass draws fresh active sets, as each token does.
    std::mt19937_64 rng(42);
    std::bernoulli_distribution active(t.active_share);
    const auto passes = static_cast<size_t>(reps);
    using LayerSets = std::vector<std::vector<int32_t>>;
    std::vector<LayerSets> sets(passes, LayerSets(static_cast<size_t>(n_layer)));
    std::vector<double> row_bytes(passes);
    for (size_t r = 0; r < sets.size(); ++r)
        for (auto& layer : sets[r]) {
            for (int32_t i = 0; i < t.n_ff; ++i)
                if (active(rng)) layer.push_back(i);
            row_bytes[r] += double(layer.size()) * double(t.ffn_matrices) * double(row_words * 8);
        }

    std::vector<double> stream_s(passes), rows_s(passes);
    SpinBarrier barrier(n_threads);
    std::atomic<uint64_t> sink{0};
    auto work = [&](int th) {
        uint64_t sum = 0;
        for (int r = 0; r < reps; ++r) {
            double stream = 0, rows = 0;
            for (int32_t il = 0; il < n_layer; ++il) {
                const uint64_t* layer = buffer.get() + size_t(il) * layer_words;
                barrier.arrive_and_wait();
                const auto start = std::chrono::steady_clock::now();
                const size_t d0 = dense_words * size_t(th) / size_t(n_threads);
                const size_t d1 = dense_words * size_t(th + 1) / size_t(n_threads);
                sum += sum_words(layer + d0, d1 - d0);
                barrier.arrive_and_wait();
                const auto streamed = std::chrono::steady_clock::now();
                const std::vector<int32_t>& ids = sets[size_t(r)][size_t(il)];
                const size_t i0 = ids.size() * size_t(th) / size_t(n_threads);
                const size_t i1 = ids.size() * size_t(th + 1) / size_t(n_threads);
                const auto row = [&](size_t i, int32_t m) {
                    return layer + dense_words + size_t(m) * matrix_words + size_t(ids[i]) * row_words;
                };
                for (size_t i = i0; i < i1; ++i) {
                    if (i + 1 < i1)
                        for (int32_t m = 0; m < t.ffn_matrices; ++m)
                            for (size_t w = 0; w < row_words; w += 8) ember::prefetch(row(i + 1, m) + w);
                    for (int32_t m = 0; m < t.ffn_matrices; ++m) sum += sum_words(row(i, m), row_words);
                }
                barrier.arrive_and_wait();
                const auto done = std::chrono::steady_clock::now();
                stream += std::chrono::duration<double>(streamed - start).count();
                rows += std::chrono::duration<double>(done - streamed).count();
            }
            if (th == 0) stream_s[size_t(r)] = stream, rows_s[size_t(r)] = rows;
        }
        sink += sum;
    };
    std::vector<std::thread> threads;
    for (int th = 1; th < n_threads; ++th) threads.emplace_back(work, th);
    work(0);
    for (auto& th : threads) th.join();

    const double dense_bytes = double(dense_words * 8) * double(n_layer);
    std::vector<double> stream_rates, rows_rates, token_rates;
    for (size_t r = 0; r < passes; ++r) {
        stream_rates.push_back(dense_bytes / stream_s[r] / 1e9);
        rows_rates.push_back(rows_s[r] > 0 ? row_bytes[r] / rows_s[r] / 1e9 : 0.0);
        token_rates.push_back((dense_bytes + row_bytes[r]) / (stream_s[r] + rows_s[r]) / 1e9);
    }
    return {median(stream_rates), median(rows_rates), median(token_rates)};
}

}  // namespace ember::tools
