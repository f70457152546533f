#include "sparse/magnitude_histogram.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ember::sparse {
namespace {

double lower_edge(int32_t bin) {
    return bin == 0 ? 0.0 : std::exp2(MagnitudeHistogram::kLog2Min + double(bin - 1) / MagnitudeHistogram::kBinsPerOctave);
}

}  // namespace

void MagnitudeHistogram::add(float value) {
    const float m = std::fabs(value);
    int32_t bin = 0;
    if (m >= std::exp2f(float(kLog2Min))) {
        const double k = (std::log2(double(m)) - kLog2Min) * kBinsPerOctave;
        bin = std::isfinite(k) ? 1 + int32_t(std::min(k, double(kBins - 2))) : kBins - 1;
    }
    counts[size_t(bin)] += 1.0;
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

}  // namespace ember::sparse
