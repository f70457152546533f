// HubController and its four list models against the loopback Hub (tests/downloader's
// hub_server.py): search with PowerInfer pinned first, a pasted URL opening a PowerInfer-shaped
// repo with its files classified, a model download into <models>/owner/repo/ that the library
// then lists, readable errors, cancel and resume, and Load and Delete from the library.
#include <QAbstractItemModelTester>
#include <QDir>
#include <QDesktopServices>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonObject>
#include <QSignalSpy>
#include <QtTest>

#include <algorithm>
#include <memory>

#include "app/engine/engine_controller.h"
#include "app/hub/library_files.h"
#include "app/hub/download_queue.h"
#include "app/hub/hub_controller.h"
#include "app/hub/repo_input.h"
#include "app/hub/token_keychain.h"
#include "app/settings/app_settings.h"
#include "hub_fixture.h"
#include "unsupported_model.h"

using ember::app::DownloadListModel;
using ember::app::HubController;
using ember::app::LibraryModel;
using ember::app::RepoFilesModel;

namespace {

const QString tiny = QString::fromLatin1(hub_test::tiny_repo);
const QString small_model = QStringLiteral("tiny.q4.powerinfer.gguf");  // 1 MiB
const QString big_model = QStringLiteral("tiny.powerinfer.gguf");       // 3 MiB

QVariant cell(QAbstractItemModel* model, int row, int role) { return model->index(row, 0).data(role); }

// A controller on a fresh models folder, with every list model under a tester.
// Stands in for the desktop's file manager.
class UrlCatcher : public QObject {
    Q_OBJECT
public:
    QUrl opened;
public slots:
    void open(const QUrl& url) { opened = url; }
};

struct Hub {
    Hub(const QString& models_dir, const QString& endpoint, ember::app::EngineController* engine = nullptr,
        const QString& queue_file = {}, ember::app::AppSettings* settings = nullptr)
        : controller(models_dir, endpoint, engine, queue_file, settings),
          testers{std::make_unique<QAbstractItemModelTester>(controller.search_results()),
                  std::make_unique<QAbstractItemModelTester>(controller.repo_files()),
                  std::make_unique<QAbstractItemModelTester>(controller.downloads()),
                  std::make_unique<QAbstractItemModelTester>(controller.library())} {}
    HubController controller;
    std::unique_ptr<QAbstractItemModelTester> testers[4];
};

}  // namespace

class TestHubController : public QObject {
    Q_OBJECT

    hub_test::HubFixture server_;
    int models_count_ = 0;

    // A models folder no other test has written to.
    QString fresh_models_dir() { return server_.dir() + QStringLiteral("/app-models-%1").arg(++models_count_); }

    // Opens the tiny repo and waits for its model files' fit badges too, so the header reads
    // behind them are over before a test sets faults on those files.
    bool open_tiny(HubController& hub) {
        if (!hub.openRepo(tiny)) return false;
        return QTest::qWaitFor([&] { return !hub.opening(); }, 10000) && hub.repo_id() == tiny &&
               QTest::qWaitFor([&] {
                   return !cell(hub.repo_files(), 0, RepoFilesModel::FitKindRole).toString().isEmpty() &&
                          !cell(hub.repo_files(), 1, RepoFilesModel::FitKindRole).toString().isEmpty();
               }, 10000);
    }

    // Opens the tiny repo, starts a download of `model` throttled to `rate` bytes/s and waits
    // until a tenth of a second's worth has arrived.
    bool start_slow_download(HubController& hub, const QString& model, int rate) {
        if (!open_tiny(hub)) return false;
        server_.set_faults(QJsonArray{QJsonObject{{"kind", "throttle"}, {"path", model}, {"bytes_per_second", rate}}});
        return hub.download(model) && QTest::qWaitFor([&] {
                   return cell(hub.downloads(), 0, DownloadListModel::BytesDoneRole).toDouble() > rate / 10;
               }, 10000);
    }

