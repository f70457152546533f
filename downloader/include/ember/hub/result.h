#pragma once
// Errors as values at the downloader's public boundary, in the same shape as the engine's
// ember::Result; the downloader keeps its own copy so it never depends on the engine.

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace ember::hub {

// What a refusal from the Hub means, for callers that word it their own way (the app points at
// its token field where the command line names HF_TOKEN).
enum class ErrorKind { Other, Gated, NotFound, AccessRefused };

struct Error {
    Error() = default;
    Error(std::string message_, ErrorKind kind_ = ErrorKind::Other, std::string subject_ = {})
        : message(std::move(message_)), kind(kind_), subject(std::move(subject_)) {}

    std::string message;  // names the URL, file or field and the bad value
    ErrorKind kind = ErrorKind::Other;
    std::string subject;  // Gated/NotFound/AccessRefused: the repo (or repo/file) refused
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

}  // namespace ember::hub
