#pragma once
// What every kernel file (*.cu) starts with: the vendor's device runtime and fp16 intrinsics
// (the math headers' half conversions use them), and the launch arithmetic they share.

#if defined(EMBER_HIP)
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#else
#include <cuda_fp16.h>
#endif

#include <cstdint>

namespace ember::backend::gpu {

// Blocks of per_block threads (or items) that cover `items`.
inline unsigned blocks_for(int64_t items, int64_t per_block) { return unsigned((items + per_block - 1) / per_block); }

}  // namespace ember::backend::gpu
