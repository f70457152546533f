#pragma once
// The one error type inside the store. It never leaves the module: ChatStore catches it at its
// public edge (store_guard.h) and hands back a Result naming the database file and the operation.

#include <QString>

#include <stdexcept>

namespace ember::store {

class StoreError : public std::runtime_error {
public:
    explicit StoreError(const QString& message) : std::runtime_error(message.toStdString()) {}
    QString message() const { return QString::fromStdString(what()); }
};

}  // namespace ember::store
