#pragma once
// Memory from the GPU runtime, freed with its owner: on the device, or page-locked on the host
// (copies from and to pinned memory run asynchronously on a stream).

#include <cstddef>
#include <cstdint>
#include <utility>

#include "backend/cuda/gpu_runtime.h"

namespace ember::backend::gpu {

enum class Where { Device, Pinned };

template <Where W>
class Buffer {
public:
    Buffer() = default;
    explicit Buffer(size_t bytes) : bytes_(bytes) {
        if (!bytes) return;
        if constexpr (W == Where::Device) check(gpuMalloc(reinterpret_cast<void**>(&data_), bytes), "allocating device memory");
        else check(gpuHostAlloc(reinterpret_cast<void**>(&data_), bytes), "allocating pinned host memory");
    }
    Buffer(Buffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    Buffer& operator=(Buffer&& o) noexcept {
        std::swap(data_, o.data_);
        std::swap(bytes_, o.bytes_);
        return *this;
    }
    ~Buffer() {
        if (!data_) return;
        if constexpr (W == Where::Device) (void)gpuFree(data_);
        else (void)gpuFreeHost(data_);
    }
    uint8_t* data() const { return data_; }
    size_t bytes() const { return bytes_; }
    template <class T>
    T* as() const { return reinterpret_cast<T*>(data_); }

private:
    uint8_t* data_ = nullptr;
    size_t bytes_ = 0;
};
using DeviceBuffer = Buffer<Where::Device>;
using PinnedBuffer = Buffer<Where::Pinned>;

}  // namespace ember::backend::gpu
