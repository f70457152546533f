// The app's preferences file: defaults without one, every setting back after a restart, values
// out of range clamped or refused, and a broken or unwritable file reported without losing the
// running app's settings.
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "app/settings/app_settings.h"

using ember::app::AppSettings;

class TestAppSettings : public QObject {
    Q_OBJECT

private slots:
    void defaults_without_a_file() {
        QTemporaryDir dir;
        AppSettings s(dir.path() + "/settings.json");
        QCOMPARE(s.theme(), QStringLiteral("system"));
        QCOMPARE(s.font_scale(), 1.0);
        QVERIFY(!s.window_geometry().isValid());
        QVERIFY(s.use_gpu());
        QVERIFY(s.error().isEmpty());
        QVERIFY(!QFile::exists(dir.path() + "/settings.json"));  // nothing written until a change
    }

    void settings_survive_a_restart() {
        QTemporaryDir dir;
        const QString path = dir.path() + "/settings.json";
        {
            AppSettings s(path);
            QSignalSpy changed(&s, &AppSettings::changed);
            s.set_theme(QStringLiteral("dark"));
            s.set_font_scale(1.25);
            s.set_window_geometry(QRect(10, 20, 900, 600));
            s.set_use_gpu(false);
            QCOMPARE(changed.count(), 4);
            s.set_theme(QStringLiteral("dark"));  // unchanged: no signal, no write
            QCOMPARE(changed.count(), 4);
        }
        AppSettings again(path);
        QVERIFY(!again.use_gpu());
        QCOMPARE(again.theme(), QStringLiteral("dark"));
        QCOMPARE(again.font_scale(), 1.25);
        QCOMPARE(again.window_geometry(), QRect(10, 20, 900, 600));
    }

    void prompt_formats_are_kept_per_model() {
        QTemporaryDir dir;
        const QString path = dir.path() + "/settings.json";
        {
            AppSettings s(path);
            s.set_prompt_format_for(QStringLiteral("/models/a.gguf"), QStringLiteral("chatml"));
            s.set_prompt_format_for(QStringLiteral("/models/b.gguf"), QStringLiteral("llama2"));
            s.set_prompt_format_for(QStringLiteral("/models/b.gguf"), QString());  // back to the model's own
        }
        AppSettings again(path);
        QCOMPARE(again.prompt_format_for(QStringLiteral("/models/a.gguf")), QStringLiteral("chatml"));
        QCOMPARE(again.prompt_format_for(QStringLiteral("/models/b.gguf")), QString());
        QCOMPARE(again.theme(), QStringLiteral("system"));
    }

    void system_prompts_library_folders_and_declined_calibrations_survive_a_restart() {
        QTemporaryDir dir;
        const QString path = dir.path() + "/settings.json";
        {
            AppSettings s(path);
            s.set_system_prompt_for(QStringLiteral("/models/a.gguf"), QStringLiteral("Be brief."));
            s.set_system_prompt_for(QStringLiteral("/models/b.gguf"), QStringLiteral("Gone soon."));
            s.set_system_prompt_for(QStringLiteral("/models/b.gguf"), QString());
            s.add_library_folder(QStringLiteral("/data/gguf"));
            s.add_library_folder(QStringLiteral("/data/more"));
            s.add_library_folder(QStringLiteral("/data/gguf"));  // once only
            s.remove_library_folder(QStringLiteral("/data/more"));
            s.set_calibrations_declined({QStringLiteral("/models/a.gguf"), QStringLiteral("/models/c.gguf")});
        }
        AppSettings again(path);
        QCOMPARE(again.calibrations_declined(), (QStringList{QStringLiteral("/models/a.gguf"), QStringLiteral("/models/c.gguf")}));
        QCOMPARE(again.system_prompt_for(QStringLiteral("/models/a.gguf")), QStringLiteral("Be brief."));
        QCOMPARE(again.system_prompt_for(QStringLiteral("/models/b.gguf")), QString());
        QCOMPARE(again.library_folders(), QStringList{QStringLiteral("/data/gguf")});
    }

    void bad_values_are_refused_or_clamped() {
        QTemporaryDir dir;
        AppSettings s(dir.path() + "/settings.json");
        s.set_theme(QStringLiteral("purple"));
        QCOMPARE(s.theme(), QStringLiteral("system"));
        s.set_font_scale(9);
        QCOMPARE(s.font_scale(), 1.6);
        s.set_window_geometry(QRect(0, 0, 10, 10));  // too small to be a window anyone can use
        QVERIFY(!s.window_geometry().isValid());

        QFile f(dir.path() + "/hand.json");
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"theme": "neon", "fontScale": 0.1, "window": {"x": 1, "y": 2, "width": 50, "height": 40}})");
        f.close();
        AppSettings hand(dir.path() + "/hand.json");
        QCOMPARE(hand.theme(), QStringLiteral("system"));
        QCOMPARE(hand.font_scale(), 0.8);
        QVERIFY(!hand.window_geometry().isValid());
        QVERIFY(hand.error().isEmpty());
    }

    void broken_file_means_defaults_and_a_reason() {
        QTemporaryDir dir;
        const QString path = dir.path() + "/settings.json";
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"theme\": \"dark\", trunc");
        f.close();
        AppSettings s(path);
        QCOMPARE(s.theme(), QStringLiteral("system"));
        QVERIFY2(s.error().contains(path), qPrintable(s.error()));
        // The broken file stays as it was until a setting changes.
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("{\"theme\": \"dark\", trunc"));
        f.close();
        s.set_theme(QStringLiteral("light"));
        QVERIFY(s.error().isEmpty());
        QCOMPARE(AppSettings(path).theme(), QStringLiteral("light"));
    }

    void unwritable_folder_keeps_the_setting_in_memory() {
        QTemporaryDir dir;
        AppSettings s(dir.path() + "/missing/folder/settings.json");
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression("settings not saved: .*missing/folder/settings.json"));
        s.set_theme(QStringLiteral("dark"));
        QCOMPARE(s.theme(), QStringLiteral("dark"));
        QVERIFY(s.error().contains(QStringLiteral("missing/folder/settings.json")));
    }
};

QTEST_GUILESS_MAIN(TestAppSettings)
#include "tst_app_settings.moc"
