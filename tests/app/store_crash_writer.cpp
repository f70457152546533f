// Child process of tst_store_crash: streams an answer into the chat history until it is killed.
//
//   store_crash_writer DB CHAT PARENT
//
// Prints "begun ID" once the answer's row exists, then "saved N" after each update has
// committed; update N saves "token 0 token 1 … token N ". Updates follow each other without a
// pause (the app saves every few hundred ms) so that a kill often lands inside a commit.
#include "app/store/chat_store.h"

#include <QElapsedTimer>

#include <cstdio>

using ember::store::ChatStore;

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s DB CHAT PARENT\n", argv[0]);
        return 2;
    }
    auto store = ChatStore::open(QString::fromLocal8Bit(argv[1]));
    if (!store) {
        std::fprintf(stderr, "%s\n", qPrintable(store.error()));
        return 1;
    }
    const qint64 chat = QByteArray(argv[2]).toLongLong();
    const qint64 parent = QByteArray(argv[3]).toLongLong();
    const auto answer = store.value()->beginAssistant(chat, parent);
    if (!answer) {
        std::fprintf(stderr, "%s\n", qPrintable(answer.error()));
        return 1;
    }
    std::printf("begun %lld\n", answer.value());
    std::fflush(stdout);

    // A bound, so a writer whose test died does not stream forever.
    QElapsedTimer running;
    running.start();
    QString content;
    for (qint64 n = 0; running.elapsed() < 10'000; ++n) {
        content += QStringLiteral("token %1 ").arg(n);
        if (const auto saved = store.value()->updateGenerating(answer.value(), content); !saved) {
            std::fprintf(stderr, "%s\n", qPrintable(saved.error()));
            return 1;
        }
        std::printf("saved %lld\n", n);
        std::fflush(stdout);
    }
    return 3;  // never killed
}
