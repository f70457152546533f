#pragma once
// Inside the engine errors are thrown as EngineError and caught at the public API
// (Model::load, Session), which turns them into ember::Error values.

#include <stdexcept>
#include <string>

#include "ember/result.h"

namespace ember {

class EngineError : public std::runtime_error {
public:
    explicit EngineError(const std::string& message, ErrorCode code = ErrorCode::Failed)
        : std::runtime_error(message), code_(code) {}
    ErrorCode code() const { return code_; }
    Error error() const { return Error{what(), code_}; }

private:
    ErrorCode code_;
};

[[noreturn]] inline void fail(const std::string& message, ErrorCode code = ErrorCode::Failed) {
    throw EngineError(message, code);
}

}  // namespace ember
