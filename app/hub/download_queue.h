#pragma once
// The downloads that have not finished, saved in <data dir>/downloads.json so they survive a
// restart: each model download's job (repo, pinned revision, files with sizes and hashes,
// destination) and whether the user paused it. The .part files themselves hold the bytes.

#include <QString>

#include <vector>

#include "ember/hub/downloader.h"

namespace ember::app {

struct SavedDownload {
    QString model;  // the model file the user chose: the row's label
    hub::Job job;
    bool paused = false;  // paused, failed or cancelled: waits for Resume instead of starting
};

// A missing file is an empty list. A file that cannot be read or is malformed gives an empty
// list and *error naming the file and the field.
std::vector<SavedDownload> read_download_queue(const QString& path, QString* error);

// Writes atomically (QSaveFile); false and *error when it cannot.
bool write_download_queue(const QString& path, const std::vector<SavedDownload>& downloads, QString* error);

}  // namespace ember::app
