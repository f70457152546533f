#pragma once
// Values the hub worker thread hands to the GUI thread by queued signal: plain copies, so no
// list model ever reads state another thread owns.

#include <QMetaType>
#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

#include "ember/fit.h"
#include "ember/hub/classify.h"
#include "ember/hub/repo.h"

namespace ember::app {

struct SearchHit {
    hub::ModelSummary summary;
    bool pinned = false;  // from the PowerInfer org, listed before the rest
};

// A model file's footprint read from its first bytes on the Hub, or why it could not be.
struct FileFootprint {
    QString path;
    std::optional<ember::ModelFootprint> footprint;
    QString error;
};

struct RepoListing {
    QString id;        // "owner/name" as the Hub spells it
    std::string sha;   // the commit every file of a download comes from
    bool gated = false;
    hub::RepoLayout layout;
};

// One installed model: a GGUF under <models>/<owner>/<name>/ and what it needs beside it.
struct LibraryEntry {
    QString repo;          // "owner/name", from the folder names
    QString file;          // the GGUF's path inside the repo folder
    QString path;          // absolute path of the GGUF
    QString quantization;
    bool sparse = false;
    uint64_t bytes = 0;    // the GGUF plus activation/ (sparse) and config files
    QString folder;        // set for a folder the user added in place (its files are not Ember's to delete)
    // Read from the file's header as the library is scanned, or why it could not be; the fit
    // (kind and words, as the Hub's files have them) is worked out on the GUI thread from it,
    // for the budget and context of the moment.
    std::optional<ember::ModelFootprint> footprint;
    QString footprint_error;
    QString fit;
    QString fit_text;
};

}  // namespace ember::app

Q_DECLARE_METATYPE(std::vector<ember::app::SearchHit>)
Q_DECLARE_METATYPE(ember::app::RepoListing)
Q_DECLARE_METATYPE(ember::app::FileFootprint)
Q_DECLARE_METATYPE(std::vector<ember::app::LibraryEntry>)
