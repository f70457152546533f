#pragma once
// A histogram of activation magnitudes on a logarithmic scale, from which a calibration reads
// the magnitude below which a given share of the values lies. Bin 0 holds everything below
// 2^kLog2Min (zeros included); bin k ≥ 1 the magnitudes in [2^(kLog2Min + (k-1)/kBinsPerOctave),
// 2^(kLog2Min + k/kBinsPerOctave)), the last bin also everything above. 16 bins per octave put a
// quantile within 4.4 % of its true magnitude.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::sparse {

struct MagnitudeHistogram {
    static constexpr int32_t kLog2Min = -24;
    static constexpr int32_t kOctaves = 40;
    static constexpr int32_t kBinsPerOctave = 16;
    static constexpr int32_t kBins = 1 + kOctaves * kBinsPerOctave;

    std::vector<double> counts = std::vector<double>(kBins, 0.0);

    // The bin |value| falls in (NaN: bin 0). From the float's exponent and a table of where each
    // bin starts within an octave, not a logarithm: calibration adds every activation of every
    // layer.
    static int32_t bin(float value);
    void add(float value) { counts[size_t(bin(value))] += 1.0; }
    void add(const float* values, int64_t n) {
        for (int64_t i = 0; i < n; ++i) add(values[i]);
    }
    double total() const;
    // The magnitude t below which a share q (0..1) of the values lies, interpolated
    // geometrically within its bin; 0 when that share is reached in bin 0.
    float quantile(double q) const;
    // The share of Σ value² that the smallest share q of the values carry, each bin's values
    // taken at its geometric middle (bin 0's as 0) and a share of a bin as that share of its
    // energy. What skipping the values below quantile(q) removes, relative to all of them.
    double energy_below(double q) const;
};

}  // namespace ember::sparse
