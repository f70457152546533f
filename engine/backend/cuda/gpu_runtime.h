#pragma once
// The one vendor header: the CUDA sources in this folder build for AMD GPUs with hipcc through
// these names. Nothing outside engine/backend/cuda/ includes it. The .cpp files are host code for
// the ordinary C++ compiler (runtime API only); the .cu files hold the kernels.

#if defined(EMBER_GPU_HOST)
// The tests' host stand-in (tests/engine/gpu_host/): this code runs in CI without a GPU.
#include "gpu_runtime_host.h"
#elif defined(EMBER_HIP)
#include <hip/hip_runtime_api.h>
#define EMBER_GPU_API "HIP"
using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
using gpuEvent_t = hipEvent_t;
using gpuDeviceProp = hipDeviceProp_t;
constexpr gpuError_t gpuSuccess = hipSuccess;
constexpr gpuError_t gpuErrorNoDevice = hipErrorNoDevice;
constexpr gpuError_t gpuErrorInsufficientDriver = hipErrorInsufficientDriver;
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuSetDevice hipSetDevice
#define gpuMemGetInfo hipMemGetInfo
#define gpuDriverGetVersion hipDriverGetVersion
#define gpuRuntimeGetVersion hipRuntimeGetVersion
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuHostAlloc(p, n) hipHostMalloc(p, n, hipHostMallocDefault)
#define gpuFreeHost hipHostFree
#define gpuMemcpy hipMemcpy
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#else
#include <cuda_runtime_api.h>
#define EMBER_GPU_API "CUDA"
using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
using gpuEvent_t = cudaEvent_t;
using gpuDeviceProp = cudaDeviceProp;
constexpr gpuError_t gpuSuccess = cudaSuccess;
constexpr gpuError_t gpuErrorNoDevice = cudaErrorNoDevice;
constexpr gpuError_t gpuErrorInsufficientDriver = cudaErrorInsufficientDriver;
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuSetDevice cudaSetDevice
#define gpuMemGetInfo cudaMemGetInfo
#define gpuDriverGetVersion cudaDriverGetVersion
#define gpuRuntimeGetVersion cudaRuntimeGetVersion
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuHostAlloc(p, n) cudaMallocHost(p, n)
#define gpuFreeHost cudaFreeHost
#define gpuMemcpy cudaMemcpy
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#endif

namespace ember::backend::gpu {

// Throws EngineError naming the call and the runtime's reason when `e` is an error.
void check(gpuError_t e, const char* what);

}  // namespace ember::backend::gpu
