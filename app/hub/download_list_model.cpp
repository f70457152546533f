#include "app/hub/download_list_model.h"

#include <QVariantMap>

#include <algorithm>

namespace ember::app {

int DownloadListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }

QVariant DownloadListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Row& r = rows_[size_t(index.row())];
    const hub::JobProgress& p = r.progress;
    switch (role) {
        case RepoRole: return QString::fromStdString(r.job.repo);
        case Qt::DisplayRole:
        case ModelRole: return r.model;
        case StateRole: return QString::fromLatin1(hub::to_string(p.state));
        case BytesDoneRole: return double(p.bytes_done);
        case BytesTotalRole: return double(p.bytes_total);
        case ProgressRole: return p.bytes_total > 0 ? double(p.bytes_done) / double(p.bytes_total) : 0.0;
        case SpeedRole: return p.bytes_per_second;
        case EtaRole: return p.eta_seconds;
        case ErrorRole: return QString::fromStdString(p.error);
        case FilesRole: {
            QVariantList files;
            for (const hub::FileProgress& f : p.files) {
                files.append(QVariantMap{{QStringLiteral("path"), QString::fromStdString(f.path)},
                                         {QStringLiteral("state"), QString::fromLatin1(hub::to_string(f.state))},
                                         {QStringLiteral("bytesDone"), double(f.bytes_done)},
                                         {QStringLiteral("bytesTotal"), double(f.bytes_total)}});
            }
            return files;
        }
        default: return {};
    }
}

QHash<int, QByteArray> DownloadListModel::roleNames() const {
    return {{RepoRole, "repo"},           {ModelRole, "modelFile"},   {StateRole, "jobState"},
            {BytesDoneRole, "bytesDone"}, {BytesTotalRole, "bytesTotal"}, {ProgressRole, "progress"},
            {SpeedRole, "speed"},         {EtaRole, "eta"},           {ErrorRole, "error"},
            {FilesRole, "files"}};
}

int DownloadListModel::add(const QString& model, hub::Job job) {
    Row r{model, std::move(job), 0, {}};
    for (const hub::FileEntry& f : r.job.files) {
        r.progress.bytes_total += f.size;
        r.progress.files.push_back({f.path, hub::FileState::Queued, 0, f.size, 0, {}});
    }
    const int row = int(rows_.size());
    beginInsertRows({}, row, row);
    rows_.push_back(std::move(r));
    endInsertRows();
    return row;
}

int DownloadListModel::find(const std::string& repo, const QString& model) const {
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].job.repo == repo && rows_[i].model == model) return int(i);
    return -1;
}

int DownloadListModel::row_of(hub::JobId id) const {
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].id == id) return int(i);
    return -1;
}

void DownloadListModel::update(int row, const hub::JobProgress& progress) {
    rows_[size_t(row)].progress = progress;
    changed(row);
}

void DownloadListModel::restart(int row, hub::JobId id) {
    Row& r = rows_[size_t(row)];
    r.id = id;
    r.progress.id = id;
    r.progress.state = hub::JobState::Running;
    r.progress.error.clear();
    changed(row);
}

void DownloadListModel::fail(int row, const QString& error) {
    Row& r = rows_[size_t(row)];
    r.id = 0;
    r.progress.state = hub::JobState::Failed;
    r.progress.error = error.toStdString();
    changed(row);
}

void DownloadListModel::mark_paused(int row, const std::vector<uint64_t>& have) {
    hub::JobProgress& p = rows_[size_t(row)].progress;
    p.state = hub::JobState::Cancelled;
    p.bytes_done = 0;
    for (size_t i = 0; i < p.files.size() && i < have.size(); ++i) {
        hub::FileProgress& f = p.files[i];
        f.bytes_done = std::min(have[i], f.bytes_total);
        f.state = f.bytes_done == f.bytes_total ? hub::FileState::Done : hub::FileState::Cancelled;
        p.bytes_done += f.bytes_done;
    }
    changed(row);
}

void DownloadListModel::remove(int row) {
    beginRemoveRows({}, row, row);
    rows_.erase(rows_.begin() + row);
    endRemoveRows();
}

void DownloadListModel::changed(int row) { emit dataChanged(index(row), index(row)); }

}  // namespace ember::app
