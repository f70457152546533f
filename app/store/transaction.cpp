#include "app/store/transaction.h"

#include "app/store/db.h"
#include "app/store/store_error.h"

namespace ember::store {

Transaction::Transaction(Db& db, Mode mode) : m_db(db) {
    m_db.query(mode == Mode::Immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")->step();
}

Transaction::~Transaction() {
    // Some errors (disk full, I/O) make SQLite roll back by itself; a second ROLLBACK would fail.
    if (m_committed || !m_db.inTransaction())
        return;
    try {
        m_db.query("ROLLBACK")->step();
    } catch (const StoreError&) {
        // Nothing better to do in a destructor: the connection reports the failure on its next use.
    }
}

void Transaction::commit() {
    m_db.query("COMMIT")->step();
    m_committed = true;
}

}  // namespace ember::store
