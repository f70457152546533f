#include "sparse/layer_allocation.h"

#include <algorithm>
#include <cmath>

namespace ember::sparse {
namespace {

// The allocation's step: one layer's share rises by this much at a time.
constexpr double kStep = 0.005;
// Costs this close, relative to the larger, are a tie: a step of a float cost curve carries
// rounding of about 1e-5 of its cost.
constexpr double kTie = 1e-4;

}  // namespace

std::vector<float> layer_levels(const SparsityCalibration& c, float level, SparsityAllocation allocation) {
    const size_t n_layer = c.layers.size();
    if (allocation == SparsityAllocation::Uniform || n_layer == 0 || level <= 0.0f)
        return std::vector<float>(n_layer, level);
    const double top = c.levels.back();
    // Per layer: its share, the energy its skipped neurons carry, and the cost of its next rise
    // per unit of share.
    std::vector<double> share(n_layer, 0.0), energy(n_layer, 0.0), next(n_layer, 0.0), cost(n_layer, 0.0);
    const auto energy_at = [&](size_t il, double s) {
        return allocation == SparsityAllocation::Measured
                   ? double(layer_cost_at(c, int32_t(il), float(s)))
                   : c.layers[il].histograms[size_t(SparsitySite::FfnAct)].energy_below(s);
    };
    const auto rise = [&](size_t il, double remaining) { return std::min({kStep, remaining, top - share[il]}); };
    double remaining = double(level) * double(n_layer);
    const auto price = [&](size_t il) {
        const double r = rise(il, remaining);
        next[il] = energy_at(il, share[il] + r);
        cost[il] = r > 0.0 ? (next[il] - energy[il]) / r : 0.0;
    };
    for (size_t il = 0; il < n_layer; ++il) price(il);
    while (remaining > 1e-9) {
        // The cheapest rise; among equal costs (a ReLU model's exact zeros cost none, layers
        // measured alike cost the same but for rounding) the layer that skips least, so ties
        // spread evenly.
        size_t best = n_layer;
        for (size_t il = 0; il < n_layer; ++il) {
            if (share[il] >= top) continue;
            if (best == n_layer) {
                best = il;
                continue;
            }
            const double tolerance = kTie * std::max(std::fabs(cost[il]), std::fabs(cost[best]));
            if (cost[il] < cost[best] - tolerance || (cost[il] <= cost[best] + tolerance && share[il] < share[best])) best = il;
        }
        if (best == n_layer) break;
        const double step = rise(best, remaining);
        share[best] += step;
        remaining -= step;
        energy[best] = next[best];
        price(best);
    }
    return std::vector<float>(share.begin(), share.end());
}

}  // namespace ember::sparse
