#pragma once
// A host stand-in for the GPU runtime API (the names engine/backend/cuda/gpu_runtime.h maps),
// for tests only: device memory is host memory drawn from a fixed total, copies are memcpy, a
// stream runs everything at once. With kernels_host.cpp it lets the GPU device's host code
// (engine/backend/cuda/*.cpp: its arena, slots, staging and re-plans) run in CI, where no GPU
// is; the kernels' own arithmetic is checked by tst_gpu_kernel_math and on a real GPU by
// tst_backend_ops.

#include <cstddef>
#include <cstdint>

#define EMBER_GPU_API "host stand-in"

enum gpuError_t { gpuSuccess = 0, gpuErrorNoDevice, gpuErrorInsufficientDriver, gpuErrorMemoryAllocation, gpuErrorInvalidValue };
using gpuStream_t = struct HostStream*;
struct gpuDeviceProp {
    char name[256];
    int major;
    int minor;
};
enum gpuMemcpyKind { gpuMemcpyHostToDevice, gpuMemcpyDeviceToHost, gpuMemcpyDeviceToDevice };
constexpr unsigned gpuStreamNonBlocking = 1;

gpuError_t gpuGetDeviceCount(int* count);
gpuError_t gpuGetDeviceProperties(gpuDeviceProp* p, int device);
gpuError_t gpuSetDevice(int device);
gpuError_t gpuMemGetInfo(size_t* free_bytes, size_t* total_bytes);
gpuError_t gpuDriverGetVersion(int* v);
gpuError_t gpuRuntimeGetVersion(int* v);
const char* gpuGetErrorString(gpuError_t e);
gpuError_t gpuGetLastError();
gpuError_t gpuMalloc(void** p, size_t bytes);
gpuError_t gpuFree(void* p);
gpuError_t gpuHostAlloc(void** p, size_t bytes);
gpuError_t gpuFreeHost(void* p);
gpuError_t gpuMemcpy(void* dst, const void* src, size_t bytes, gpuMemcpyKind kind);
gpuError_t gpuMemcpyAsync(void* dst, const void* src, size_t bytes, gpuMemcpyKind kind, gpuStream_t stream);
gpuError_t gpuStreamCreateWithFlags(gpuStream_t* s, unsigned flags);
gpuError_t gpuStreamDestroy(gpuStream_t s);
gpuError_t gpuStreamSynchronize(gpuStream_t s);

namespace ember::backend::gpu_host {

// The stand-in's device memory: its total, and what gpuMalloc has handed out and not freed.
void set_total_memory(uint64_t bytes);
uint64_t allocated_memory();
// Device-to-device copies so far (a test tells a move within the GPU from a re-upload).
uint64_t device_copies();

}  // namespace ember::backend::gpu_host
