#pragma once
// Errors as values at the engine's public boundary. Inside the engine, modules throw
// ember::EngineError; the public entry points catch it and hand back a Result.

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace ember {

// What a caller may act on; everything else is Failed, with the reason in the message.
enum class ErrorCode {
    Failed,
    ContextOverflow,  // the tokens do not fit in the session's free context cells
};

struct Error {
    std::string message;  // names the file, tensor or key and the bad value
    ErrorCode code = ErrorCode::Failed;
};

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}
    Result(Error error) : v_(std::move(error)) {}

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { assert(ok()); return std::get<0>(v_); }
    const T& value() const& { assert(ok()); return std::get<0>(v_); }
    T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
    T& operator*() & { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    const Error& error() const { assert(!ok()); return std::get<1>(v_); }

private:
    std::variant<T, Error> v_;
};

struct Ok {};
using Status = Result<Ok>;

}  // namespace ember
