#pragma once
// A prepared SQLite statement (RAII: finalized on destruction) and Query, the scoped use of one.
// Values are always bound by index, never spliced into SQL text.

#include <QString>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace ember::store {

class Statement {
public:
    Statement(sqlite3* db, std::string_view sql);
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    // Indexes are 1-based, as in SQL's ?1, ?2 ….
    void bindInt(int index, qint64 value);
    void bindInt(int index, std::optional<qint64> value);
    void bindReal(int index, double value);
    void bindReal(int index, std::optional<double> value);
    void bindText(int index, const QString& value);
    void bindNull(int index);

    // True while a row is ready; false when the statement is done. Every other outcome throws.
    bool step();

    // Columns are 0-based, as in sqlite3_column_*.
    bool columnIsNull(int column) const;
    qint64 columnInt(int column) const;
    std::optional<qint64> columnOptionalInt(int column) const;
    double columnReal(int column) const;
    std::optional<double> columnOptionalReal(int column) const;
    QString columnText(int column) const;

    // Back to the start with no values bound, ending any read the statement held open.
    void reset() noexcept;

private:
    friend class Query;
    struct Finalizer {
        void operator()(sqlite3_stmt* statement) const;
    };
    [[noreturn]] void fail(const QString& action, int code) const;
    void checkBind(int index, int code) const;

    sqlite3* m_db;
    std::string m_sql;
    std::unique_ptr<sqlite3_stmt, Finalizer> m_statement;
    bool m_inUse = false;
};

// One use of a cached Statement: reset on scope exit, so a statement left mid-result never keeps
// a read snapshot open (that would stall WAL checkpoints for every connection).
class Query {
public:
    explicit Query(Statement& statement);
    ~Query();
    Query(const Query&) = delete;
    Query& operator=(const Query&) = delete;

    Statement* operator->() const { return &m_statement; }
    Statement& operator*() const { return m_statement; }

private:
    Statement& m_statement;
};

// SQL shortened to one line for error messages. Bound values are never shown: they hold the
// user's chats, which do not belong in logs.
QString sqlForMessage(std::string_view sql);

}  // namespace ember::store
