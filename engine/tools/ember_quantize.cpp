// ember-quantize IN OUT Q4_0|Q8_0: llama.cpp's `quantize` for the types Ember computes with.
// Every 2-D tensor whose name ends in "weight" is quantized (token_embd, output and the
// PowerInfer predictor and ffn_down_t tensors included); 1-D tensors stay as they are. All
// metadata is copied, general.file_type is set, and a PowerInfer file keeps its PWRI magic.
#include <cstdio>
#include <string>
#include <vector>

#include "common/error.h"
#include "gguf/ggml_type.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "tensor/dtype.h"
#include "tensor/quantize.h"
#include "tensor/thread_pool.h"

namespace {

using namespace ember;

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Dequantizes each row of `t` to F32 and quantizes it to `target`, rows spread over the pool.
std::vector<uint8_t> quantize_tensor(const gguf::File& file, const gguf::TensorInfo& t, tensor::DType target,
                                     tensor::ThreadPool& pool) {
    const auto source = tensor::dtype_from_ggml(t.type);
    if (!source)
        fail(file.path() + ": tensor '" + t.name + "' has type " + gguf::ggml_type_name(t.type) +
             ", which ember-quantize cannot read");
    const int64_t n_cols = t.ne[0];
    const int64_t n_rows = t.nelements() / n_cols;
    const size_t in_row = tensor::row_bytes(*source, n_cols);
    const size_t out_row = tensor::row_bytes(target, n_cols);
    std::vector<uint8_t> out(out_row * size_t(n_rows));
    const int64_t rows_per_task = 64;
    std::vector<std::vector<float>> rows(size_t(pool.size()), std::vector<float>(size_t(n_cols)));
    pool.run((n_rows + rows_per_task - 1) / rows_per_task, [&](int64_t task, int thread) {
        std::vector<float>& row = rows[size_t(thread)];
        for (int64_t r = task * rows_per_task; r < std::min(n_rows, (task + 1) * rows_per_task); ++r) {
            tensor::dequantize_row(*source, t.data + size_t(r) * in_row, row.data(), n_cols);
            tensor::quantize_row(target, row.data(), out.data() + size_t(r) * out_row, n_cols);
        }
    });
    return out;
}

void quantize_file(const std::string& in_path, const std::string& out_path, tensor::DType target) {
    auto file = gguf::File::open(in_path);
    gguf::Writer w;
    for (const auto& [key, value] : file->metadata()) w.set(key, value);
    w.set("general.file_type", gguf::Value::u32(target == tensor::DType::Q4_0 ? 2 : 7));
    w.set("general.quantization_version", gguf::Value::u32(2));

    tensor::ThreadPool pool(tensor::default_thread_count());
    uint64_t bytes_in = 0, bytes_out = 0;
    for (const auto& t : file->tensors()) {
        bytes_in += t.nbytes;
        const bool quantize = ends_with(t.name, "weight") && t.ne.size() == 2 && t.type != uint32_t(target);
        if (quantize && t.ne[0] % tensor::block_size(target) != 0) {
            std::fprintf(stderr, "ember-quantize: %s: row length %lld is not a multiple of %lld, kept as %s\n",
                         t.name.c_str(), (long long)t.ne[0], (long long)tensor::block_size(target),
                         gguf::ggml_type_name(t.type).c_str());
        }
        if (quantize && t.ne[0] % tensor::block_size(target) == 0) {
            std::vector<uint8_t> q = quantize_tensor(*file, t, target, pool);
            bytes_out += q.size();
            w.add_tensor(t.name, t.ne, uint32_t(target), std::move(q));
        } else {
            bytes_out += t.nbytes;
            w.add_tensor(t.name, t.ne, t.type, std::span<const uint8_t>(t.data, t.nbytes));
        }
    }
    w.write(out_path, file->magic());
    std::fprintf(stderr, "ember-quantize: %s -> %s (%s): %.2f MiB -> %.2f MiB\n", in_path.c_str(), out_path.c_str(),
                 tensor::dtype_name(target), double(bytes_in) / (1 << 20), double(bytes_out) / (1 << 20));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: ember-quantize IN.gguf OUT.gguf Q4_0|Q8_0\n");
        return 2;
    }
    const std::string type = argv[3];
    tensor::DType target;
    if (type == "Q4_0" || type == "q4_0") target = tensor::DType::Q4_0;
    else if (type == "Q8_0" || type == "q8_0") target = tensor::DType::Q8_0;
    else {
        std::fprintf(stderr, "ember-quantize: type '%s' is not supported (Q4_0 or Q8_0)\n", type.c_str());
        return 2;
    }
    try {
        quantize_file(argv[1], argv[2], target);
    } catch (const EngineError& e) {
        std::fprintf(stderr, "ember-quantize: %s\n", e.what());
        return 1;
    }
    return 0;
}
