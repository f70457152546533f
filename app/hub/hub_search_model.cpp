#include "app/hub/hub_search_model.h"

#include <QDateTime>

namespace ember::app {

int HubSearchModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(hits_.size()); }

QVariant HubSearchModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const SearchHit& h = hits_[size_t(index.row())];
    switch (role) {
        case Qt::DisplayRole:
        case RepoIdRole: return QString::fromStdString(h.summary.id);
        case DownloadsRole: return double(h.summary.downloads);
        case LikesRole: return double(h.summary.likes);
        case UpdatedRole:
            return QDateTime::fromString(QString::fromStdString(h.summary.last_modified), Qt::ISODateWithMs)
                .date()
                .toString(Qt::ISODate);
        case GatedRole: return h.summary.gated != hub::Gated::No;
        case PinnedRole: return h.pinned;
        default: return {};
    }
}

QHash<int, QByteArray> HubSearchModel::roleNames() const {
    return {{RepoIdRole, "repoId"}, {DownloadsRole, "downloads"}, {LikesRole, "likes"},
            {UpdatedRole, "updated"}, {GatedRole, "gated"},       {PinnedRole, "pinned"}};
}

void HubSearchModel::set_hits(std::vector<SearchHit> hits) {
    if (!hits_.empty()) {
        beginRemoveRows({}, 0, int(hits_.size()) - 1);
        hits_.clear();
        endRemoveRows();
    }
    if (hits.empty()) return;
    beginInsertRows({}, 0, int(hits.size()) - 1);
    hits_ = std::move(hits);
    endInsertRows();
}

}  // namespace ember::app
