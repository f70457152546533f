#include "app/store/db.h"

#include "app/store/store_error.h"

#include <sqlite3.h>

namespace ember::store {
namespace {
// Another connection (a worker's, or a second Ember) may hold the write lock for a moment;
// waiting this long is better than failing the user's action.
constexpr int kBusyTimeoutMs = 5000;
}  // namespace

void Db::Closer::operator()(sqlite3* db) const {
    sqlite3_close(db);
}

Db::Db(const QString& path) : m_path(path) {
    sqlite3* raw = nullptr;
    // NOMUTEX: a connection is never shared between threads, so SQLite's per-call locking is waste.
    const int code = sqlite3_open_v2(path.toUtf8().constData(), &raw,
                                     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    m_handle.reset(raw);
    if (code != SQLITE_OK) {
        const char* why = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(code);
        throw StoreError(QStringLiteral("cannot open the database: %1").arg(QString::fromUtf8(why)));
    }
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, kBusyTimeoutMs);
    // Connection settings only: neither reads nor writes the file, so a database this code must
    // refuse is still untouched.
    exec("PRAGMA foreign_keys = ON");
}

Db::~Db() = default;

void Db::exec(const char* sql) {
    char* error = nullptr;
    if (sqlite3_exec(m_handle.get(), sql, nullptr, nullptr, &error) != SQLITE_OK) {
        const QString why = QString::fromUtf8(error ? error : sqlite3_errmsg(m_handle.get()));
        sqlite3_free(error);
        throw StoreError(QStringLiteral("exec failed: %1 in: %2").arg(why, sqlForMessage(sql)));
    }
}

Query Db::query(std::string_view sql) {
    auto& slot = m_statements[std::string(sql)];
    if (!slot)
        slot = std::make_unique<Statement>(m_handle.get(), sql);
    return Query(*slot);
}

void Db::enableWal() {
    auto q = query("PRAGMA journal_mode = WAL");
    const QString mode = q->step() ? q->columnText(0) : QString();
    if (mode != QLatin1String("wal"))
        throw StoreError(QStringLiteral("SQLite kept journal mode '%1' instead of switching to WAL").arg(mode));
    // In WAL mode NORMAL loses no commit when the app is killed, only on power loss, and spares
    // an fsync per streaming update.
    exec("PRAGMA synchronous = NORMAL");
}

qint64 Db::lastInsertId() const {
    return sqlite3_last_insert_rowid(m_handle.get());
}

qint64 Db::changes() const {
    return sqlite3_changes64(m_handle.get());
}

bool Db::inTransaction() const {
    return !sqlite3_get_autocommit(m_handle.get());
}

}  // namespace ember::store
