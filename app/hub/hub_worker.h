#pragma once
// The Hub's blocking calls and the library's disk work, on a QThread owned by HubController.
// Requests arrive as queued calls tagged with a request number; results leave as signals
// carrying values, so the controller can drop answers to requests it has since replaced.

#include <QObject>
#include <QString>
#include <QTemporaryDir>

#include "app/hub/hub_types.h"
#include "ember/hub/client.h"

namespace ember::app {

class HubWorker : public QObject {
    Q_OBJECT

public:
    HubWorker(hub::Settings settings, QString models_dir);

    // sort: the Hub's key (downloads, likes, lastModified).
    void search(quint64 request, const QString& text, const QString& sort);
    void open_repo(quint64 request, const QString& repo);
    void scan_library(const QStringList& added_folders);
    void remove_model(const QString& path, const QStringList& added_folders);
    void set_token(const std::string& token) {
        client_.set_token(token);
        have_token_ = !token.empty();
    }

signals:
    void searched(quint64 request, const std::vector<ember::app::SearchHit>& hits);
    void search_failed(quint64 request, const QString& error);
    void opened(quint64 request, const ember::app::RepoListing& listing);
    // One per model file of an opened repo, after opened(): its footprint from its first bytes.
    void footprint_read(quint64 request, const ember::app::FileFootprint& footprint);
    // token_may_help: the Hub refused the repo (gated, private or not there) and no token was sent.
    void open_failed(quint64 request, const QString& error, bool token_may_help);
    void library_scanned(const std::vector<ember::app::LibraryEntry>& entries);
    void remove_failed(const QString& error);

private:
    // The Hub's refusals worded for the window (hub_error_text), any other error as it is.
    QString error_text(const hub::Error& e) const;

    bool have_token_;     // before client_, which takes the settings it is read from
    hub::Client client_;  // used on the worker thread only
    QString models_dir_;
    QTemporaryDir heads_;  // model headers fetched for their footprints
};

}  // namespace ember::app
