// The tray icon's line: idle, an answer being generated, running downloads with their share,
// finished or failed downloads left out.
#include <QStandardItemModel>
#include <QtTest>

#include "app/hub/download_list_model.h"
#include "app/tray/tray_status.h"

using ember::app::DownloadListModel;

namespace {

void add_download(QStandardItemModel& m, const char* state, double done, double total) {
    auto* item = new QStandardItem;
    item->setData(QString::fromLatin1(state), DownloadListModel::StateRole);
    item->setData(done, DownloadListModel::BytesDoneRole);
    item->setData(total, DownloadListModel::BytesTotalRole);
    m.appendRow(item);
}

}  // namespace

class TestTrayStatus : public QObject {
    Q_OBJECT

private slots:
    void lines() {
        QStandardItemModel downloads;
        QCOMPARE(ember::app::tray_status(false, downloads), QStringLiteral("Ready"));
        QCOMPARE(ember::app::tray_status(true, downloads), QStringLiteral("Generating an answer"));
        add_download(downloads, "done", 100, 100);
        add_download(downloads, "failed", 5, 100);
        QCOMPARE(ember::app::tray_status(false, downloads), QStringLiteral("Ready"));
        add_download(downloads, "running", 30, 100);
        QCOMPARE(ember::app::tray_status(false, downloads), QStringLiteral("Downloading a model, 30 %"));
        add_download(downloads, "running", 60, 100);
        QCOMPARE(ember::app::tray_status(false, downloads), QStringLiteral("Downloading 2 models, 45 %"));
        QCOMPARE(ember::app::tray_status(true, downloads),
                 QStringLiteral("Generating an answer · downloading 2 models, 45 %"));
    }
};

QTEST_GUILESS_MAIN(TestTrayStatus)
#include "tst_tray_status.moc"
