#include "sparse/magnitude_histogram.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <numeric>
#include <vector>

namespace ember::sparse {
namespace {

constexpr int32_t kMantissaBits = 23;
constexpr uint32_t kInfinityBits = 0x7f800000u;
constexpr uint32_t kMinBits = uint32_t(127 + MagnitudeHistogram::kLog2Min) << kMantissaBits;  // 2^kLog2Min
constexpr int32_t kSlotBits = 8;

// Bin j of an octave starts where the mantissa 1.f reaches 2^(j/kBinsPerOctave). A slot (the top
// kSlotBits of the mantissa, 0.4 % of an octave) holds at most one such start, as a bin spans
// 4.4 %: the slot gives the bin its first mantissa falls in, and the mantissa at which the next
// begins (past the slot when none does).
struct OctaveBins {
    std::array<uint8_t, 1 << kSlotBits> first{};
    std::array<uint32_t, 1 << kSlotBits> next{};

    OctaveBins() {
        constexpr int32_t n = MagnitudeHistogram::kBinsPerOctave;
        std::array<uint32_t, n + 1> start{};  // the smallest mantissa of each bin; start[n]: past the octave
        for (int32_t j = 0; j <= n; ++j)
            start[size_t(j)] = uint32_t(std::ceil((std::exp2(double(j) / n) - 1.0) * double(1u << kMantissaBits)));
        for (uint32_t s = 0; s < first.size(); ++s) {
            const uint32_t lo = s << (kMantissaBits - kSlotBits);
            int32_t j = 0;
            while (j + 1 < n && start[size_t(j + 1)] <= lo) ++j;
            first[s] = uint8_t(j);
            next[s] = start[size_t(j + 1)];
        }
    }
};

double lower_edge(int32_t bin) {
    return bin == 0 ? 0.0 : std::exp2(MagnitudeHistogram::kLog2Min + double(bin - 1) / MagnitudeHistogram::kBinsPerOctave);
}

}  // namespace

int32_t MagnitudeHistogram::bin(float value) {
    static const OctaveBins octave_bins;
    const uint32_t bits = std::bit_cast<uint32_t>(value) & 0x7fffffffu;
    if (bits > kInfinityBits || bits < kMinBits) return 0;
    if (bits == kInfinityBits) return kBins - 1;
    const int32_t octave = int32_t(bits >> kMantissaBits) - 127 - kLog2Min;
    const uint32_t mantissa = bits & ((1u << kMantissaBits) - 1);
    const uint32_t slot = mantissa >> (kMantissaBits - kSlotBits);
    const int32_t within = octave_bins.first[slot] + (mantissa >= octave_bins.next[slot] ? 1 : 0);
    return 1 + std::min(octave * kBinsPerOctave + within, kBins - 2);
}

double MagnitudeHistogram::total() const { return std::accumulate(counts.begin(), counts.end(), 0.0); }

float MagnitudeHistogram::quantile(double q) const {
    const double target = std::clamp(q, 0.0, 1.0) * total();
    double below = 0.0;
    for (int32_t bin = 0; bin < kBins; ++bin) {
        const double c = counts[size_t(bin)];
        if (below + c < target || c == 0.0) {
            below += c;
            continue;
        }
        if (bin == 0) return 0.0f;
        const double lo = lower_edge(bin), hi = lower_edge(bin + 1);
        return float(lo * std::pow(hi / lo, (target - below) / c));
    }
    return float(lower_edge(kBins));
}

double MagnitudeHistogram::energy_below(double q) const {
    // middle² of each bin: lower_edge(bin) · lower_edge(bin + 1)
    static const std::vector<double> squares = [] {
        std::vector<double> s(size_t(kBins), 0.0);
        for (int32_t bin = 1; bin < kBins; ++bin) s[size_t(bin)] = lower_edge(bin) * lower_edge(bin + 1);
        return s;
    }();
    double all = 0.0;
    for (int32_t bin = 1; bin < kBins; ++bin) all += counts[size_t(bin)] * squares[size_t(bin)];
    if (all == 0.0) return 0.0;
    const double target = std::clamp(q, 0.0, 1.0) * total();
    double below = 0.0, energy = 0.0;
    for (int32_t bin = 0; bin < kBins && below < target; ++bin) {
        const double taken = std::min(counts[size_t(bin)], target - below);
        energy += taken * squares[size_t(bin)];
        below += taken;
    }
    return energy / all;
}

}  // namespace ember::sparse
