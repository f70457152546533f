#pragma once
// The open repo's files, models first: size, kind (sparse, dense, activation, config, other),
// quantization, and for each model file what "Download" would fetch (file count and bytes). As
// their fits become known, the models this machine can run move to the top and those the engine
// cannot run to the bottom.

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

#include <vector>

#include "app/hub/hub_types.h"

namespace ember::app {

class RepoFilesModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by HubController")

public:
    enum Role {
        PathRole = Qt::UserRole + 1,
        SizeRole,
        KindRole,
        QuantizationRole,
        IsModelRole,
        DownloadFilesRole,
        DownloadBytesRole,
        FitRole,      // model files: "all on GPU", "hybrid: …", "CPU only …", "too large …"; empty until known
        FitKindRole,  // "gpu", "hybrid", "cpu", "toolarge", "cannotrun" or "unknown" (with FitRole saying why), or empty
    };
    Q_ENUM(Role)

    using QAbstractListModel::QAbstractListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // Replaces the rows (remove, then insert); an empty layout just clears them.
    void set_layout(const hub::RepoLayout& layout);
    void set_fit(const QString& path, const QString& kind, const QString& text);

private:
    void runnable_first();

    struct Row {
        hub::FileEntry entry;
        hub::FileKind kind;
        QString quantization;
        int download_files = 0;  // models only
        uint64_t download_bytes = 0;
        QString fit_kind, fit;
        int listed = 0;  // the row's place in the repo's own order
    };
    std::vector<Row> rows_;
};

}  // namespace ember::app
