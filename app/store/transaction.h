#pragma once
// A transaction on scope: committed by commit(), rolled back otherwise (an exception on the way
// out included), so a failed operation leaves nothing half-written.

namespace ember::store {

class Db;

class Transaction {
public:
    enum class Mode {
        Deferred,   // reads: one consistent snapshot, no lock taken until needed
        Immediate,  // writes: takes the write lock at BEGIN, so it cannot deadlock upgrading later
    };

    explicit Transaction(Db& db, Mode mode = Mode::Immediate);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;

    void commit();

private:
    Db& m_db;
    bool m_committed = false;
};

}  // namespace ember::store
