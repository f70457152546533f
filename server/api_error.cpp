#include "server/api_error.h"

#include <nlohmann/json.hpp>

namespace ember::server {

ApiError bad_field(std::string param, std::string message) {
    ApiError e;
    e.message = param + ": " + message;
    e.param = std::move(param);
    return e;
}

std::string error_body(const ApiError& e) {
    using nlohmann::json;
    json err{{"message", e.message}, {"type", e.type}, {"param", e.param.empty() ? json(nullptr) : json(e.param)},
             {"code", e.code.empty() ? json(nullptr) : json(e.code)}};
    return json{{"error", err}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace ember::server
