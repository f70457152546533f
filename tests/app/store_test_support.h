#pragma once
// Helpers shared by the chat history tests.

#include "app/store/result.h"

#include <QFile>
#include <QTest>

// Fails the test with the store's own error message unless `expr` succeeded.
#define STORE_CHECK(expr)                                          \
    do {                                                           \
        const auto storeCheckResult = (expr);                      \
        QVERIFY2(storeCheckResult.ok(), qPrintable(storeCheckResult.error())); \
    } while (false)

// Declares `var` as the value of a successful Result, or fails the test with its error.
#define STORE_TAKE(var, expr)                                      \
    auto var##Result = (expr);                                     \
    QVERIFY2(var##Result.ok(), qPrintable(var##Result.error()));   \
    auto var = std::move(var##Result).value()

inline QByteArray fileBytes(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}
