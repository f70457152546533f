// ChatStore: full-text search over message content (FTS5).
#include "app/store/chat_store.h"

#include "app/store/db.h"
#include "app/store/search_query.h"
#include "app/store/store_guard.h"

#include <QCoreApplication>

namespace ember::store {
namespace {
// Words of context the snippet keeps around the matches.
constexpr int kSnippetTokens = 16;
}  // namespace

Result<QList<SearchHit>> ChatStore::search(const QString& text, int limit) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "search for \"%1\"").arg(text), [&] {
        QList<SearchHit> hits;
        const QString match = ftsMatchExpression(text);
        if (match.isEmpty())
            return hits;
        // rank is FTS5's bm25: best first. Deleted chats stay out of results until purged.
        auto q = m_db->query(
            "SELECT m.chat_id, m.id, c.title, snippet(messages_fts, 0, ?3, ?4, '…', ?5) "
            "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid JOIN chats c ON c.id = m.chat_id "
            "WHERE messages_fts MATCH ?1 AND c.deleted IS NULL ORDER BY rank LIMIT ?2");
        q->bindText(1, match);
        q->bindInt(2, limit);
        q->bindText(3, QString(QChar(kMatchStart)));
        q->bindText(4, QString(QChar(kMatchEnd)));
        q->bindInt(5, kSnippetTokens);
        while (q->step())
            hits.append({q->columnInt(0), q->columnInt(1), q->columnText(2), q->columnText(3)});
        return hits;
    });
}

}  // namespace ember::store
