#pragma once
// PowerInfer's activation statistics (docs/FORMATS.md §6): `activation/activation_N.pt`,
// one torch.save'd 1-D tensor per layer holding a "hotness" score per FFN neuron. Read
// without Python: a stored-zip directory (zip_reader.h), a restricted pickle machine that
// executes nothing (pickle_vm.h), then the raw storage bytes, byte-swapped when the archive's
// `byteorder` member says "big". Errors throw EngineError naming the file and the problem.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ember::sparse {

// Upper bound on the elements of one vector (1 GiB of doubles); n_ff is ~10^4 in practice.
constexpr int64_t kMaxTorchVectorElements = int64_t(1) << 27;
// Upper bound on n_layer for read_activation_dir.
constexpr int32_t kMaxActivationLayers = 4096;

// One torch.save'd 1-D tensor (Float, Double, Half, BFloat16, Long, Int, Short, Char, Byte or
// Bool storage; any storage offset; contiguous), converted to double.
std::vector<double> read_torch_vector(const std::string& path);

// The same on bytes already in memory; `name` stands for the file in error messages.
std::vector<double> parse_torch_vector(std::span<const uint8_t> bytes, const std::string& name);

// <dir>/activation_0.pt ... activation_{n_layer-1}.pt in NUMERIC layer order: element il is
// layer il, read from activation_<il>.pt (PowerInfer's exporter pairs files sorted as
// strings with layers, a bug, §6.1; Ember does not). Each file must hold exactly n_ff finite
// non-negative values. Files for layers >= n_layer are not read.
std::vector<std::vector<double>> read_activation_dir(const std::string& dir, int32_t n_layer, int64_t n_ff);

}  // namespace ember::sparse
