#include "app/store/chat_schema.h"

#include "app/store/db.h"

#include <array>

namespace ember::store {
namespace {

// Times are milliseconds since the Unix epoch, UTC. Tables are STRICT so a wrong type is an
// error, not a silent conversion.
constexpr const char* kVersion1 = R"sql(
CREATE TABLE chats (
    id            INTEGER PRIMARY KEY,
    title         TEXT    NOT NULL,
    created       INTEGER NOT NULL,
    updated       INTEGER NOT NULL,  -- last message activity; orders the list
    pinned        INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    system_prompt TEXT    NOT NULL DEFAULT '',
    settings      TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(settings)),
    model_path    TEXT    NOT NULL DEFAULT '',
    active_leaf   INTEGER REFERENCES messages (id) ON DELETE SET NULL,  -- end of the branch on screen
    deleted       INTEGER  -- set by delete, cleared by undo; such chats are purged on the next primary open
) STRICT;
CREATE INDEX chats_by_list_order ON chats (pinned DESC, updated DESC, id DESC) WHERE deleted IS NULL;
CREATE INDEX chats_by_active_leaf ON chats (active_leaf);

-- Messages form a tree per chat: an edit or a regeneration is a sibling of the message it replaces.
CREATE TABLE messages (
    id            INTEGER PRIMARY KEY,
    chat_id       INTEGER NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    parent_id     INTEGER,
    role          TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
    content       TEXT    NOT NULL,
    created       INTEGER NOT NULL,
    status        TEXT    NOT NULL CHECK (status IN ('complete', 'generating', 'interrupted')),
    ttft_ms       INTEGER,
    prompt_tokens INTEGER,
    prompt_tps    REAL,
    gen_tokens    INTEGER,
    gen_tps       REAL,
    stop_reason   TEXT,
    UNIQUE (chat_id, id),
    -- Keeps a parent inside its child's chat. No cascade: messages go only with their chat, in
    -- one statement, and a cascade along a long branch would nest one level per message.
    FOREIGN KEY (chat_id, parent_id) REFERENCES messages (chat_id, id)
) STRICT;
CREATE INDEX messages_by_parent ON messages (chat_id, parent_id, id);
CREATE INDEX messages_generating ON messages (status) WHERE status = 'generating';

-- Full-text index over message content. A row being generated stays out: it changes every few
-- hundred milliseconds, and is indexed once when it finishes or is marked interrupted.
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content, content = 'messages', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.status <> 'generating' BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages WHEN old.status <> 'generating' BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
-- One trigger, so the old entry is always removed before the new one is added.
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, status ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content)
        SELECT 'delete', old.id, old.content WHERE old.status <> 'generating';
    INSERT INTO messages_fts (rowid, content)
        SELECT new.id, new.content WHERE new.status <> 'generating';
END;
)sql";

void createVersion1(Db& db) {
    db.exec(kVersion1);
}

constexpr std::array kSteps{
    Migration{1, createVersion1},
};

}  // namespace

std::span<const Migration> chatMigrations() {
    return kSteps;
}

}  // namespace ember::store