    static QString state(HubController& hub, int row) {
        return cell(hub.downloads(), row, DownloadListModel::StateRole).toString();
    }

private slots:
    void initTestCase() {
        server_.add_tiny_repo();
        server_.add_file(QStringLiteral("Other/Llama-7B-GGUF"), QStringLiteral("llama.Q4_K_M.gguf"), "dense");
        server_.add_repo(QStringLiteral("Other/Llama-7B-GGUF"));
        server_.add_file(QStringLiteral("PowerInfer/Gated-GGUF"), QStringLiteral("gated.powerinfer.gguf"), "sparse");
        server_.add_repo(QStringLiteral("PowerInfer/Gated-GGUF"), {{"gated", true}});
        // A real PowerInfer model and its statistics, for the fit badge.
        const QString real = QStringLiteral(EMBER_TEST_DATA_DIR) + "/tiny-relu-llama";
        QFile model(real + "/model.q4_0.powerinfer.gguf");
        QVERIFY(model.open(QIODevice::ReadOnly));
        server_.add_file(QStringLiteral("Test/Small-Sparse"), QStringLiteral("model.q4_0.powerinfer.gguf"), model.readAll());
        server_.add_repo(QStringLiteral("Test/Small-Sparse"));
        // A well-formed file of an architecture Ember does not run.
        server_.add_file(QStringLiteral("Test/Gemma3n-Small"), QStringLiteral("gemma3n.Q4_K_M.gguf"), gui_test::gemma3n_gguf());
        server_.add_repo(QStringLiteral("Test/Gemma3n-Small"));
        // Listed first by name, a file the engine cannot run; then one it can.
        server_.add_file(QStringLiteral("Test/Mixed"), QStringLiteral("a-gemma3n.Q4_K_M.gguf"), gui_test::gemma3n_gguf());
        QFile dense(real + "/model.dense.q4_0.gguf");
        QVERIFY(dense.open(QIODevice::ReadOnly));
        server_.add_file(QStringLiteral("Test/Mixed"), QStringLiteral("b-tiny.Q4_0.gguf"), dense.readAll());
        server_.add_repo(QStringLiteral("Test/Mixed"));
        QString why;
        QVERIFY2(server_.start(&why), qPrintable(why));
    }

    void repo_input_accepts_ids_and_urls_data() {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("repo");
        QTest::newRow("id") << "PowerInfer/ReluLLaMA-7B" << "PowerInfer/ReluLLaMA-7B";
        QTest::newRow("url") << "https://huggingface.co/PowerInfer/ReluLLaMA-7B" << "PowerInfer/ReluLLaMA-7B";
        QTest::newRow("page") << "https://huggingface.co/a/b/tree/main/activation" << "a/b";
        QTest::newRow("no scheme") << " huggingface.co/a/b-c.d_e/ " << "a/b-c.d_e";
        QTest::newRow("one part") << "llama" << "";
        QTest::newRow("bad chars") << "a b/c" << "";
    }
    void repo_input_accepts_ids_and_urls() {
        QFETCH(QString, input);
        QFETCH(QString, repo);
        QCOMPARE(ember::app::repo_from_input(input), repo);
    }

    void search_lists_repos_powerinfer_first() {
        Hub h(fresh_models_dir(), server_.endpoint());
        HubController& hub = h.controller;
        QSignalSpy changed(&hub, &HubController::searchChanged);
        hub.search(QStringLiteral("gguf"), QStringLiteral("likes"));
        QVERIFY(hub.searching());
        QTRY_VERIFY_WITH_TIMEOUT(!hub.searching(), 10000);
        QVERIFY2(hub.search_error().isEmpty(), qPrintable(hub.search_error()));
        auto* results = hub.search_results();
        // The server lists ids alphabetically, "Other/…" first: PowerInfer's come first only if pinned.
        QCOMPARE(results->rowCount(), 3);
        QCOMPARE(cell(results, 0, ember::app::HubSearchModel::PinnedRole).toBool(), true);
        QVERIFY(cell(results, 0, ember::app::HubSearchModel::RepoIdRole).toString().startsWith("PowerInfer/"));
        QVERIFY(cell(results, 1, ember::app::HubSearchModel::RepoIdRole).toString().startsWith("PowerInfer/"));
        QCOMPARE(cell(results, 2, ember::app::HubSearchModel::RepoIdRole).toString(), "Other/Llama-7B-GGUF");
        QCOMPARE(cell(results, 2, ember::app::HubSearchModel::PinnedRole).toBool(), false);
        QCOMPARE(cell(results, 2, ember::app::HubSearchModel::UpdatedRole).toString(), "2024-01-01");
        QVERIFY(server_.stats()["last_search"].toString().contains("sort=likes"));

        // A narrower search replaces the rows.
        hub.search(QStringLiteral("llama"), QStringLiteral("updated"));
        QTRY_VERIFY_WITH_TIMEOUT(!hub.searching(), 10000);
        QCOMPARE(results->rowCount(), 1);
        QVERIFY(server_.stats()["last_search"].toString().contains("sort=lastModified"));
        QVERIFY(changed.count() >= 4);
    }

