#include "model/architecture.h"

#include <array>
#include <string_view>

#include "common/error.h"

namespace ember::model {
namespace {

struct Entry {
    std::string_view name;
    std::unique_ptr<Architecture> (*load)(const gguf::File&, const ModelParams&);
};

constexpr std::array<Entry, 3> kArchitectures{{
    {"llama", load_llama},
    {"bamboo", load_bamboo},
    {"falcon", load_falcon},
}};

}  // namespace

std::unique_ptr<Architecture> load_architecture(const gguf::File& file, const ModelParams& params) {
    auto arch = file.get_string("general.architecture");
    if (!arch) fail(file.path() + ": missing metadata key 'general.architecture'");
    for (const auto& e : kArchitectures)
        if (e.name == *arch) return e.load(file, params);
    std::string known;
    for (const auto& e : kArchitectures) known += (known.empty() ? "" : ", ") + std::string(e.name);
    fail(file.path() + ": general.architecture '" + *arch + "' is not supported (supported: " + known + ")");
}

}  // namespace ember::model
