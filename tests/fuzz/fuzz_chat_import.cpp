// Importing a chat export (a file a user picks) into the SQLite history: all chats or none, never
// a crash, and the database stays intact. Imported chats export again and import to the same count.
#include <QByteArray>
#include <QDir>
#include <QTemporaryDir>

#include <cstdint>
#include <memory>

#include "app/store/chat_store.h"
#include "fuzz_support.h"

namespace {

ember::store::ChatStore& store() {
    static QTemporaryDir dir(QDir::tempPath() + QStringLiteral("/ember-fuzz-XXXXXX"));
    static std::unique_ptr<ember::store::ChatStore> opened = [] {
        auto s = ember::store::ChatStore::open(dir.filePath(QStringLiteral("chats.db")));
        if (!s) ember::fuzz::fail("cannot open the fuzzing database");
        return std::move(s.value());
    }();
    return *opened;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto& chats = store();
    const auto imported = chats.importJson(QByteArray(reinterpret_cast<const char*>(data), qsizetype(size)));
    if (!imported) return 0;
    for (qint64 id : imported.value()) {
        const auto exported = chats.exportChats(ember::store::ExportFormat::Json, id);
        if (!exported) ember::fuzz::fail("an imported chat does not export");
        const auto again = chats.importJson(exported.value());
        if (!again || again.value().size() != 1) ember::fuzz::fail("an exported chat does not import back");
        (void)chats.deleteChat(again.value().front());
        (void)chats.deleteChat(id);
    }
    (void)chats.purgeDeletedChats();
    return 0;
}
