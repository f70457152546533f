#pragma once
// ChatStore's public edge: runs a body that may throw StoreError and turns the exception into a
// Result whose message names the database file and the operation.

#include "app/store/result.h"
#include "app/store/store_error.h"

#include <type_traits>

namespace ember::store {

template <typename Body>
auto guarded(const QString& path, const QString& operation, Body&& body)
    -> Result<std::invoke_result_t<Body&>> {
    try {
        if constexpr (std::is_void_v<std::invoke_result_t<Body&>>) {
            body();
            return {};
        } else {
            return body();
        }
    } catch (const StoreError& e) {
        return Failure{QStringLiteral("%1: %2: %3").arg(path, operation, e.message())};
    }
}

}  // namespace ember::store
