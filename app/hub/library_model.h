#pragma once
// Installed models, one row per GGUF under <models>/<owner>/<name>/. A rescan is merged in row
// by row (removed rows removed, changed rows changed, new rows inserted), so a finished
// download adds one row and leaves the others, and their delegates, alone.

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

#include <vector>

#include "app/hub/hub_types.h"

namespace ember::app {

class LibraryModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by HubController")

public:
    enum Role { RepoRole = Qt::UserRole + 1, FileRole, PathRole, SizeRole, SparseRole, QuantizationRole, FolderRole, FitRole, FitTextRole };
    Q_ENUM(Role)

    using QAbstractListModel::QAbstractListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // entries sorted as scan_library sorts them.
    void merge(std::vector<LibraryEntry> entries);
    const LibraryEntry& entry(int row) const { return entries_[size_t(row)]; }
    // The fit of the row's file: "gpu", "hybrid", "cpu", "toolarge", "cannotrun" or "unknown",
    // and its words.
    void set_fit(int row, const QString& fit, const QString& text);

private:
    std::vector<LibraryEntry> entries_;
};

}  // namespace ember::app
