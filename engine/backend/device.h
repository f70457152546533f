#pragma once
// The one seam between the engine and an accelerator (architecture.md, "Devices"): a device
// holds the hot FFN neurons of each layer and computes them, while the CPU computes the cold
// ones; it also holds and multiplies the dense matrices the placement gives it (attention,
// predictors, the LM head). It is two halves: DeviceMemory, what it holds (the placement's
// side), and DeviceStream, the work queued on it (the executor's side).
// Device memory never leaves this folder; the engine asks through this interface only.

#include <cstdint>
#include <memory>

#include "backend/device_memory.h"
#include "backend/device_stream.h"
#include "tensor/thread_pool.h"

namespace ember::backend {

class Device : public DeviceMemory, public DeviceStream {
protected:
    explicit Device(uint64_t budget_bytes) : DeviceMemory(budget_bytes) {}
};

// A host-memory stand-in with a byte budget: keeps its own copies of the hot rows, refuses
// allocations past the footprint and footprints past the budget, counts traffic, and computes the hot FFN half with the CPU
// kernels on its own thread, concurrently with the CPU's half as a GPU would. Dense matrices
// are read in place (the model's weights are immutable and outlive the session) but counted
// as held and uploaded; their products run on `pool` (the session's, which must outlive the
// device; null: one thread of its own). It makes placement, re-planning, the join and the
// split view testable without a GPU.
std::unique_ptr<Device> make_sim_device(uint64_t budget_bytes, tensor::ThreadPool* pool = nullptr);

}  // namespace ember::backend