    void opening_a_url_lists_the_files_classified() {
        Hub h(fresh_models_dir(), server_.endpoint());
        HubController& hub = h.controller;
        QVERIFY(hub.openRepo(server_.endpoint() + "/" + tiny + "/tree/main"));
        QTRY_VERIFY_WITH_TIMEOUT(!hub.opening(), 10000);
        QVERIFY2(hub.repo_error().isEmpty(), qPrintable(hub.repo_error()));
        QCOMPARE(hub.repo_id(), tiny);
        QVERIFY(!hub.repo_gated());
        auto* files = hub.repo_files();
        QCOMPARE(files->rowCount(), 9);  // 2 GGUFs, config.json, README.md, 4 activation files, .gitattributes
        QCOMPARE(cell(files, 0, RepoFilesModel::PathRole).toString(), big_model);
        QCOMPARE(cell(files, 0, RepoFilesModel::KindRole).toString(), "sparse");
        QCOMPARE(cell(files, 0, RepoFilesModel::IsModelRole).toBool(), true);
        QCOMPARE(cell(files, 1, RepoFilesModel::PathRole).toString(), small_model);
        QCOMPARE(cell(files, 1, RepoFilesModel::QuantizationRole).toString(), "Q4");
        QCOMPARE(cell(files, 1, RepoFilesModel::SizeRole).toDouble(), double(1 << 20));
        // The model, its four activation files, config.json and README.md.
        QCOMPARE(cell(files, 1, RepoFilesModel::DownloadFilesRole).toInt(), 7);
        QVERIFY(cell(files, 1, RepoFilesModel::DownloadBytesRole).toDouble() > double(1 << 20) + 80000);
        QCOMPARE(cell(files, 2, RepoFilesModel::KindRole).toString(), "config");
        QCOMPARE(cell(files, 4, RepoFilesModel::KindRole).toString(), "activation");
        QCOMPARE(cell(files, 8, RepoFilesModel::KindRole).toString(), "other");
        QCOMPARE(cell(files, 8, RepoFilesModel::IsModelRole).toBool(), false);
        QVERIFY(!hub.download(QStringLiteral("config.json")));
    }

    void download_fills_the_library_and_delete_empties_it() {
        const QString models = fresh_models_dir();
        Hub h(models, server_.endpoint());
        HubController& hub = h.controller;
        QVERIFY(open_tiny(hub));
        // Slow enough (2 MB/s) for progress to show between start and end.
        server_.set_faults(QJsonArray{QJsonObject{{"kind", "throttle"}, {"path", small_model}, {"bytes_per_second", 2000000}}});
        QList<double> progress;
        connect(hub.downloads(), &QAbstractItemModel::dataChanged, this, [&](const QModelIndex& top) {
            progress << top.data(DownloadListModel::ProgressRole).toDouble();
        });
        QVERIFY(hub.download(small_model));
        QCOMPARE(hub.downloads()->rowCount(), 1);
        QCOMPARE(cell(hub.downloads(), 0, DownloadListModel::ModelRole).toString(), small_model);
        QTRY_COMPARE_WITH_TIMEOUT(state(hub, 0), QStringLiteral("done"), 15000);
        server_.set_faults({});
        QVERIFY(std::any_of(progress.begin(), progress.end(), [](double p) { return p > 0 && p < 1; }));
        QCOMPARE(progress.last(), 1.0);
        QCOMPARE(cell(hub.downloads(), 0, DownloadListModel::FilesRole).toList().size(), 7);

        const QString repo_dir = models + "/" + tiny;
        QCOMPARE(QFile(repo_dir + "/" + small_model).size(), qint64(1 << 20));
        QVERIFY(QFile::exists(repo_dir + "/activation/activation_3.pt"));
        QVERIFY(QFile::exists(repo_dir + "/config.json"));
        QVERIFY(!QFile::exists(repo_dir + "/" + big_model));

        auto* library = hub.library();
        QTRY_COMPARE_WITH_TIMEOUT(library->rowCount(), 1, 5000);
        QCOMPARE(cell(library, 0, LibraryModel::RepoRole).toString(), tiny);
        QCOMPARE(cell(library, 0, LibraryModel::FileRole).toString(), small_model);
        QCOMPARE(cell(library, 0, LibraryModel::SparseRole).toBool(), true);
        QCOMPARE(cell(library, 0, LibraryModel::QuantizationRole).toString(), "Q4");
        QCOMPARE(cell(library, 0, LibraryModel::SizeRole).toDouble(),
                 cell(hub.repo_files(), 1, RepoFilesModel::DownloadBytesRole).toDouble());

        // Delete takes the placement cache along, then the folder it leaves empty.
        QFile gpuidx(repo_dir + "/" + small_model + ".generated.gpuidx");
        QVERIFY(gpuidx.open(QIODevice::WriteOnly));
        gpuidx.close();
        hub.deleteModel(0);
        QTRY_COMPARE_WITH_TIMEOUT(library->rowCount(), 0, 5000);
        QVERIFY(hub.library_error().isEmpty());
        QVERIFY(!QFileInfo::exists(repo_dir));
    }

