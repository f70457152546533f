#include "tools/memory_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

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
    std::sort(rates.begin(), rates.end());
    return rates[rates.size() / 2];
}

}  // namespace ember::tools
