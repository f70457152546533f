// The Models page in the real window (offscreen): typing a search lists the loopback Hub's
// repos, a result opens its files, Download fills the downloads and then the library list.
// Any QML warning fails the test.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QQuickItem>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtTest>

#include <memory>

#include "app/app_shell.h"
#include "app/hub/download_list_model.h"
#include "gui_test_support.h"
#include "hub_fixture.h"
#include "unsupported_model.h"

Q_IMPORT_QML_PLUGIN(Ember_AppPlugin)
Q_IMPORT_QML_PLUGIN(EmberPlugin)

namespace {

QQuickItem* item(QQuickWindow* window, const char* name) {
    return window->findChild<QQuickItem*>(QString::fromLatin1(name));
}

// The loopback Hub (filled by the test before start()) and the app on the demo model using it,
// its window shown on the Models tab.
struct ModelsPage {
    hub_test::HubFixture server;
    QTemporaryDir dir;
    std::unique_ptr<ember::app::AppShell> shell;
    QQuickWindow* window = nullptr;

    // Empty when the window is up, else why not.
    QString start() {
        QString why;
        if (!server.start(&why)) return why;
        ember::app::AppOptions options;
        options.data_dir = dir.path() + "/data";
        options.model_path = gui_test::copy_demo_model(dir.path());
        options.hub_endpoint = server.endpoint();
        shell = std::make_unique<ember::app::AppShell>(options);
        if (!shell->start()) return QStringLiteral("the app did not start");
        window = qobject_cast<QQuickWindow*>(shell->qml().rootObjects().first());
        if (!window || !QTest::qWaitForWindowExposed(window)) return QStringLiteral("the window did not show");
        item(window, "mainTabs")->setProperty("currentIndex", 1);
        return {};
    }
};

}  // namespace

class TestHubPage : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { gui_test::install_warning_recorder(); }

    void search_open_download_and_library_in_the_window() {
        ModelsPage page;
        page.server.add_tiny_repo();
        const QString why = page.start();
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QQuickWindow* window = page.window;
        window->requestActivate();
        QVERIFY(QTest::qWaitForWindowActive(window));
        QTRY_VERIFY(item(window, "modelsPage")->isVisible());

        // Type a search and press Enter.
        auto* field = item(window, "hubSearchField");
        QVERIFY(field);
        field->forceActiveFocus();
        for (char c : QByteArray("tiny")) QTest::keyClick(window, c);  // Qt 6.4 has no keyClicks for a QWindow
        QTest::keyClick(window, Qt::Key_Return);
        auto* results = item(window, "hubResults");
        QTRY_COMPARE_WITH_TIMEOUT(results->property("count").toInt(), 1, 10000);

        // Open it and download its small model.
        auto& hub = page.shell->hub();
        hub.openRepo(QString::fromLatin1(hub_test::tiny_repo));
        QTRY_COMPARE_WITH_TIMEOUT(item(window, "repoFiles")->property("count").toInt(), 9, 10000);
        QVERIFY(hub.download(QStringLiteral("tiny.q4.powerinfer.gguf")));
        QCOMPARE(item(window, "downloadList")->property("count").toInt(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(item(window, "libraryList")->property("count").toInt(), 1, 15000);
        QVERIFY(QFile::exists(page.dir.path() + "/data/models/" + hub_test::tiny_repo + "/tiny.q4.powerinfer.gguf"));

        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // A paused download keeps its .part and resumes from it: the window says paused, with the
    // bytes it has, not "cancelled · 0 bytes".
    void a_paused_download_says_paused_with_its_bytes() {
        ModelsPage page;
        page.server.add_tiny_repo();
        const QString why = page.start();
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QQuickWindow* window = page.window;
        auto& hub = page.shell->hub();
        hub.openRepo(QString::fromLatin1(hub_test::tiny_repo));
        QTRY_COMPARE_WITH_TIMEOUT(item(window, "repoFiles")->property("count").toInt(), 9, 10000);
        page.server.set_faults(QJsonArray{QJsonObject{{"kind", "throttle"}, {"path", "tiny.powerinfer.gguf"}, {"bytes_per_second", 500000}}});
        QVERIFY(hub.download(QStringLiteral("tiny.powerinfer.gguf")));
        QTRY_VERIFY_WITH_TIMEOUT(hub.downloads()->data(hub.downloads()->index(0), ember::app::DownloadListModel::BytesDoneRole).toDouble() > 200000, 10000);
        hub.cancel(0);
        QQuickItem* state = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((state = gui_test::find_item(window->contentItem(), QStringLiteral("downloadFileState"))) &&
                                     state->property("text").toString().startsWith(QStringLiteral("paused · ")), 10000);
        QVERIFY2(!state->property("text").toString().startsWith(QStringLiteral("paused · 0 bytes")), qPrintable(state->property("text").toString()));
        const auto job = [&](int role) { return hub.downloads()->data(hub.downloads()->index(0), role).toDouble(); };
        const double have = job(ember::app::DownloadListModel::BytesDoneRole);
        QVERIFY(have > 200000);
        QVERIFY(gui_test::shows_text(window->contentItem(), QStringLiteral("Paused at %1 of %2").arg(
            hub.formatBytes(have), hub.formatBytes(job(ember::app::DownloadListModel::BytesTotalRole)))));
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // A file the engine cannot run says so and why before any download, and its button does not
    // offer a plain one-click download.
    void a_file_the_engine_cannot_run_is_not_a_plain_download() {
        ModelsPage page;
        page.server.add_file(QStringLiteral("Test/Gemma3n-Small"), QStringLiteral("gemma3n.Q4_K_M.gguf"), gui_test::gemma3n_gguf());
        page.server.add_repo(QStringLiteral("Test/Gemma3n-Small"));
        const QString why = page.start();
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QQuickWindow* window = page.window;
        QTRY_VERIFY(item(window, "modelsPage")->isVisible());
        page.shell->hub().openRepo(QStringLiteral("Test/Gemma3n-Small"));
        QTRY_COMPARE_WITH_TIMEOUT(item(window, "repoFiles")->property("count").toInt(), 1, 10000);
        // Delegates are found through the item tree: they are not QObject children of the window.
        const auto find = [&](const char* name) { return gui_test::find_item(window->contentItem(), QString::fromLatin1(name)); };
        QTRY_VERIFY_WITH_TIMEOUT(find("cannotRunReason") && find("cannotRunReason")->isVisible(), 10000);
        QCOMPARE(find("cannotRunReason")->property("text").toString(),
                 QStringLiteral("can't run yet: architecture gemma3n is not supported"));
        QVERIFY(!find("fitBadge")->isVisible());
        QCOMPARE(find("downloadButton")->property("text").toString(), QStringLiteral("Download anyway"));
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }
};

QTEST_MAIN(TestHubPage)
#include "tst_hub_page.moc"