    void errors_say_why() {
        Hub h(fresh_models_dir(), server_.endpoint());
        HubController& hub = h.controller;
        QVERIFY(!hub.openRepo(QStringLiteral("llama")));
        QVERIFY(hub.repo_error().contains("names no Hub repo"));

        QVERIFY(hub.openRepo(QStringLiteral("nobody/missing")));
        QTRY_VERIFY_WITH_TIMEOUT(!hub.opening(), 10000);
        // In the window's words: what to do, where the token goes, no URL, no environment variable.
        QVERIFY2(hub.repo_error().startsWith("nobody/missing was not found on Hugging Face; if it is private, enter your "
                                             "Hugging Face access token in the field above the repo's files"),
                 qPrintable(hub.repo_error()));
        QVERIFY(!hub.repo_error().contains("http") && !hub.repo_error().contains("HF_TOKEN"));
        QVERIFY(hub.repo_refused());  // the token field shows
        QCOMPARE(hub.repo_files()->rowCount(), 0);

        // A gated repo lists its files; its download fails saying what to do, and Retry tries again.
        QVERIFY(hub.openRepo(QStringLiteral("PowerInfer/Gated-GGUF")));
        QTRY_VERIFY_WITH_TIMEOUT(!hub.opening(), 10000);
        QVERIFY(hub.repo_gated());
        QVERIFY(hub.download(QStringLiteral("gated.powerinfer.gguf")));
        QTRY_COMPARE_WITH_TIMEOUT(state(hub, 0), QStringLiteral("failed"), 10000);
        const QString error = cell(hub.downloads(), 0, DownloadListModel::ErrorRole).toString();
        QVERIFY2(error.startsWith("PowerInfer/Gated-GGUF is gated: accept the model's conditions on its Hugging Face "
                                  "page, then enter your Hugging Face access token"),
                 qPrintable(error));
        QVERIFY2(!error.contains("http") && !error.contains("HF_TOKEN"), qPrintable(error));
        hub.retry(0);
        QCOMPARE(state(hub, 0), QStringLiteral("running"));
        QVERIFY(cell(hub.downloads(), 0, DownloadListModel::ErrorRole).toString().isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(state(hub, 0), QStringLiteral("failed"), 10000);
        QCOMPARE(hub.downloads()->rowCount(), 1);

        // The user enters a token: saved in Hugging Face's token file (here under a scratch
        // HF_HOME), used at once, and Retry now finishes.
        QTemporaryDir home;
        qputenv("HF_HOME", home.path().toUtf8());
        QVERIFY(!hub.has_token());
        QVERIFY(!hub.setToken(QStringLiteral("not a token")));
        QVERIFY(!hub.token_error().isEmpty());
        // A repo the Hub refused without a token is asked for again once one is saved.
        QVERIFY(hub.openRepo(QStringLiteral("nobody/missing")));
        QTRY_VERIFY_WITH_TIMEOUT(!hub.opening() && hub.repo_refused(), 10000);
        QVERIFY(hub.setToken(QString::fromLatin1(hub_test::token)));
        QVERIFY(hub.has_token());
        QVERIFY(hub.opening());
        QTRY_VERIFY_WITH_TIMEOUT(!hub.opening(), 10000);
        QCOMPARE(hub.repo_error(), QStringLiteral("nobody/missing was not found on Hugging Face."));
        QVERIFY(!hub.repo_refused());
        QVERIFY(hub.token_error().isEmpty());
        QVERIFY2(hub.token_place().contains(QLatin1String("token file")), qPrintable(hub.token_place()));
        QFile saved(home.path() + "/token");
        QVERIFY(saved.open(QIODevice::ReadOnly));
        QCOMPARE(saved.readAll().trimmed(), QByteArray(hub_test::token));
        hub.retry(0);
        QTRY_COMPARE_WITH_TIMEOUT(state(hub, 0), QStringLiteral("done"), 10000);
        hub.forgetToken();
        QVERIFY(!hub.has_token());
        QVERIFY(!QFile::exists(home.path() + "/token"));
        qunsetenv("HF_HOME");
    }

    // With QtKeychain but no keychain to reach (no session bus here, as on a server or in CI),
    // the token still gets saved: in Hugging Face's token file, saying why not in the keychain.
    void token_without_a_keychain_goes_to_the_file() {
        if (!ember::app::TokenKeychain::built_in()) QSKIP("this build has no QtKeychain");
        const QByteArray bus = qgetenv("DBUS_SESSION_BUS_ADDRESS"), display = qgetenv("DISPLAY");
        qputenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/ember-test-bus");
        qunsetenv("DISPLAY");
        QTemporaryDir home;
        qputenv("HF_HOME", home.path().toUtf8());
        {
            ember::app::TokenKeychain keychain;
            Hub h(fresh_models_dir(), server_.endpoint());
            HubController& hub = h.controller;
            hub.set_keychain(&keychain);
            QVERIFY(hub.setToken(QString::fromLatin1(hub_test::token)));
            QTRY_VERIFY_WITH_TIMEOUT(hub.has_token(), 10000);
            QVERIFY2(hub.token_place().contains(QLatin1String("token file")), qPrintable(hub.token_place()));
            QVERIFY2(hub.token_place().contains(QLatin1String("no system keychain")), qPrintable(hub.token_place()));
            QFile saved(home.path() + "/token");
            QVERIFY(saved.open(QIODevice::ReadOnly));
            QCOMPARE(saved.readAll().trimmed(), QByteArray(hub_test::token));
            hub.forgetToken();
            QVERIFY(!QFile::exists(home.path() + "/token"));
        }
        qunsetenv("HF_HOME");
        if (bus.isEmpty()) qunsetenv("DBUS_SESSION_BUS_ADDRESS");
        else qputenv("DBUS_SESSION_BUS_ADDRESS", bus);
        if (!display.isEmpty()) qputenv("DISPLAY", display);
    }

    // HF_TOKEN is read from the environment and kept in memory: it never shows up in a log
    // message, an error shown to the user, or a file the app writes, right token or wrong.
    void token_stays_out_of_messages_and_files() {
        static QStringList messages;
        messages.clear();
        const QtMessageHandler previous = qInstallMessageHandler(
            [](QtMsgType, const QMessageLogContext&, const QString& message) { messages << message; });
        for (const QByteArray& secret : {QByteArray(hub_test::token), QByteArray("hf_wrong_secret_4242")}) {
            qputenv("HF_TOKEN", secret);
            const QString models = fresh_models_dir();
            {
                Hub h(models, server_.endpoint());
                HubController& hub = h.controller;
                QVERIFY(hub.openRepo(QStringLiteral("PowerInfer/Gated-GGUF")));
                QTRY_VERIFY_WITH_TIMEOUT(!hub.opening(), 10000);
                QVERIFY(hub.download(QStringLiteral("gated.powerinfer.gguf")));
                const QString expected = secret == hub_test::token ? QStringLiteral("done") : QStringLiteral("failed");
                QTRY_COMPARE_WITH_TIMEOUT(state(hub, 0), expected, 10000);
                QVERIFY(!cell(hub.downloads(), 0, DownloadListModel::ErrorRole).toString().contains(secret));
                QVERIFY(!hub.repo_error().contains(secret));
            }
            QDirIterator files(models, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
            while (files.hasNext()) {
                QFile f(files.next());
                QVERIFY(f.open(QIODevice::ReadOnly));
                QVERIFY2(!f.readAll().contains(secret), qPrintable(f.fileName()));
            }
        }
        qunsetenv("HF_TOKEN");
        qInstallMessageHandler(previous);
        for (const QString& message : messages) QVERIFY2(!message.contains(QLatin1String("hf_")), qPrintable(message));
    }

    void cancel_leaves_no_final_file_and_resume_finishes() {
        const QString models = fresh_models_dir();
        Hub h(models, server_.endpoint());
        HubController& hub = h.controller;
        QVERIFY(open_tiny(hub));
        server_.set_faults(QJsonArray{QJsonObject{{"kind", "throttle"}, {"path", big_model}, {"bytes_per_second", 1000000}}});
        QVERIFY(hub.download(big_model));
        QTRY_VERIFY_WITH_TIMEOUT(cell(hub.downloads(), 0, DownloadListModel::BytesDoneRole).toDouble() > 200000, 10000);
        hub.cancel(0);
        QTRY_COMPARE_WITH_TIMEOUT(state(hub, 0), QStringLiteral("cancelled"), 5000);
        const QString final_path = models + "/" + tiny + "/" + big_model;
        QVERIFY(!QFile::exists(final_path));
        QVERIFY(QFile(final_path + ".part").size() > 0);
        QCOMPARE(hub.library()->rowCount(), 0);

        server_.set_faults({});
        const int ranges_before = server_.stats()["range_requests"].toInt();
        hub.retry(0);
        QTRY_COMPARE_WITH_TIMEOUT(state(hub, 0), QStringLiteral("done"), 15000);
        QCOMPARE(QFile(final_path).size(), qint64(3 << 20));
        QVERIFY(!QFile::exists(final_path + ".part"));
        QVERIFY(server_.stats()["range_requests"].toInt() > ranges_before);  // resumed, not restarted
        QTRY_COMPARE_WITH_TIMEOUT(hub.library()->rowCount(), 1, 5000);
    }

    // A download running when the app quits resumes by itself at the next start, from its .part
    // files; one the user paused comes back paused with the bytes it has, until Resume; Remove
    // forgets it with its .part files.
    void downloads_survive_a_restart() {
        const QString models = fresh_models_dir();
        const QString queue = models + ".downloads.json";
        const QString final_big = models + "/" + tiny + "/" + big_model;
        {
            Hub h(models, server_.endpoint(), nullptr, queue);
            QVERIFY(start_slow_download(h.controller, big_model, 1000000));
        }  // quits mid-download
        QVERIFY(!QFile::exists(final_big));
        QVERIFY(QFile(final_big + ".part").size() > 0);
        server_.set_faults({});
        const int ranges_before = server_.stats()["range_requests"].toInt();
        {
            Hub h(models, server_.endpoint(), nullptr, queue);
            QCOMPARE(h.controller.downloads()->rowCount(), 1);
            QCOMPARE(cell(h.controller.downloads(), 0, DownloadListModel::ModelRole).toString(), big_model);
            QTRY_COMPARE_WITH_TIMEOUT(state(h.controller, 0), QStringLiteral("done"), 15000);
            QCOMPARE(QFile(final_big).size(), qint64(3 << 20));
            QVERIFY(server_.stats()["range_requests"].toInt() > ranges_before);  // resumed, not restarted
        }
        QString error;
        QVERIFY(ember::app::read_download_queue(queue, &error).empty());
        QVERIFY2(error.isEmpty(), qPrintable(error));

        const QString final_small = models + "/" + tiny + "/" + small_model;
        {
            Hub h(models, server_.endpoint(), nullptr, queue);
            QVERIFY(start_slow_download(h.controller, small_model, 500000));
            h.controller.cancel(0);
            QTRY_COMPARE_WITH_TIMEOUT(state(h.controller, 0), QStringLiteral("cancelled"), 5000);
        }
        server_.set_faults({});
        const qint64 part = QFile(final_small + ".part").size();
        QVERIFY(part > 0);
        Hub h(models, server_.endpoint(), nullptr, queue);
        HubController& hub = h.controller;
        QCOMPARE(hub.downloads()->rowCount(), 1);
        QCOMPARE(state(hub, 0), QStringLiteral("cancelled"));  // paused: nothing starts by itself
        QVERIFY(cell(hub.downloads(), 0, DownloadListModel::BytesDoneRole).toDouble() >= double(part));
        QTest::qWait(300);
        QCOMPARE(QFile(final_small + ".part").size(), part);
        hub.removeDownload(0);
        QCOMPARE(hub.downloads()->rowCount(), 0);
        QVERIFY(!QFile::exists(final_small + ".part"));
        QVERIFY(!QFile::exists(final_small));
        QVERIFY(ember::app::read_download_queue(queue, &error).empty());
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }

    // A saved list that cannot be read is set aside untouched, with an error naming it.
    void a_malformed_download_list_is_kept_aside() {
        const QString models = fresh_models_dir();
        QDir().mkpath(models);
        const QString queue = models + ".downloads.json";
        const QByteArray bad = R"({"downloads": [{"model": 3, "repo": "a/b"}]})";
        {
            QFile f(queue);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(bad);
        }
        Hub h(models, server_.endpoint(), nullptr, queue);
        QCOMPARE(h.controller.downloads()->rowCount(), 0);
        const QString error = h.controller.downloads_error();
        QVERIFY2(error.contains(queue) && error.contains(QLatin1String("\"model\"")), qPrintable(error));
        QFile aside(queue + ".bad");
        QVERIFY(aside.open(QIODevice::ReadOnly));
        QCOMPARE(aside.readAll(), bad);
    }

    // Each model file gets a fit badge from its header alone (the first bytes, by Range): the
    // real model's is the placement solver's answer for this machine without a GPU; a file that
    // is not a GGUF says why its fit is unknown.
    void model_files_get_a_fit_badge() {
        Hub h(fresh_models_dir(), server_.endpoint());
        HubController& hub = h.controller;
        QVERIFY(hub.openRepo(QStringLiteral("Test/Small-Sparse")));
        auto* files = hub.repo_files();
        QTRY_COMPARE_WITH_TIMEOUT(cell(files, 0, RepoFilesModel::FitKindRole).toString(), QStringLiteral("cpu"), 10000);
        QCOMPARE(cell(files, 0, RepoFilesModel::FitRole).toString(), QStringLiteral("CPU only (no GPU in use)"));

        QVERIFY(open_tiny(hub));
        QCOMPARE(cell(files, 0, RepoFilesModel::FitKindRole).toString(), QStringLiteral("unknown"));
        const QString why = cell(files, 0, RepoFilesModel::FitRole).toString();
        QVERIFY2(why.contains(QLatin1String("not a GGUF file")), qPrintable(why));
    }

    // A file the engine cannot run says so and why before any download, in the loader's words.
    void a_file_the_engine_cannot_run_says_so() {
        Hub h(fresh_models_dir(), server_.endpoint());
        HubController& hub = h.controller;
        QVERIFY(hub.openRepo(QStringLiteral("Test/Gemma3n-Small")));
        auto* files = hub.repo_files();
        QTRY_COMPARE_WITH_TIMEOUT(cell(files, 0, RepoFilesModel::FitKindRole).toString(), QStringLiteral("cannotrun"), 10000);
        QCOMPARE(cell(files, 0, RepoFilesModel::FitRole).toString(),
                 QStringLiteral("can't run yet: architecture gemma3n is not supported"));
    }

    // Once their fits are known, the files this machine can run lead the list and those the
    // engine cannot run trail it, whatever their names.
    void runnable_files_are_listed_first() {
        Hub h(fresh_models_dir(), server_.endpoint());
        HubController& hub = h.controller;
        QVERIFY(hub.openRepo(QStringLiteral("Test/Mixed")));
        auto* files = hub.repo_files();
        QTRY_COMPARE_WITH_TIMEOUT(cell(files, 1, RepoFilesModel::FitKindRole).toString(), QStringLiteral("cannotrun"), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(cell(files, 0, RepoFilesModel::FitKindRole).toString(), QStringLiteral("cpu"), 10000);
        QCOMPARE(cell(files, 0, RepoFilesModel::PathRole).toString(), QStringLiteral("b-tiny.Q4_0.gguf"));
        QCOMPARE(cell(files, 1, RepoFilesModel::PathRole).toString(), QStringLiteral("a-gemma3n.Q4_K_M.gguf"));
    }

    // Without a GPU the VRAM slider drives the sim device: the badges preview a card of that size
    // through the placement solver, and say it is a preview; a budget of 0 is the CPU again.
    void fit_badges_preview_the_slider_budget() {
        const QString models = fresh_models_dir();
        ember::app::EngineController engine(nullptr);
        engine.loadModel(ember::app::copy_model_with_statistics(QStringLiteral(EMBER_DEMO_MODEL), models + "/engine"));
        QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Ready, 30000);
        if (engine.device_name() != QLatin1String("sim")) QSKIP("a GPU is in use: the badges show its real budget");
        Hub h(models, server_.endpoint(), &engine);
        HubController& hub = h.controller;
        QVERIFY(hub.openRepo(QStringLiteral("Test/Small-Sparse")));
        auto* files = hub.repo_files();
        engine.setBudget(double(1ull << 30));
        QTRY_COMPARE_WITH_TIMEOUT(cell(files, 0, RepoFilesModel::FitKindRole).toString(), QStringLiteral("gpu"), 10000);
        QString text = cell(files, 0, RepoFilesModel::FitRole).toString();
        QVERIFY2(text.startsWith(QLatin1String("all on GPU")) && text.endsWith(QLatin1String("(preview of a 1.0 GiB GPU)")),
                 qPrintable(text));
        engine.setBudget(0);
        QTRY_COMPARE_WITH_TIMEOUT(cell(files, 0, RepoFilesModel::FitKindRole).toString(), QStringLiteral("cpu"), 10000);
        text = cell(files, 0, RepoFilesModel::FitRole).toString();
        QVERIFY2(!text.contains(QLatin1String("preview")), qPrintable(text));
    }

    void library_loads_into_the_engine() {
        const QString models = fresh_models_dir();
        const QString dir = models + "/Test/Tiny-ReLU";
        const QString src = QFileInfo(QStringLiteral(EMBER_DEMO_MODEL)).absolutePath();
        const QString name = QFileInfo(QStringLiteral(EMBER_DEMO_MODEL)).fileName();
        QVERIFY(QDir().mkpath(dir + "/activation"));
        QVERIFY(QFile::copy(src + "/" + name, dir + "/" + name));
        for (const QString& f : QDir(src + "/activation").entryList(QDir::Files))
            QVERIFY(QFile::copy(src + "/activation/" + f, dir + "/activation/" + f));
        QFile::copy(src + "/" + name, dir + "/unfinished.gguf.part");  // a .part is not a model

        ember::app::EngineController engine(nullptr);
        Hub h(models, server_.endpoint(), &engine);
        HubController& hub = h.controller;
        QTRY_COMPARE_WITH_TIMEOUT(hub.library()->rowCount(), 1, 5000);
        QCOMPARE(cell(hub.library(), 0, LibraryModel::SparseRole).toBool(), true);
        hub.loadModel(0);
        QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Ready, 30000);
        QCOMPARE(engine.model_path(), dir + "/" + name);
        QVERIFY(engine.sparse());
        QVERIFY(QFile::exists(dir + "/" + name + ".generated.gpuidx"));
    }

    // The library's files get the same fit as the Hub's, read from their own headers: the
    // placement solver's answer for a model, the loader's reason for one it cannot run, and why
    // the fit is unknown for a file that is not a GGUF.
    void library_files_get_their_fit() {
        const QString models = fresh_models_dir();
        const QString demo = models + "/Test/Tiny-ReLU/" + QFileInfo(QStringLiteral(EMBER_DEMO_MODEL)).fileName();
        const QString gemma = models + "/Test/Gemma3n-Small/gemma3n.Q4_K_M.gguf";
        const QString broken = models + "/Test/Broken/broken.Q4_0.gguf";
        for (const QString& f : {demo, gemma, broken}) QVERIFY(QDir().mkpath(QFileInfo(f).absolutePath()));
        QVERIFY(QFile::copy(QStringLiteral(EMBER_DEMO_MODEL), demo));
        const auto write = [](const QString& path, const QByteArray& bytes) {
            QFile f(path);
            return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
        };
        QVERIFY(write(gemma, gui_test::gemma3n_gguf()));
        QVERIFY(write(broken, QByteArray("this is no GGUF, only its name says so")));

        Hub h(models, server_.endpoint());
        HubController& hub = h.controller;
        auto* library = hub.library();
        QTRY_COMPARE_WITH_TIMEOUT(library->rowCount(), 3, 5000);
        const auto row_of = [&](const QString& path) {
            for (int r = 0; r < library->rowCount(); ++r)
                if (cell(library, r, LibraryModel::PathRole).toString() == path) return r;
            return -1;
        };
        QTRY_COMPARE(cell(library, row_of(demo), LibraryModel::FitRole).toString(), QStringLiteral("cpu"));
        QCOMPARE(cell(library, row_of(demo), LibraryModel::FitTextRole).toString(), QStringLiteral("CPU only (no GPU in use)"));
        QCOMPARE(cell(library, row_of(gemma), LibraryModel::FitRole).toString(), QStringLiteral("cannotrun"));
        QCOMPARE(cell(library, row_of(gemma), LibraryModel::FitTextRole).toString(),
                 QStringLiteral("can't run yet: architecture gemma3n is not supported"));
        QCOMPARE(cell(library, row_of(broken), LibraryModel::FitRole).toString(), QStringLiteral("unknown"));
        const QString why = cell(library, row_of(broken), LibraryModel::FitTextRole).toString();
        QVERIFY2(why.contains(QLatin1String("not a GGUF file")), qPrintable(why));
    }

    void added_folder_is_used_in_place() {
        // The user's own folder of GGUF files, outside Ember's models folder: listed, loaded and
        // unloaded where it is; "Remove" forgets the folder and leaves every file.
        QTemporaryDir own;
        const QString src = QFileInfo(QStringLiteral(EMBER_DEMO_MODEL)).absolutePath();
        const QString name = QFileInfo(QStringLiteral(EMBER_DEMO_MODEL)).fileName();
        const QString dir = own.path() + "/my-models";
        QVERIFY(QDir().mkpath(dir + "/activation"));
        QVERIFY(QFile::copy(src + "/" + name, dir + "/" + name));
        for (const QString& f : QDir(src + "/activation").entryList(QDir::Files))
            QVERIFY(QFile::copy(src + "/activation/" + f, dir + "/activation/" + f));

        const QString models = fresh_models_dir();
        ember::app::AppSettings settings(own.path() + "/settings.json");
        ember::app::EngineController engine(nullptr);
        Hub h(models, server_.endpoint(), &engine, {}, &settings);
        HubController& hub = h.controller;

        QVERIFY(!hub.addFolder(own.path() + "/missing"));
        QVERIFY2(hub.library_error().contains("is not a folder"), qPrintable(hub.library_error()));
        QVERIFY(!hub.addFolder(own.path() + "/my-models/activation"));
        QVERIFY2(hub.library_error().contains("holds no .gguf file"), qPrintable(hub.library_error()));
        QVERIFY(QDir().mkpath(models + "/Some/Repo"));
        QVERIFY(QFile::copy(src + "/" + name, models + "/Some/Repo/" + name));
        QVERIFY(!hub.addFolder(models + "/Some/Repo"));
        QVERIFY2(hub.library_error().contains("already in the library"), qPrintable(hub.library_error()));
        hub.refreshLibrary();
        QTRY_COMPARE_WITH_TIMEOUT(hub.library()->rowCount(), 1, 5000);  // the downloaded-style copy

        QVERIFY(hub.addFolder(dir));
        QVERIFY(hub.library_error().isEmpty());
        QCOMPARE(settings.library_folders(), QStringList{dir});
        QTRY_COMPARE_WITH_TIMEOUT(hub.library()->rowCount(), 2, 5000);
        int row = -1;
        for (int r = 0; r < 2; ++r)
            if (!cell(hub.library(), r, LibraryModel::FolderRole).toString().isEmpty()) row = r;
        QVERIFY(row >= 0);
        QCOMPARE(cell(hub.library(), row, LibraryModel::RepoRole).toString(), QStringLiteral("my-models"));
        QCOMPARE(cell(hub.library(), row, LibraryModel::PathRole).toString(), dir + "/" + name);
        QCOMPARE(cell(hub.library(), row, LibraryModel::SparseRole).toBool(), true);

        // Show opens the model's folder in the file manager (the URL handler stands in for it).
        UrlCatcher catcher;
        QDesktopServices::setUrlHandler(QStringLiteral("file"), &catcher, "open");
        hub.revealModel(row);
        QDesktopServices::unsetUrlHandler(QStringLiteral("file"));
        QCOMPARE(catcher.opened, QUrl::fromLocalFile(dir));

        hub.loadModel(row);
        QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Ready, 30000);
        QCOMPARE(engine.model_path(), dir + "/" + name);
        QSignalSpy changed(&engine, &ember::app::EngineController::modelChanged);
        engine.unloadModel();
        QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Empty, 10000);
        QVERIFY(engine.model_path().isEmpty());
        QCOMPARE(engine.layers()->rowCount(), 0);  // the split view shows no stale layers
        QVERIFY(changed.count() >= 1);

        hub.deleteModel(row);  // an added folder: forgotten, not deleted
        QTRY_COMPARE_WITH_TIMEOUT(hub.library()->rowCount(), 1, 5000);
        QVERIFY(settings.library_folders().isEmpty());
        QVERIFY(QFile::exists(dir + "/" + name));
        QVERIFY(QFile::exists(dir + "/activation/activation_0.pt"));
    }
};

QTEST_MAIN(TestHubController)
#include "tst_hub_controller.moc"
