#pragma once
// The QML face of the model hub and library: searches the Hub and opens repos on its worker
// thread, downloads on the downloader's own thread, and keeps four list models current on the
// GUI thread. Results and progress arrive by queued calls; nothing here waits on the network.

#include <QObject>
#include <QThread>
#include <QTimer>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

#include <map>
#include <memory>

#include "app/hub/download_list_model.h"
#include "app/hub/hub_search_model.h"
#include "app/hub/hub_types.h"
#include "app/hub/library_model.h"
#include "app/hub/repo_files_model.h"
#include "ember/hub/downloader.h"

class QQmlEngine;
class QJSEngine;

namespace ember::app {

class AppSettings;
class EngineController;
class TokenKeychain;
class HubWorker;

class HubController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON

    Q_PROPERTY(ember::app::HubSearchModel* searchResults READ search_results CONSTANT)
    Q_PROPERTY(ember::app::RepoFilesModel* repoFiles READ repo_files CONSTANT)
    Q_PROPERTY(ember::app::DownloadListModel* downloads READ downloads CONSTANT)
    Q_PROPERTY(ember::app::LibraryModel* library READ library CONSTANT)
    Q_PROPERTY(bool searching READ searching NOTIFY searchChanged)
    Q_PROPERTY(QString searchError READ search_error NOTIFY searchChanged)
    Q_PROPERTY(bool opening READ opening NOTIFY repoChanged)
    Q_PROPERTY(QString repoId READ repo_id NOTIFY repoChanged)
    Q_PROPERTY(bool repoGated READ repo_gated NOTIFY repoChanged)
    // The Hub refused the repo last opened (private, gated or not there) and a token may get it.
    Q_PROPERTY(bool repoRefused READ repo_refused NOTIFY repoChanged)
    Q_PROPERTY(QString repoError READ repo_error NOTIFY repoChanged)
    Q_PROPERTY(QString libraryError READ library_error NOTIFY libraryErrorChanged)
    // Why the saved downloads could not be read or written; empty when they could.
    Q_PROPERTY(QString downloadsError READ downloads_error NOTIFY downloadsErrorChanged)
    // A Hugging Face token is in use (HF_TOKEN, the system keychain, or the token file Hugging
    // Face's tools share), and where it is kept.
    Q_PROPERTY(bool hasToken READ has_token NOTIFY tokenChanged)
    Q_PROPERTY(QString tokenPlace READ token_place NOTIFY tokenChanged)
    Q_PROPERTY(QString tokenError READ token_error NOTIFY tokenChanged)

public:
    // endpoint: the Hub to use; empty means HF_ENDPOINT, else huggingface.co. engine may be null
    // (tests of the hub alone); Load then does nothing. queue_file keeps unfinished downloads
    // across restarts (empty: not kept): they come back paused, or running if they were. Not
    // default-constructible, so QML (Qt 6.4) calls create() instead of building its own.
    // app_settings (may be null) keeps the folders added to the library in place.
    HubController(const QString& models_dir, const QString& endpoint, EngineController* engine,
                  const QString& queue_file = {}, AppSettings* app_settings = nullptr, QObject* parent = nullptr);
    ~HubController() override;

    static HubController* create(QQmlEngine*, QJSEngine*);
    static void set_instance(HubController* controller);

    HubSearchModel* search_results() { return &search_results_; }
    RepoFilesModel* repo_files() { return &repo_files_; }
    DownloadListModel* downloads() { return &downloads_; }
    LibraryModel* library() { return &library_; }
    bool searching() const { return searching_; }
    QString search_error() const { return search_error_; }
    bool opening() const { return opening_; }
    QString repo_id() const { return listing_.id; }
    bool repo_gated() const { return listing_.gated; }
    bool repo_refused() const { return repo_refused_; }
    QString repo_error() const { return repo_error_; }
    QString library_error() const { return library_error_; }
    QString downloads_error() const { return downloads_error_; }
    bool has_token() const { return has_token_; }
    QString token_error() const { return token_error_; }
    QString token_place() const { return token_place_; }

    // Keeps the token in the system keychain from now on (null: only the token file), and
    // takes a token stored there unless HF_TOKEN is set.
    void set_keychain(TokenKeychain* keychain);

