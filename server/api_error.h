#pragma once
// Errors as the OpenAI API shapes them: an HTTP status and
// {"error": {"message", "type", "param", "code"}}, so clients show the message as it is.

#include <string>

namespace ember::server {

struct ApiError {
    int status = 400;
    std::string message;  // names the field or the request at fault
    std::string type = "invalid_request_error";
    std::string param;    // the request field, when one is at fault
    std::string code;     // e.g. "model_not_found", "context_length_exceeded"
};

ApiError bad_field(std::string param, std::string message);

// The JSON body for `e`.
std::string error_body(const ApiError& e);

}  // namespace ember::server
