#pragma once
// What ChatStore hands back: a value, or an error message that names the database file and the
// operation. Callers (controllers on the GUI thread) never see an exception.

#include <QString>

#include <optional>
#include <utility>
#include <variant>

namespace ember::store {

struct Failure {
    QString message;
};

template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_state(std::in_place_index<0>, std::move(value)) {}
    Result(Failure failure) : m_state(std::in_place_index<1>, std::move(failure)) {}

    bool ok() const { return m_state.index() == 0; }
    explicit operator bool() const { return ok(); }
    // Only valid when ok(); reading the value of a failure throws std::bad_variant_access.
    const T& value() const& { return std::get<0>(m_state); }
    T& value() & { return std::get<0>(m_state); }
    T&& value() && { return std::get<0>(std::move(m_state)); }
    const T* operator->() const { return &value(); }
    QString error() const { return ok() ? QString() : std::get<1>(m_state).message; }

private:
    std::variant<T, Failure> m_state;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Failure failure) : m_error(std::move(failure.message)) {}

    bool ok() const { return !m_error; }
    explicit operator bool() const { return ok(); }
    QString error() const { return m_error.value_or(QString()); }

private:
    std::optional<QString> m_error;
};

}  // namespace ember::store
