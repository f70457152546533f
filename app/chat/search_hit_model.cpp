#include "app/chat/search_hit_model.h"

namespace ember::app {

QString snippet_html(const QString& snippet) {
    return snippet.toHtmlEscaped()
        .replace(QChar(store::kMatchStart), QStringLiteral("<b>"))
        .replace(QChar(store::kMatchEnd), QStringLiteral("</b>"));
}

int SearchHitModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(hits_.size()); }

QVariant SearchHitModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const store::SearchHit& h = hits_[index.row()];
    switch (role) {
        case ChatIdRole: return h.chatId;
        case MessageIdRole: return h.messageId;
        case ChatTitleRole: return h.chatTitle;
        case Qt::DisplayRole:
        case SnippetRole: return snippet_html(h.snippet);
        default: return {};
    }
}

QHash<int, QByteArray> SearchHitModel::roleNames() const {
    return {{ChatIdRole, "chatId"}, {MessageIdRole, "messageId"}, {ChatTitleRole, "chatTitle"},
            {SnippetRole, "snippet"}, {Qt::DisplayRole, "display"}};
}

void SearchHitModel::set_hits(QList<store::SearchHit> hits) {
    if (!hits_.isEmpty()) {
        beginRemoveRows({}, 0, int(hits_.size()) - 1);
        hits_.clear();
        endRemoveRows();
    }
    if (hits.isEmpty()) return;
    beginInsertRows({}, 0, int(hits.size()) - 1);
    hits_ = std::move(hits);
    endInsertRows();
}

}  // namespace ember::app
