#pragma once
// One SQLite connection (RAII), opened read-write and created when missing, with busy_timeout
// and foreign_keys set. A connection belongs to one thread: the GUI thread and each worker open
// their own, as SQLite's WAL mode lets them read and write side by side.

#include "app/store/statement.h"

#include <QString>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

struct sqlite3;

namespace ember::store {

class Db {
public:
    explicit Db(const QString& path);
    ~Db();
    Db(const Db&) = delete;
    Db& operator=(const Db&) = delete;

    const QString& path() const { return m_path; }

    // Parameterless SQL, possibly several statements: schema steps and pragmas.
    void exec(const char* sql);
    // The statement for `sql`, prepared on first use and kept for the connection's life.
    Query query(std::string_view sql);
    // Switches the journal to WAL and checks SQLite agreed (it declines, for instance, where the
    // filesystem cannot share memory between processes).
    void enableWal();

    qint64 lastInsertId() const;
    // Rows changed by the last INSERT, UPDATE or DELETE.
    qint64 changes() const;
    bool inTransaction() const;

private:
    struct Closer {
        void operator()(sqlite3* db) const;
    };
    QString m_path;
    std::unique_ptr<sqlite3, Closer> m_handle;
    // After the handle, so the statements are finalized before the connection closes.
    std::unordered_map<std::string, std::unique_ptr<Statement>> m_statements;
};

}  // namespace ember::store
