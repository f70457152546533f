#include "app/store/migrations.h"

#include "app/store/db.h"
#include "app/store/store_error.h"
#include "app/store/transaction.h"

#include <QCoreApplication>
#include <QString>

namespace ember::store {

int schemaVersion(Db& db) {
    auto q = db.query("PRAGMA user_version");
    return q->step() ? int(q->columnInt(0)) : 0;
}

void refuseNewerSchema(Db& db, int latest) {
    const int found = schemaVersion(db);
    if (found > latest)
        throw StoreError(QCoreApplication::translate("ChatStore",
                                                     "the database has schema version %1, newer than the %2 this "
                                                     "version of Ember knows; it was left untouched (use the newer "
                                                     "Ember, or another --data-dir)")
                             .arg(found)
                             .arg(latest));
}

void migrate(Db& db, std::span<const Migration> steps) {
    // Looked at without a lock first, so opening an up-to-date file takes no write lock.
    const int found = schemaVersion(db);
    for (qsizetype i = 0; i < qsizetype(steps.size()); ++i) {
        const Migration& step = steps[i];
        Q_ASSERT(step.version == i + 1);
        if (step.version <= found)
            continue;
        Transaction transaction(db);
        // Read under the write lock: another connection may have run this step since we looked.
        if (schemaVersion(db) >= step.version)
            continue;
        try {
            step.apply(db);
        } catch (const StoreError& e) {
            throw StoreError(
                QStringLiteral("migration to schema version %1 failed: %2").arg(step.version).arg(e.message()));
        }
        // PRAGMA takes no bound values; the number comes from the code, not from input.
        db.exec(QStringLiteral("PRAGMA user_version = %1").arg(step.version).toUtf8().constData());
        transaction.commit();
    }
}

}  // namespace ember::store