    // sort: "downloads", "likes" or "updated".
    Q_INVOKABLE void search(const QString& text, const QString& sort = QStringLiteral("downloads"));
    // "owner/name" or a Hub URL; false (and repoError says why) when it names no repo.
    Q_INVOKABLE bool openRepo(const QString& input);
    // Downloads the open repo's model file and what it needs; false when it is not a model.
    Q_INVOKABLE bool download(const QString& model_path);
    // Pauses a running download: its .part files stay, for Resume now or after a restart.
    Q_INVOKABLE void cancel(int row);
    // Starts a failed or paused download again; finished files stay, .part files resume.
    Q_INVOKABLE void retry(int row);
    // Forgets a download that is not running, with its .part files.
    Q_INVOKABLE void removeDownload(int row);
    // Saves the token in the system keychain when there is one, else where `hf auth login` does
    // (owner-only), and uses it from the next request and download on; false (tokenError says
    // why) for a malformed token. With a keychain the save finishes later: hasToken turns true,
    // or tokenError says why it could not be saved anywhere.
    Q_INVOKABLE bool setToken(const QString& token);
    Q_INVOKABLE void forgetToken();
    Q_INVOKABLE void refreshLibrary();
    Q_INVOKABLE void loadModel(int row);
    // A downloaded model's files are deleted; a model in an added folder only leaves the library
    // (with the rest of its folder), its files untouched.
    Q_INVOKABLE void deleteModel(int row);
    // Adds a folder of GGUF files to the library where it is (no copy); false with libraryError
    // set when it cannot be. chooseFolder asks for one with the platform's folder dialog.
    Q_INVOKABLE bool addFolder(const QString& folder);
    Q_INVOKABLE void chooseFolder();
    // Opens the model's folder in the platform's file manager.
    Q_INVOKABLE void revealModel(int row);

    Q_INVOKABLE QString formatBytes(double bytes) const;
    // The first-run screen: this computer and the model suggested for it
    // ({ram, threads, gpu, suggestionRepo, suggestionName, suggestionBytes, why}).
    Q_INVOKABLE QVariantMap hardwareSuggestion() const;
    Q_INVOKABLE QString formatDuration(double seconds) const;

signals:
    void searchChanged();
    void repoChanged();
    void libraryErrorChanged();
    void downloadsErrorChanged();
    void tokenChanged();

private:
    void start_job(int row);
    void queue_progress(hub::JobProgress progress);  // refusals worded for the window (hub_error_text)
    void flush_progress();
    void set_library_error(const QString& error);
    QStringList added_folders() const;
    // The open repo's model files against this machine: the GPU budget in use, memory, context.
    void refresh_fits();
    void restore_downloads();
    void save_downloads();
    void set_downloads_error(const QString& error);

    QString models_dir_;
    EngineController* engine_;
    AppSettings* settings_;
    QString settings_error_;  // a bad endpoint: every request fails with this
    HubSearchModel search_results_;
    RepoFilesModel repo_files_;
    DownloadListModel downloads_;
    LibraryModel library_;

    quint64 search_request_ = 0;
    quint64 open_request_ = 0;
    bool searching_ = false;
    QString search_error_;
    bool opening_ = false;
    RepoListing listing_;
    std::vector<FileFootprint> footprints_;  // the open repo's model files, as they arrive
    uint64_t ram_bytes_ = 0;
    QString repo_error_;
    QString library_error_;
    QString queue_file_;
    QString downloads_error_;
    bool has_token_ = false;
    bool repo_refused_ = false;
    QString last_repo_input_;  // what openRepo was last given
    bool token_from_env_ = false;
    QString token_error_;
    QString token_place_;
    TokenKeychain* keychain_ = nullptr;
    QString pending_token_;  // being written to the keychain
    void use_token(const std::string& token, const QString& place);
    void save_to_file(const QString& token, const QString& why_not_keychain);
    QString token_file_place() const;  // "in Hugging Face's token file (PATH)", where tokenPlace says the token is

    // Latest progress per job since the last flush; the timer caps updates at 10 Hz per job.
    std::map<hub::JobId, hub::JobProgress> pending_;
    QTimer flush_timer_;

    QThread thread_;
    HubWorker* worker_;  // lives on thread_, deleted when it finishes
    std::unique_ptr<hub::Downloader> downloader_;  // declared last: destroyed first, see ~HubController
};

}  // namespace ember::app
