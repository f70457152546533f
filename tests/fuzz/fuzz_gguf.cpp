// GGUF reader (header, metadata, tensor table): any input either opens, with every tensor's bytes
// inside the file, or is refused with EngineError; nothing else may escape.
#include <cstdint>

#include "common/error.h"
#include "fuzz_support.h"
#include "gguf/gguf_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const ember::fuzz::MemoryFile input(data, size, "fuzz.gguf");
    std::unique_ptr<ember::gguf::File> file;
    try {
        file = ember::gguf::File::open(input.path());
    } catch (const ember::EngineError&) {
        return 0;
    }
    for (const auto& [key, value] : file->metadata()) {
        // Every typed getter either converts or refuses with EngineError naming the key.
        try { (void)file->get_uint(key); } catch (const ember::EngineError&) {}
        try { (void)file->get_int(key); } catch (const ember::EngineError&) {}
        try { (void)file->get_float(key); } catch (const ember::EngineError&) {}
        try { (void)file->get_bool(key); } catch (const ember::EngineError&) {}
        try { (void)file->get_string(key); } catch (const ember::EngineError&) {}
        try { (void)file->get_array(key); } catch (const ember::EngineError&) {}
        if (file->find(key) == nullptr) ember::fuzz::fail("a listed key is not found");
    }
    for (const auto& tensor : file->tensors()) {
        if (file->find_tensor(tensor.name) == nullptr) ember::fuzz::fail("a listed tensor is not found");
        if (tensor.nbytes == 0) continue;
        // The tensor's bytes must lie inside the mapping; ASan flags a read outside it.
        volatile uint8_t first = tensor.data[0];
        volatile uint8_t last = tensor.data[tensor.nbytes - 1];
        (void)first;
        (void)last;
        if (tensor.offset > file->file_size() - file->data_offset() ||
            tensor.nbytes > file->file_size() - file->data_offset() - tensor.offset)
            ember::fuzz::fail("tensor data ends past the end of the file");
    }
    return 0;
}
