#pragma once
// Search hits, PowerInfer's first. A new search replaces the rows with explicit remove and
// insert notifications, so views keep their state and QAbstractItemModelTester stays quiet.

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

#include <vector>

#include "app/hub/hub_types.h"

namespace ember::app {

class HubSearchModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by HubController")

public:
    enum Role { RepoIdRole = Qt::UserRole + 1, DownloadsRole, LikesRole, UpdatedRole, GatedRole, PinnedRole };
    Q_ENUM(Role)

    using QAbstractListModel::QAbstractListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void set_hits(std::vector<SearchHit> hits);

private:
    std::vector<SearchHit> hits_;
};

}  // namespace ember::app
