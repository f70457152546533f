#pragma once
// Inside the engine errors are thrown as EngineError and caught at the public API
// (Model::load, Session), which turns them into ember::Error values.

#include <stdexcept>
#include <string>

namespace ember {

class EngineError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const std::string& message) { throw EngineError(message); }

}  // namespace ember
