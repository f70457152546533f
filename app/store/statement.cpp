#include "app/store/statement.h"

#include "app/store/store_error.h"

#include <sqlite3.h>

namespace ember::store {

void Statement::Finalizer::operator()(sqlite3_stmt* statement) const {
    sqlite3_finalize(statement);
}

Statement::Statement(sqlite3* db, std::string_view sql) : m_db(db), m_sql(sql) {
    sqlite3_stmt* raw = nullptr;
    // PERSISTENT: the statement lives as long as the connection, so SQLite may keep it in
    // longer-lived memory.
    const int code = sqlite3_prepare_v3(db, m_sql.data(), int(m_sql.size()), SQLITE_PREPARE_PERSISTENT,
                                        &raw, nullptr);
    m_statement.reset(raw);
    if (code != SQLITE_OK)
        fail(QStringLiteral("prepare"), code);
}

void Statement::fail(const QString& action, int code) const {
    throw StoreError(QStringLiteral("%1 failed: %2 (SQLite code %3) in: %4")
                         .arg(action, QString::fromUtf8(sqlite3_errmsg(m_db)),
                              QString::number(code), sqlForMessage(m_sql)));
}

void Statement::checkBind(int index, int code) const {
    if (code != SQLITE_OK)
        fail(QStringLiteral("bind ?%1").arg(index), code);
}

void Statement::bindInt(int index, qint64 value) {
    checkBind(index, sqlite3_bind_int64(m_statement.get(), index, value));
}

void Statement::bindInt(int index, std::optional<qint64> value) {
    value ? bindInt(index, *value) : bindNull(index);
}

void Statement::bindReal(int index, double value) {
    checkBind(index, sqlite3_bind_double(m_statement.get(), index, value));
}

void Statement::bindReal(int index, std::optional<double> value) {
    value ? bindReal(index, *value) : bindNull(index);
}

void Statement::bindText(int index, const QString& value) {
    const QByteArray utf8 = value.toUtf8();
    // TRANSIENT: SQLite copies the bytes, since `utf8` dies before the statement runs.
    checkBind(index, sqlite3_bind_text64(m_statement.get(), index, utf8.constData(), sqlite3_uint64(utf8.size()),
                                         SQLITE_TRANSIENT, SQLITE_UTF8));
}

void Statement::bindNull(int index) {
    checkBind(index, sqlite3_bind_null(m_statement.get(), index));
}

bool Statement::step() {
    const int code = sqlite3_step(m_statement.get());
    if (code == SQLITE_ROW)
        return true;
    if (code == SQLITE_DONE)
        return false;
    fail(QStringLiteral("step"), code);
}

bool Statement::columnIsNull(int column) const {
    return sqlite3_column_type(m_statement.get(), column) == SQLITE_NULL;
}

qint64 Statement::columnInt(int column) const {
    return sqlite3_column_int64(m_statement.get(), column);
}

std::optional<qint64> Statement::columnOptionalInt(int column) const {
    return columnIsNull(column) ? std::nullopt : std::optional(columnInt(column));
}

double Statement::columnReal(int column) const {
    return sqlite3_column_double(m_statement.get(), column);
}

std::optional<double> Statement::columnOptionalReal(int column) const {
    return columnIsNull(column) ? std::nullopt : std::optional(columnReal(column));
}

QString Statement::columnText(int column) const {
    // Text first, then its length: sqlite3_column_bytes after sqlite3_column_text is the
    // documented order that measures the UTF-8 form.
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(m_statement.get(), column));
    return QString::fromUtf8(text, sqlite3_column_bytes(m_statement.get(), column));
}

void Statement::reset() noexcept {
    // The error code sqlite3_reset repeats was already thrown by step().
    sqlite3_reset(m_statement.get());
    sqlite3_clear_bindings(m_statement.get());
}

Query::Query(Statement& statement) : m_statement(statement) {
    // A cached statement has one cursor; a second use while the first is still reading would
    // silently reset it.
    if (statement.m_inUse)
        throw StoreError(QStringLiteral("statement used twice at once: %1").arg(sqlForMessage(statement.m_sql)));
    statement.m_inUse = true;
}

Query::~Query() {
    m_statement.reset();
    m_statement.m_inUse = false;
}

QString sqlForMessage(std::string_view sql) {
    constexpr qsizetype kMaxChars = 160;
    const QString text = QString::fromUtf8(sql.data(), qsizetype(sql.size())).simplified();
    return text.size() <= kMaxChars ? text : text.left(kMaxChars) + QStringLiteral("…");
}

}  // namespace ember::store
