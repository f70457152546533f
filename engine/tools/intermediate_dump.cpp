#include "tools/intermediate_dump.h"

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/utf8_path.h"
#include "tools/arg_parse.h"

namespace ember::tools {
namespace {

[[noreturn]] void write_failed(const std::filesystem::path& path) {
    std::fprintf(stderr, "ember-cli: --dump: cannot write '%s'\n", utf8_string(path).c_str());
    std::exit(1);
}

void write_tensor(const std::string& dir, const Intermediate& t) {
    static_assert(std::endian::native == std::endian::little, "dumps are written as little-endian floats");
    const std::string layer = t.layer < 0 ? "out" : std::to_string(t.layer);
    const std::filesystem::path base =
        utf8_path(dir) / utf8_path(std::string(t.name) + "-" + layer + "-" + std::to_string(t.pos0));
    std::error_code ec;
    std::filesystem::create_directories(utf8_path(dir), ec);
    std::filesystem::path data = base, meta = base;
    data += ".f32";
    meta += ".json";
    std::ofstream out(data, std::ios::binary);
    out.write(reinterpret_cast<const char*>(t.data), std::streamsize(t.n_tokens * t.n_cols * sizeof(float)));
    if (!out) write_failed(data);
    std::ofstream json(meta);
    json << "{\"name\": \"" << t.name << "\", \"layer\": " << t.layer << ", \"positions\": [" << t.pos0 << ", "
         << t.pos0 + t.n_tokens << "], \"shape\": [" << t.n_tokens << ", " << t.n_cols << "], \"dtype\": \"f32\"}\n";
    if (!json) write_failed(meta);
}

}  // namespace

DumpRequest parse_dump(const std::string& spec, const std::string& dir) {
    DumpRequest r;
    r.dir = dir;
    const size_t at = spec.find('@');
    r.name = spec.substr(0, at);
    if (r.name.empty()) throw UsageError("--dump: '" + spec + "' names no intermediate (NAME or NAME@LAYER)");
    if (at != std::string::npos) r.layer = int32_t(parse_int("--dump " + spec, spec.substr(at + 1), 0, 1 << 20));
    return r;
}

IntermediateCallback dump_writer(std::vector<DumpRequest> requests) {
    return [requests = std::move(requests)](const Intermediate& t) {
        for (const DumpRequest& r : requests)
            if (r.name == t.name && (!r.layer || *r.layer == t.layer)) write_tensor(r.dir, t);
    };
}

}  // namespace ember::tools
