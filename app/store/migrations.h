#pragma once
// Numbered schema steps tracked in PRAGMA user_version. Step N runs in its own BEGIN IMMEDIATE
// transaction that also sets user_version = N, so a failing step leaves the file at N - 1.

#include <span>

namespace ember::store {

class Db;

struct Migration {
    int version;  // the user_version this step produces; steps are numbered 1, 2, 3 … in order
    void (*apply)(Db& db);
};

int schemaVersion(Db& db);

// Throws when the file's schema is newer than `latest` (written by a newer Ember). It only
// reads, so call it before anything that writes (switching to WAL included): the refused file
// stays byte-for-byte as it was.
void refuseNewerSchema(Db& db, int latest);

// Runs the steps the file has not had yet.
void migrate(Db& db, std::span<const Migration> steps);

}  // namespace ember::store
