#include "app/hub/hub_worker.h"

#include <QFile>

#include <algorithm>

#include "app/hub/hub_error_text.h"
#include "app/hub/library_scan.h"

namespace ember::app {
namespace {

// PowerInfer's org makes the sparse models Ember is built for: its hits come first.
const char* pinned_org = "PowerInfer";
constexpr int pinned_limit = 20;
constexpr int search_limit = 50;

}  // namespace

HubWorker::HubWorker(hub::Settings settings, QString models_dir)
    : have_token_(!settings.token.empty()), client_(std::move(settings)), models_dir_(std::move(models_dir)) {}

QString HubWorker::error_text(const hub::Error& e) const {
    return hub_error_text(e.kind, QString::fromStdString(e.subject), QString::fromStdString(e.message), have_token_);
}

void HubWorker::search(quint64 request, const QString& text, const QString& sort) {
    hub::SearchQuery query;
    query.search = text.trimmed().toStdString();
    query.sort = sort.toStdString();
    query.author = pinned_org;
    query.limit = pinned_limit;
    auto pinned = client_.search(query);
    if (!pinned) return emit search_failed(request, error_text(pinned.error()));
    query.author.clear();
    query.limit = search_limit;
    auto rest = client_.search(query);
    if (!rest) return emit search_failed(request, error_text(rest.error()));

    std::vector<SearchHit> hits;
    for (auto& m : *pinned) hits.push_back({std::move(m), true});
    const auto seen = [&](const hub::ModelSummary& m) {
        return std::any_of(hits.begin(), hits.end(), [&](const SearchHit& h) { return h.summary.id == m.id; });
    };
    for (auto& m : *rest)
        if (!seen(m)) hits.push_back({std::move(m), false});
    emit searched(request, hits);
}

void HubWorker::open_repo(quint64 request, const QString& repo) {
    auto info = client_.info(repo.toStdString());
    if (!info) return emit open_failed(request, error_text(info.error()), !have_token_ && token_may_help(info.error().kind));
    auto tree = client_.tree(info->id, info->sha);
    if (!tree) return emit open_failed(request, error_text(tree.error()), !have_token_ && token_may_help(tree.error().kind));
    const RepoListing listing{QString::fromStdString(info->id), info->sha, info->gated != hub::Gated::No,
                              hub::classify(*tree)};
    emit opened(request, listing);
    // Then each model's header (metadata and tensor table are at the front of a GGUF), for the
    // fit badges: 2 MiB holds most; a large vocabulary may need more, up to 16 MiB.
    for (const auto* models : {&listing.layout.sparse_models, &listing.layout.dense_models}) {
        for (const hub::ModelFile& m : *models) {
            FileFootprint fp{QString::fromStdString(m.entry.path), std::nullopt, {}};
            for (const uint64_t want : {uint64_t(2) << 20, uint64_t(16) << 20}) {
                const uint64_t bytes = std::min(want, m.entry.size);
                auto head = client_.file_head(info->id, info->sha, m.entry.path, size_t(bytes));
                if (!head) {
                    fp.error = QString::fromStdString(head.error().message);
                    break;
                }
                const QString file = heads_.filePath(QStringLiteral("head.gguf"));
                QFile out(file);
                if (!out.open(QIODevice::WriteOnly) || out.write(head->data(), qint64(head->size())) != qint64(head->size())) {
                    fp.error = QStringLiteral("cannot write %1: %2").arg(file, out.errorString());
                    break;
                }
                out.close();
                auto read = ember::read_footprint(file.toStdString(), m.entry.size);
                if (read) {
                    fp.footprint = std::move(*read);
                    fp.error.clear();
                    break;
                }
                fp.error = QString::fromStdString(read.error().message);
                // More bytes help only a GGUF header cut short, not another kind of file.
                const bool gguf = head->compare(0, 4, "GGUF") == 0 || head->compare(0, 4, "PWRI") == 0;
                if (!gguf || bytes == m.entry.size) break;
            }
            emit footprint_read(request, fp);
        }
    }
}

void HubWorker::scan_library(const QStringList& added_folders) {
    emit library_scanned(ember::app::scan_library(models_dir_, added_folders));
}

void HubWorker::remove_model(const QString& path, const QStringList& added_folders) {
    const QString error = ember::app::remove_model(models_dir_, path);
    if (!error.isEmpty()) emit remove_failed(error);
    scan_library(added_folders);
}

}  // namespace ember::app
