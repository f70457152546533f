#include "app/chat/chat_sections.h"

#include <QCoreApplication>
#include <QLocale>

namespace ember::app {

QString chat_list_section(const store::Chat& chat, const QDateTime& now) {
    if (chat.pinned)
        return QCoreApplication::translate("ChatSections", "Pinned");
    const QDate day = chat.updated.toLocalTime().date();
    const qint64 days_ago = day.daysTo(now.toLocalTime().date());
    // A time ahead of the clock (changed clock, synced from elsewhere) still counts as today.
    if (days_ago <= 0)
        return QCoreApplication::translate("ChatSections", "Today");
    if (days_ago == 1)
        return QCoreApplication::translate("ChatSections", "Yesterday");
    if (days_ago <= 7)
        return QCoreApplication::translate("ChatSections", "Previous 7 days");
    // Translators may reorder: some languages put the year first.
    return QCoreApplication::translate("ChatSections", "%1 %2", "month name, year")
        .arg(QLocale().standaloneMonthName(day.month()), QString::number(day.year()));
}

}  // namespace ember::app
