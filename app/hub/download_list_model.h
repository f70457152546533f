#pragma once
// One row per model download, newest last, kept after it ends so its outcome stays visible.
// A row keeps its Job, so Retry and Resume start the same files again (the downloader resumes
// the .part files); the row then follows the new job id. Progress arrives already coalesced by
// HubController and changes only its own row.

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

#include <vector>

#include "ember/hub/downloader.h"

namespace ember::app {

class DownloadListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by HubController")

public:
    enum Role {
        RepoRole = Qt::UserRole + 1,
        ModelRole,  // "modelFile": "model" would hide the delegate's model
        StateRole,  // "jobState" (running, done, failed, cancelled): "state" is Item's
        BytesDoneRole,
        BytesTotalRole,
        ProgressRole,  // 0…1
        SpeedRole,     // bytes per second
        EtaRole,       // seconds; negative while unknown
        ErrorRole,
        FilesRole,  // [{path, state, bytesDone, bytesTotal}]
    };
    Q_ENUM(Role)

    using QAbstractListModel::QAbstractListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // Appends a queued row for a job about to start (restart() gives it its id); returns its row.
    int add(const QString& model, hub::Job job);
    // The row of a repo's model download, or -1.
    int find(const std::string& repo, const QString& model) const;
    int row_of(hub::JobId id) const;
    const hub::Job& job(int row) const { return rows_[size_t(row)].job; }
    const QString& model(int row) const { return rows_[size_t(row)].model; }
    hub::JobState state(int row) const { return rows_[size_t(row)].progress.state; }
    hub::JobId job_id(int row) const { return rows_[size_t(row)].id; }

    void update(int row, const hub::JobProgress& progress);
    // The row runs again under a new job id, keeping the bytes it had.
    void restart(int row, hub::JobId id);
    // Starting (or restarting) the job failed before any transfer: the row shows why.
    void fail(int row, const QString& error);
    // A download restored paused from an earlier run: have[i] bytes of file i are on disk.
    void mark_paused(int row, const std::vector<uint64_t>& have);
    void remove(int row);

private:
    struct Row {
        QString model;
        hub::Job job;
        hub::JobId id = 0;
        hub::JobProgress progress;
    };
    void changed(int row);

    std::vector<Row> rows_;
};

}  // namespace ember::app
