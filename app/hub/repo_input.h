#pragma once
// What the user pasted into "open a repo": "owner/name", or a Hub URL of the repo or of one of
// its pages (…/tree/main, …/blob/main/file.gguf), on huggingface.co or a mirror.

#include <QString>

namespace ember::app {

// "owner/name", or an empty string when the text names no repo.
QString repo_from_input(const QString& text);

}  // namespace ember::app
