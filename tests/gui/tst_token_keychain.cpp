// The Hub token in a real system keychain: a private D-Bus session with gnome-keyring, started
// by with_keychain.sh (ctest runs this test through it when both are installed). Saved there, not
// in Hugging Face's token file; found again by a new controller (the next start of the app);
// used for a gated download; forgotten on request.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "app/hub/download_list_model.h"
#include "app/hub/hub_controller.h"
#include "app/hub/token_keychain.h"
#include "hub_fixture.h"

using ember::app::HubController;
using ember::app::TokenKeychain;

class TestTokenKeychain : public QObject {
    Q_OBJECT

    hub_test::HubFixture server_;

private slots:
    void initTestCase() {
        if (qEnvironmentVariableIsEmpty("EMBER_TEST_KEYCHAIN"))
            QSKIP("needs a private keychain: run through tests/gui/with_keychain.sh (ctest does)");
        if (!TokenKeychain::built_in()) QSKIP("this build has no QtKeychain");
        server_.add_file(QStringLiteral("PowerInfer/Gated-GGUF"), QStringLiteral("gated.powerinfer.gguf"), "sparse");
        server_.add_repo(QStringLiteral("PowerInfer/Gated-GGUF"), {{"gated", true}});
        QString why;
        QVERIFY2(server_.start(&why), qPrintable(why));
    }

    void token_lives_in_the_keychain() {
        QTemporaryDir hf_home, models;
        qputenv("HF_HOME", hf_home.path().toUtf8());
        qunsetenv("HF_TOKEN");
        {
            TokenKeychain keychain;
            HubController hub(models.path(), server_.endpoint(), nullptr);
            hub.set_keychain(&keychain);
            QTest::qWait(200);  // the keychain's first read: nothing stored yet
            QVERIFY(!hub.has_token());
            QVERIFY(hub.setToken(QString::fromLatin1(hub_test::token)));
            QTRY_VERIFY_WITH_TIMEOUT(hub.has_token(), 10000);
            QVERIFY2(hub.token_error().isEmpty(), qPrintable(hub.token_error()));
            QVERIFY2(hub.token_place().contains(QLatin1String("system keychain")), qPrintable(hub.token_place()));
            QVERIFY(!QFile::exists(hf_home.path() + "/token"));  // not in the plain file
        }
        {
            // The next start finds it, and a gated download goes through with it.
            TokenKeychain keychain;
            HubController hub(models.path(), server_.endpoint(), nullptr);
            hub.set_keychain(&keychain);
            QTRY_VERIFY_WITH_TIMEOUT(hub.has_token(), 10000);
            QVERIFY(hub.openRepo(QStringLiteral("PowerInfer/Gated-GGUF")));
            QTRY_VERIFY_WITH_TIMEOUT(!hub.opening(), 10000);
            QVERIFY(hub.download(QStringLiteral("gated.powerinfer.gguf")));
            QTRY_COMPARE_WITH_TIMEOUT(
                hub.downloads()->data(hub.downloads()->index(0), ember::app::DownloadListModel::StateRole).toString(),
                QStringLiteral("done"), 15000);
            hub.forgetToken();
            QVERIFY(!hub.has_token());
            QTest::qWait(500);  // the removal job
            QVERIFY2(hub.token_error().isEmpty(), qPrintable(hub.token_error()));
        }
        {
            TokenKeychain keychain;
            QSignalSpy read(&keychain, &TokenKeychain::read_done);
            keychain.read();
            QTRY_COMPARE_WITH_TIMEOUT(read.count(), 1, 10000);
            QCOMPARE(read.at(0).at(0).toString(), QString());  // gone
            QCOMPARE(read.at(0).at(1).toString(), QString());
        }
        qunsetenv("HF_HOME");
    }
};

QTEST_MAIN(TestTokenKeychain)
#include "tst_token_keychain.moc"
