#pragma once
// The models installed under <models>/<owner>/<name>/, read from disk with the same
// classification the Hub browser uses, so a model is sparse here exactly when it was there.
// Blocking file-system work: runs on the hub worker thread.

#include <QString>
#include <QStringList>

#include <vector>

#include "app/hub/hub_types.h"

namespace ember::app {

// Every finished GGUF (no .part) of every repo folder, and of each folder the user added in
// place (listed under the folder's name), sorted by repo then file.
std::vector<LibraryEntry> scan_library(const QString& models_dir, const QStringList& added_folders = {});

// The library's order: repo, then file, then path.
bool library_order(const LibraryEntry& a, const LibraryEntry& b);

// Why `folder` cannot be added to the library in place (not a folder, no GGUF file in it, or
// already inside models_dir), or empty when it can.
QString check_added_folder(const QString& models_dir, const QString& folder);

// Deletes the model's GGUF and its .generated.gpuidx; when no other GGUF is left in its repo
// folder, the folder (activation/, config, leftover .part files) goes too. Refuses a path
// outside models_dir. Empty on success, else why not.
QString remove_model(const QString& models_dir, const QString& model_path);

}  // namespace ember::app
