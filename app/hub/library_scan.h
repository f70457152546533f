#pragma once
// The models installed under <models>/<owner>/<name>/, read from disk with the same
// classification the Hub browser uses, so a model is sparse here exactly when it was there.
// Blocking file-system work: runs on the hub worker thread.

#include <QString>

#include <vector>

#include "app/hub/hub_types.h"

namespace ember::app {

// Every finished GGUF (no .part) of every repo folder, sorted by repo then file.
std::vector<LibraryEntry> scan_library(const QString& models_dir);

// Deletes the model's GGUF and its .generated.gpuidx; when no other GGUF is left in its repo
// folder, the folder (activation/, config, leftover .part files) goes too. Refuses a path
// outside models_dir. Empty on success, else why not.
QString remove_model(const QString& models_dir, const QString& model_path);

}  // namespace ember::app
