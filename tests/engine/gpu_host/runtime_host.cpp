#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "gpu_runtime_host.h"

namespace {

std::mutex g_mutex;
uint64_t g_total = uint64_t(4) << 30;
uint64_t g_allocated = 0;
uint64_t g_device_copies = 0;
std::map<void*, size_t> g_blocks;

}  // namespace

struct HostStream {};
static HostStream g_stream;

namespace ember::backend::gpu_host {

void set_total_memory(uint64_t bytes) {
    std::lock_guard lock(g_mutex);
    g_total = bytes;
}
uint64_t allocated_memory() {
    std::lock_guard lock(g_mutex);
    return g_allocated;
}
uint64_t device_copies() {
    std::lock_guard lock(g_mutex);
    return g_device_copies;
}

}  // namespace ember::backend::gpu_host

gpuError_t gpuGetDeviceCount(int* count) {
    *count = 1;
    return gpuSuccess;
}
gpuError_t gpuGetDeviceProperties(gpuDeviceProp* p, int device) {
    if (device != 0) return gpuErrorInvalidValue;
    std::strcpy(p->name, "host stand-in GPU");
    p->major = 9;
    p->minor = 0;
    return gpuSuccess;
}
gpuError_t gpuSetDevice(int device) { return device == 0 ? gpuSuccess : gpuErrorInvalidValue; }
gpuError_t gpuMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
    std::lock_guard lock(g_mutex);
    *total_bytes = g_total;
    *free_bytes = g_total - g_allocated;
    return gpuSuccess;
}
gpuError_t gpuDriverGetVersion(int* v) {
    *v = 13000;
    return gpuSuccess;
}
gpuError_t gpuRuntimeGetVersion(int* v) {
    *v = 13000;
    return gpuSuccess;
}
const char* gpuGetErrorString(gpuError_t e) {
    switch (e) {
        case gpuSuccess: return "no error";
        case gpuErrorMemoryAllocation: return "out of memory";
        case gpuErrorNoDevice: return "no device";
        case gpuErrorInsufficientDriver: return "driver too old";
        default: return "invalid value";
    }
}
gpuError_t gpuGetLastError() { return gpuSuccess; }

gpuError_t gpuMalloc(void** p, size_t bytes) {
    std::lock_guard lock(g_mutex);
    if (bytes > g_total - g_allocated) return gpuErrorMemoryAllocation;
    *p = std::malloc(bytes);
    if (!*p) return gpuErrorMemoryAllocation;
    g_blocks[*p] = bytes;
    g_allocated += bytes;
    return gpuSuccess;
}
gpuError_t gpuFree(void* p) {
    std::lock_guard lock(g_mutex);
    auto it = g_blocks.find(p);
    if (it == g_blocks.end()) return gpuErrorInvalidValue;
    g_allocated -= it->second;
    g_blocks.erase(it);
    std::free(p);
    return gpuSuccess;
}
gpuError_t gpuHostAlloc(void** p, size_t bytes) {
    *p = std::malloc(bytes);
    return *p ? gpuSuccess : gpuErrorMemoryAllocation;
}
gpuError_t gpuFreeHost(void* p) {
    std::free(p);
    return gpuSuccess;
}
gpuError_t gpuMemcpy(void* dst, const void* src, size_t bytes, gpuMemcpyKind kind) {
    if (kind == gpuMemcpyDeviceToDevice) {
        std::lock_guard lock(g_mutex);
        ++g_device_copies;
    }
    std::memcpy(dst, src, bytes);  // overlapping ranges are the caller's bug, as on a GPU
    return gpuSuccess;
}
gpuError_t gpuMemcpyAsync(void* dst, const void* src, size_t bytes, gpuMemcpyKind kind, gpuStream_t) {
    return gpuMemcpy(dst, src, bytes, kind);
}
gpuError_t gpuStreamCreateWithFlags(gpuStream_t* s, unsigned) {
    *s = &g_stream;
    return gpuSuccess;
}
gpuError_t gpuStreamDestroy(gpuStream_t) { return gpuSuccess; }
gpuError_t gpuStreamSynchronize(gpuStream_t) { return gpuSuccess; }
