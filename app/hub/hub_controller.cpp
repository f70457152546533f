#include "app/hub/hub_controller.h"
#include "app/hub/model_suggestion.h"

#include <QDesktopServices>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QJSEngine>
#include <QLocale>

#include <algorithm>
#include <utility>

#include "app/engine/engine_controller.h"
#include "app/hub/download_queue.h"
#include "app/hub/hub_error_text.h"
#include "app/hub/hub_worker.h"
#include "app/hub/library_scan.h"
#include "app/hub/repo_input.h"
#include "app/hub/token_keychain.h"
#include "app/settings/app_settings.h"

namespace ember::app {
namespace {

HubController* g_instance = nullptr;

constexpr int progress_flush_ms = 100;  // ≤ 10 Hz per job, however often the downloader reports

// The environment's Hub settings (HF_ENDPOINT, HF_TOKEN, proxies), with the command line's
// endpoint over HF_ENDPOINT. *error says why they are unusable.
hub::Settings hub_settings(const QString& endpoint, QString* error) {
    auto env = hub::Settings::from_environment();
    hub::Settings settings = env ? *env : hub::Settings{};
    if (!env && endpoint.isEmpty()) *error = QString::fromStdString(env.error().message);
    if (!endpoint.isEmpty()) {
        settings.endpoint = endpoint.toStdString();
        while (settings.endpoint.size() > 1 && settings.endpoint.back() == '/') settings.endpoint.pop_back();
        if (auto ok = hub::check_endpoint(settings.endpoint); !ok) *error = QString::fromStdString(ok.error().message);
    }
    return settings;
}

hub::DownloadOptions download_options() {
    hub::DownloadOptions options;
    options.progress_interval = std::chrono::milliseconds(progress_flush_ms);
    return options;
}

// Where a job's file lands once downloaded; its .part file is beside it.
QString destination(const hub::Job& job, const hub::FileEntry& f) {
    return QString::fromStdString((job.models_dir / job.repo / f.path).string());
}

QString sort_key(const QString& sort) {
    if (sort == QLatin1String("likes")) return QStringLiteral("likes");
    if (sort == QLatin1String("updated")) return QStringLiteral("lastModified");
    return QStringLiteral("downloads");
}

}  // namespace

HubController::HubController(const QString& models_dir, const QString& endpoint, EngineController* engine,
                             const QString& queue_file, AppSettings* app_settings, QObject* parent)
    : QObject(parent), models_dir_(models_dir), engine_(engine), settings_(app_settings), queue_file_(queue_file) {
    qRegisterMetaType<std::vector<SearchHit>>();
    qRegisterMetaType<RepoListing>();
    qRegisterMetaType<std::vector<LibraryEntry>>();
    qRegisterMetaType<FileFootprint>();
    ram_bytes_ = uint64_t(std::max<qint64>(physical_ram_bytes(), 0));
    QDir().mkpath(models_dir_);
    const hub::Settings settings = hub_settings(endpoint, &settings_error_);

    worker_ = new HubWorker(settings, models_dir_);
    worker_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    connect(worker_, &HubWorker::searched, this, [this](quint64 request, const std::vector<SearchHit>& hits) {
        if (request != search_request_) return;  // a newer search is on its way
        search_results_.set_hits(hits);
        searching_ = false;
        emit searchChanged();
    }, Qt::QueuedConnection);
    connect(worker_, &HubWorker::search_failed, this, [this](quint64 request, const QString& error) {
        if (request != search_request_) return;
        searching_ = false;
        search_error_ = error;
        emit searchChanged();
    }, Qt::QueuedConnection);
    connect(worker_, &HubWorker::opened, this, [this](quint64 request, const RepoListing& listing) {
        if (request != open_request_) return;
        listing_ = listing;
        repo_files_.set_layout(listing_.layout);
        opening_ = false;
        emit repoChanged();
    }, Qt::QueuedConnection);
    connect(worker_, &HubWorker::footprint_read, this, [this](quint64 request, const FileFootprint& fp) {
        if (request != open_request_) return;
        footprints_.push_back(fp);
        refresh_fits();
    }, Qt::QueuedConnection);
    if (engine_) {
        connect(engine_, &EngineController::deviceChanged, this, &HubController::refresh_fits);
        connect(engine_, &EngineController::contextChanged, this, &HubController::refresh_fits);
    }
    connect(worker_, &HubWorker::open_failed, this, [this](quint64 request, const QString& error, bool token_may_help) {
        if (request != open_request_) return;
        opening_ = false;
        repo_error_ = error;
        repo_refused_ = token_may_help;
        emit repoChanged();
    }, Qt::QueuedConnection);
    connect(worker_, &HubWorker::library_scanned, this,
            [this](const std::vector<LibraryEntry>& entries) {
                library_.merge(entries);
                refresh_fits();
            }, Qt::QueuedConnection);
    connect(worker_, &HubWorker::remove_failed, this, &HubController::set_library_error, Qt::QueuedConnection);
    thread_.setObjectName(QStringLiteral("HubWorker"));
    thread_.start();

    downloader_ = std::make_unique<hub::Downloader>(settings, download_options());
    has_token_ = !settings.token.empty();
    token_from_env_ = !qEnvironmentVariableIsEmpty("HF_TOKEN");
    if (has_token_)
        token_place_ = token_from_env_ ? tr("from HF_TOKEN") : token_file_place();
    flush_timer_.setSingleShot(true);
    flush_timer_.setInterval(progress_flush_ms);
    connect(&flush_timer_, &QTimer::timeout, this, &HubController::flush_progress);
    refreshLibrary();
    restore_downloads();
}

void HubController::restore_downloads() {
    if (queue_file_.isEmpty()) return;
    QString error;
    std::vector<SavedDownload> saved = read_download_queue(queue_file_, &error);
    if (!error.isEmpty()) {
        // Kept aside, not overwritten by the next save: nothing the user had is lost.
        const QString aside = queue_file_ + QStringLiteral(".bad");
        QFile::remove(aside);
        QFile::rename(queue_file_, aside);
        set_downloads_error(tr("%1; the file is kept as %2").arg(error, aside));
        return;
    }
    for (SavedDownload& d : saved) {
        const int row = downloads_.add(d.model, std::move(d.job));
        if (!d.paused) {
            start_job(row);
            continue;
        }
        std::vector<uint64_t> have;
        const hub::Job& job = downloads_.job(row);
        for (const hub::FileEntry& f : job.files) {
            const QString dest = destination(job, f);
            const QFileInfo done(dest), part(dest + QStringLiteral(".part"));
            have.push_back(done.exists() ? uint64_t(done.size()) : part.exists() ? uint64_t(part.size()) : 0);
        }
        downloads_.mark_paused(row, have);
    }
}

void HubController::save_downloads() {
    if (queue_file_.isEmpty()) return;
    std::vector<SavedDownload> unfinished;
    for (int row = 0; row < downloads_.rowCount(); ++row) {
        const hub::JobState state = downloads_.state(row);
        if (state != hub::JobState::Done)
            unfinished.push_back({downloads_.model(row), downloads_.job(row), state != hub::JobState::Running});
    }
    QString error;
    write_download_queue(queue_file_, unfinished, &error);
    set_downloads_error(error);
}

void HubController::set_downloads_error(const QString& error) {
    if (error == downloads_error_) return;
    downloads_error_ = error;
    emit downloadsErrorChanged();
}

HubController::~HubController() {
    // First the downloader: its destructor cancels and joins, and the progress it reports on
    // the way out is posted to this object, whose destructor then discards it.
    downloader_.reset();
    thread_.quit();
    thread_.wait();
    if (g_instance == this) g_instance = nullptr;
}

HubController* HubController::create(QQmlEngine*, QJSEngine*) {
    Q_ASSERT(g_instance);
    QJSEngine::setObjectOwnership(g_instance, QJSEngine::CppOwnership);
    return g_instance;
}

void HubController::set_instance(HubController* controller) { g_instance = controller; }

QVariantMap HubController::hardwareSuggestion() const {
    const Hardware hw = detect_hardware();
    const ModelSuggestion s = suggest_model(hw);
    const GpuInfo* gpu = hw.gpus.first_usable();
    return {{"ram", double(hw.ram_bytes)},
            {"threads", hw.cpu_threads},
            {"gpu", gpu ? QString::fromStdString(gpu->name) : QString()},
            {"gpuReason", QString::fromStdString(hw.gpus.reason)},
            {"suggestionRepo", s.repo},
            {"suggestionName", s.name},
            {"suggestionBytes", double(s.approx_bytes)},
            {"why", s.why}};
}

void HubController::search(const QString& text, const QString& sort) {
    const quint64 request = ++search_request_;
    search_error_ = settings_error_;
    searching_ = settings_error_.isEmpty();
    emit searchChanged();
    if (!searching_) return;
    QMetaObject::invokeMethod(worker_, [w = worker_, request, text, key = sort_key(sort)] { w->search(request, text, key); },
                              Qt::QueuedConnection);
}

bool HubController::openRepo(const QString& input) {
    const QString repo = repo_from_input(input);
    const quint64 request = ++open_request_;
    last_repo_input_ = input;
    repo_refused_ = false;
    listing_ = {};
    footprints_.clear();
    repo_files_.set_layout({});
    repo_error_ = !settings_error_.isEmpty() ? settings_error_
                  : repo.isEmpty()           ? tr("\"%1\" names no Hub repo: write owner/name or paste its URL").arg(input)
                                             : QString();
    opening_ = repo_error_.isEmpty();
    emit repoChanged();
    if (!opening_) return false;
    QMetaObject::invokeMethod(worker_, [w = worker_, request, repo] { w->open_repo(request, repo); },
                              Qt::QueuedConnection);
    return true;
}

bool HubController::download(const QString& model_path) {
    auto plan = hub::plan_model_download(listing_.layout, model_path.toStdString());
    if (listing_.id.isEmpty() || !plan) return false;
    const std::string repo = listing_.id.toStdString();
    int row = downloads_.find(repo, model_path);
    if (row >= 0 && downloads_.state(row) == hub::JobState::Running) return true;  // already on its way
    hub::Job job{repo, listing_.sha, plan->files, models_dir_.toStdString()};
    if (row < 0) row = downloads_.add(model_path, std::move(job));
    start_job(row);
    return true;
}

void HubController::start_job(int row) {
    auto id = downloader_->start(downloads_.job(row), [this](const hub::JobProgress& p) {
        // On the download thread: hand a copy to the GUI thread and return at once.
        QMetaObject::invokeMethod(this, [this, p] { queue_progress(p); }, Qt::QueuedConnection);
    });
    if (id) downloads_.restart(row, *id);
    else downloads_.fail(row, QString::fromStdString(id.error().message));
    save_downloads();
}

void HubController::cancel(int row) {
    if (row < 0 || row >= downloads_.rowCount() || downloads_.state(row) != hub::JobState::Running) return;
    downloader_->cancel(downloads_.job_id(row));
}

void HubController::retry(int row) {
    if (row < 0 || row >= downloads_.rowCount() || downloads_.state(row) == hub::JobState::Running) return;
    start_job(row);
}

void HubController::removeDownload(int row) {
    if (row < 0 || row >= downloads_.rowCount() || downloads_.state(row) == hub::JobState::Running) return;
    const hub::Job job = downloads_.job(row);
    if (downloads_.state(row) != hub::JobState::Done)
        for (const hub::FileEntry& f : job.files)
            QFile::remove(destination(job, f) + QStringLiteral(".part"));
    downloads_.remove(row);
    save_downloads();
}

void HubController::queue_progress(hub::JobProgress progress) {
    if (progress.error_kind != hub::ErrorKind::Other)
        progress.error = hub_error_text(progress.error_kind, QString::fromStdString(progress.error_subject),
                                        QString::fromStdString(progress.error), has_token_).toStdString();
    pending_[progress.id] = progress;
    // An ended job shows at once; running ones wait for the next tick.
    if (progress.state != hub::JobState::Running) flush_progress();
    else if (!flush_timer_.isActive()) flush_timer_.start();
}

void HubController::flush_progress() {
    bool finished = false, ended = false;
    for (const auto& [id, progress] : pending_) {
        const int row = downloads_.row_of(id);
        if (row < 0) continue;  // a job since restarted under a new id
        downloads_.update(row, progress);
        finished = finished || progress.state == hub::JobState::Done;
        ended = ended || progress.state != hub::JobState::Running;
    }
    pending_.clear();
    if (ended) save_downloads();
    if (finished) refreshLibrary();
}

void HubController::set_keychain(TokenKeychain* keychain) {
    if (keychain_) disconnect(keychain_, nullptr, this, nullptr);
    keychain_ = keychain;
    if (!keychain_) return;
    connect(keychain_, &TokenKeychain::read_done, this, [this](const QString& token, const QString& error) {
        if (!token.isEmpty() && !token_from_env_) use_token(token.toStdString(), tr("in the system keychain"));
        else if (!error.isEmpty()) qInfo("no token from the system keychain: %s", qPrintable(error));
    });
    connect(keychain_, &TokenKeychain::write_done, this, [this](const QString& error) {
        const QString token = std::exchange(pending_token_, {});
        if (error.isEmpty()) use_token(token.toStdString(), tr("in the system keychain"));
        else save_to_file(token, error);
    });
    connect(keychain_, &TokenKeychain::remove_done, this, [this](const QString& error) {
        if (!error.isEmpty()) {
            token_error_ = tr("could not remove the token from the system keychain: %1").arg(error);
            emit tokenChanged();
        }
    });
    keychain_->read();
}

bool HubController::setToken(const QString& token) {
    const QString t = token.trimmed();
    if (auto ok = hub::check_token(t.toStdString()); !ok) {
        token_error_ = QString::fromStdString(ok.error().message);
        emit tokenChanged();
        return false;
    }
    token_error_.clear();
    if (keychain_) {
        pending_token_ = t;
        keychain_->write(t);
    } else {
        save_to_file(t, {});
    }
    emit tokenChanged();
    return true;
}

void HubController::save_to_file(const QString& token, const QString& why_not_keychain) {
    if (auto saved = hub::save_token(token.toStdString()); !saved) {
        token_error_ = QString::fromStdString(saved.error().message);
        if (!why_not_keychain.isEmpty()) token_error_ += tr(" (and no system keychain: %1)").arg(why_not_keychain);
        emit tokenChanged();
        return;
    }
    QString place = token_file_place();
    if (!why_not_keychain.isEmpty()) place += tr(": no system keychain (%1)").arg(why_not_keychain);
    use_token(token.toStdString(), place);
}

QString HubController::token_file_place() const {
    return tr("in Hugging Face's token file (%1)").arg(QString::fromStdString(hub::token_file_path()));
}

void HubController::forgetToken() {
    if (auto gone = hub::forget_token(); !gone) token_error_ = QString::fromStdString(gone.error().message);
    else token_error_.clear();
    if (keychain_) keychain_->remove();
    use_token({}, {});
}

void HubController::use_token(const std::string& token, const QString& place) {
    downloader_->set_token(token);
    QMetaObject::invokeMethod(worker_, [w = worker_, token] { w->set_token(token); }, Qt::QueuedConnection);
    has_token_ = !token.empty();
    token_place_ = has_token_ ? place : QString();
    emit tokenChanged();
    // The repo the Hub refused without a token is asked for again with it.
    if (has_token_ && repo_refused_) openRepo(last_repo_input_);
}

void HubController::refresh_fits() {
    FitQuery q;
    q.ram_bytes = ram_bytes_;
    // Without a GPU the VRAM slider drives the sim device: the badges then preview a card of
    // that size, and say so.
    bool preview = false;
    if (engine_) {
        const QString device = engine_->device_name();
        if (!device.isEmpty() && device != QLatin1String("cpu")) q.vram_budget = uint64_t(engine_->budget_bytes());
        preview = device == QLatin1String("sim") && q.vram_budget > 0;
        if (engine_->context_size() > 0) q.n_ctx = engine_->context_size();
    }
    const QString card = formatBytes(double(q.vram_budget));
    // The same words for a file on the Hub and one in the library.
    const auto fit_of = [&](const std::optional<ModelFootprint>& footprint, const QString& error) -> std::pair<QString, QString> {
        if (!footprint) return {QStringLiteral("unknown"), tr("fit unknown: %1").arg(error)};
        const Fit fit = estimate_fit(*footprint, q);
        static const char* const kinds[] = {"gpu", "hybrid", "cpu", "toolarge", "cannotrun"};
        QString text = QString::fromStdString(fit.text);
        if (preview && (fit.kind == FitKind::AllOnGpu || fit.kind == FitKind::Hybrid))
            text += tr(" (preview of a %1 GPU)").arg(card);
        return {QString::fromLatin1(kinds[int(fit.kind)]), text};
    };
    for (const FileFootprint& fp : footprints_) {
        const auto [kind, text] = fit_of(fp.footprint, fp.error);
        repo_files_.set_fit(fp.path, kind, text);
    }
    for (int row = 0; row < library_.rowCount(); ++row) {
        const LibraryEntry& e = library_.entry(row);
        const auto [kind, text] = fit_of(e.footprint, e.footprint_error);
        library_.set_fit(row, kind, text);
    }
}

QStringList HubController::added_folders() const { return settings_ ? settings_->library_folders() : QStringList(); }

void HubController::refreshLibrary() {
    QMetaObject::invokeMethod(worker_, [w = worker_, folders = added_folders()] { w->scan_library(folders); },
                              Qt::QueuedConnection);
}

bool HubController::addFolder(const QString& folder) {
    const QString path = QDir(QDir::fromNativeSeparators(folder)).absolutePath();
    if (!settings_) return false;
    if (const QString why = check_added_folder(models_dir_, path); !why.isEmpty()) {
        set_library_error(why);
        return false;
    }
    set_library_error({});
    settings_->add_library_folder(path);
    refreshLibrary();
    return true;
}

void HubController::chooseFolder() {
    const QString folder = QFileDialog::getExistingDirectory(nullptr, tr("Add a folder of GGUF models"), QDir::homePath());
    if (!folder.isEmpty()) addFolder(folder);
}

void HubController::revealModel(int row) {
    if (row < 0 || row >= library_.rowCount()) return;
    QDesktopServices::openUrl(QUrl::fromLocalFile(QFileInfo(library_.entry(row).path).absolutePath()));
}

void HubController::loadModel(int row) {
    if (!engine_ || row < 0 || row >= library_.rowCount()) return;
    const LibraryEntry& e = library_.entry(row);
    // As at start-up: without a GPU the sim device previews a card holding nine tenths of a
    // sparse model, so the split view shows a real split.
    engine_->loadModel(e.path, e.sparse ? double(e.bytes * 9 / 10) : 0.0);
}

void HubController::deleteModel(int row) {
    if (row < 0 || row >= library_.rowCount()) return;
    set_library_error({});
    const LibraryEntry& e = library_.entry(row);
    if (!e.folder.isEmpty()) {
        if (settings_) settings_->remove_library_folder(e.folder);
        refreshLibrary();
        return;
    }
    QMetaObject::invokeMethod(worker_, [w = worker_, path = e.path, folders = added_folders()] { w->remove_model(path, folders); },
                              Qt::QueuedConnection);
}

void HubController::set_library_error(const QString& error) {
    if (error == library_error_) return;
    library_error_ = error;
    emit libraryErrorChanged();
}

QString HubController::formatBytes(double bytes) const {
    return QLocale().formattedDataSize(qint64(bytes), 1);
}

QString HubController::formatDuration(double seconds) const {
    if (seconds < 0) return tr("unknown");
    const qint64 s = qint64(seconds + 0.5);
    if (s < 60) return tr("%1 s").arg(s);
    if (s < 3600) return tr("%1 min %2 s").arg(s / 60).arg(s % 60);
    return tr("%1 h %2 min").arg(s / 3600).arg(s % 3600 / 60);
}

}  // namespace ember::app
