#include "app/hub/repo_files_model.h"

#include <algorithm>

namespace ember::app {

int RepoFilesModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }

QVariant RepoFilesModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Row& r = rows_[size_t(index.row())];
    switch (role) {
        case Qt::DisplayRole:
        case PathRole: return QString::fromStdString(r.entry.path);
        case SizeRole: return double(r.entry.size);
        case KindRole: return QString::fromLatin1(hub::to_string(r.kind));
        case QuantizationRole: return r.quantization;
        case IsModelRole: return r.kind == hub::FileKind::SparseModel || r.kind == hub::FileKind::DenseModel;
        case DownloadFilesRole: return r.download_files;
        case DownloadBytesRole: return double(r.download_bytes);
        case FitRole: return r.fit;
        case FitKindRole: return r.fit_kind;
        default: return {};
    }
}

QHash<int, QByteArray> RepoFilesModel::roleNames() const {
    return {{PathRole, "path"},
            {SizeRole, "size"},
            {KindRole, "kind"},
            {QuantizationRole, "quantization"},
            {IsModelRole, "isModel"},
            {DownloadFilesRole, "downloadFiles"},
            {DownloadBytesRole, "downloadBytes"},
            {FitRole, "fit"},
            {FitKindRole, "fitKind"}};
}

void RepoFilesModel::set_fit(const QString& path, const QString& kind, const QString& text) {
    bool changed = false;
    for (size_t i = 0; i < rows_.size(); ++i) {
        Row& r = rows_[i];
        if (QString::fromStdString(r.entry.path) != path || (r.fit_kind == kind && r.fit == text)) continue;
        r.fit_kind = kind;
        r.fit = text;
        changed = true;
        emit dataChanged(index(int(i)), index(int(i)), {FitRole, FitKindRole});
    }
    if (changed) runnable_first();
}

namespace {

// Files that run on this machine, then the rest (fit not known yet or unknown, too large), then
// those the engine cannot run. Within a rank the repo's own order holds, so rows move only when a
// file turns out runnable or not, not as each answer arrives.
int fit_rank(const QString& kind) {
    if (kind == QLatin1String("gpu") || kind == QLatin1String("hybrid") || kind == QLatin1String("cpu")) return 0;
    if (kind == QLatin1String("cannotrun")) return 2;
    return 1;
}

}  // namespace

void RepoFilesModel::runnable_first() {
    std::vector<size_t> order(rows_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    const auto is_model = [&](size_t i) {
        return rows_[i].kind == hub::FileKind::SparseModel || rows_[i].kind == hub::FileKind::DenseModel;
    };
    // Model rows come first (set_layout); only they are ranked.
    const auto models_end = std::find_if_not(order.begin(), order.end(), is_model);
    std::sort(order.begin(), models_end, [&](size_t a, size_t b) {
        const int ra = fit_rank(rows_[a].fit_kind), rb = fit_rank(rows_[b].fit_kind);
        return ra != rb ? ra < rb : rows_[a].listed < rows_[b].listed;
    });
    if (std::is_sorted(order.begin(), order.end())) return;
    emit layoutAboutToBeChanged();
    std::vector<Row> sorted;
    sorted.reserve(rows_.size());
    std::vector<int> new_row(rows_.size());
    for (size_t i = 0; i < order.size(); ++i) {
        new_row[order[i]] = int(i);
        sorted.push_back(std::move(rows_[order[i]]));
    }
    rows_ = std::move(sorted);
    for (const QModelIndex& old : persistentIndexList())
        changePersistentIndex(old, index(new_row[size_t(old.row())], old.column()));
    emit layoutChanged();
}

void RepoFilesModel::set_layout(const hub::RepoLayout& layout) {
    std::vector<Row> rows;
    for (auto [models, kind] : {std::pair{&layout.sparse_models, hub::FileKind::SparseModel},
                                std::pair{&layout.dense_models, hub::FileKind::DenseModel}}) {
        for (const hub::ModelFile& m : *models) {
            auto plan = hub::plan_model_download(layout, m.entry.path);
            rows.push_back({m.entry, kind, QString::fromStdString(m.quantization),
                            plan ? int(plan->files.size()) : 0, plan ? plan->total_bytes : 0, {}, {}, int(rows.size())});
        }
    }
    for (auto [files, kind] : {std::pair{&layout.config, hub::FileKind::Config},
                               std::pair{&layout.activation, hub::FileKind::Activation},
                               std::pair{&layout.other, hub::FileKind::Other}}) {
        for (const hub::FileEntry& f : *files) rows.push_back({f, kind, {}, 0, 0, {}, {}, int(rows.size())});
    }
    if (!rows_.empty()) {
        beginRemoveRows({}, 0, int(rows_.size()) - 1);
        rows_.clear();
        endRemoveRows();
    }
    if (rows.empty()) return;
    beginInsertRows({}, 0, int(rows.size()) - 1);
    rows_ = std::move(rows);
    endInsertRows();
}

}  // namespace ember::app
