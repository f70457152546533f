// The conversation list's headings: pinned chats, then by the day of the last update.
#include <QLocale>
#include <QtTest>

#include "app/chat/chat_sections.h"

class TestChatSections : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }

    void sections_data() {
        QTest::addColumn<bool>("pinned");
        QTest::addColumn<QDateTime>("updated");
        QTest::addColumn<QString>("section");

        const auto at = [](int y, int m, int d, int h = 12, int min = 0) {
            return QDateTime(QDate(y, m, d), QTime(h, min));
        };
        QTest::newRow("pinned, whatever its age") << true << at(2020, 1, 1) << "Pinned";
        QTest::newRow("just after midnight") << false << at(2025, 3, 15, 0, 1) << "Today";
        QTest::newRow("ahead of the clock") << false << at(2025, 3, 16) << "Today";
        QTest::newRow("late yesterday") << false << at(2025, 3, 14, 23, 59) << "Yesterday";
        QTest::newRow("two days ago") << false << at(2025, 3, 13) << "Previous 7 days";
        QTest::newRow("seven days ago") << false << at(2025, 3, 8, 0, 0) << "Previous 7 days";
        QTest::newRow("eight days ago, same month") << false << at(2025, 3, 7, 23, 59) << "March 2025";
        QTest::newRow("last month") << false << at(2025, 2, 28) << "February 2025";
        QTest::newRow("last year") << false << at(2024, 12, 31) << "December 2024";
    }

    void sections() {
        QFETCH(bool, pinned);
        QFETCH(QDateTime, updated);
        QFETCH(QString, section);
        ember::store::Chat chat;
        chat.pinned = pinned;
        chat.updated = updated.toUTC();  // as the store hands it out
        const QDateTime now(QDate(2025, 3, 15), QTime(12, 0));
        QCOMPARE(ember::app::chat_list_section(chat, now), section);
    }
};

QTEST_GUILESS_MAIN(TestChatSections)
#include "tst_chat_sections.moc"
