#pragma once
// A restricted pickle machine for the `data.pkl` member of a torch.save archive that holds
// one tensor (docs/FORMATS.md §6.3). It executes nothing: GLOBAL/STACK_GLOBAL are names
// checked against an allow-list (torch._utils._rebuild_tensor_v2, torch.<Type>Storage,
// collections.OrderedDict), BINPERSID turns torch's persistent id into a storage reference,
// and REDUCE is understood only for _rebuild_tensor_v2 and OrderedDict(). Stack, memo, marks,
// nesting and string lengths are bounded; any problem throws EngineError.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ember::sparse {

enum class StorageType { Float, Double, Half, BFloat16, Long, Int, Short, Char, Byte, Bool };

const char* storage_type_name(StorageType type);  // "FloatStorage", ...
size_t storage_element_size(StorageType type);    // bytes per element

// What `_rebuild_tensor_v2(storage, storage_offset, shape, stride, ...)` was asked to build.
// The machine checks the types and that sizes, strides and the offset are non-negative; the
// caller checks that they fit the storage.
struct TensorRecord {
    StorageType storage_type = StorageType::Float;
    std::string storage_key;      // names the member <prefix>data/<key>
    std::string location;         // "cpu", "cuda:0", ... (informational)
    int64_t storage_numel = 0;    // elements in the storage, as the persistent id says
    int64_t storage_offset = 0;   // in elements
    std::vector<int64_t> shape;   // [ndim]
    std::vector<int64_t> stride;  // [ndim], in elements
};

struct PickleLimits {
    size_t max_bytes = size_t(1) << 20;  // the whole pickle
    size_t max_stack = 1024;             // values on the stack
    size_t max_marks = 64;
    size_t max_memo = 1024;
    size_t max_string = 4096;            // bytes in one string
    int max_depth = 16;                  // tuple nesting
};

// Runs `pickle` and returns the tensor it describes. `what` prefixes every error message
// (e.g. "<file>: member 'p/data.pkl'"); messages name the opcode, its byte offset and the value.
TensorRecord run_tensor_pickle(std::span<const uint8_t> pickle, const std::string& what, const PickleLimits& limits = {});

}  // namespace ember::sparse
