// The answer's prose block (qml/Chat/TextBlock.qml) while a long paragraph streams in: its upper
// lines move into pieces laid out once, and the block must look exactly like one text — the same
// height, every piece starting where the whole text starts a line, at the same place — and be
// one text again when the answer ends or the width changes. Any QML warning fails it.
#include <QQmlComponent>
#include <QQmlEngine>
#include <QQmlProperty>
#include <QQuickItem>
#include <QQuickWindow>
#include <QtQml/qqmlextensionplugin.h>
#include <QtQuickTest/quicktest.h>
#include <QtTest>

#include <memory>

#include "gui_test_support.h"

Q_IMPORT_QML_PLUGIN(Ember_AppPlugin)
Q_IMPORT_QML_PLUGIN(EmberPlugin)

namespace {

// The block and, beside it, one Markdown text of the same width holding the whole paragraph.
const char* const kScene = R"(
import QtQuick
import Ember

Window {
    width: 360
    height: 900
    visible: true

    TextBlock {
        objectName: "block"
        width: 300
        streaming: true
    }
    TextEdit {
        objectName: "reference"
        x: 320
        width: 300
        textFormat: TextEdit.MarkdownText
        wrapMode: Text.Wrap
    }
}
)";

// A long single paragraph of plain prose, as the demo model writes it.
QString long_paragraph() {
    QString text;
    const QStringList words = {"And", "the", "son", "of", "Manasseh,", "who", "dwelt", "in", "Zarephath", "for",
                               "seven", "years;", "and", "begat", "Ami,", "Hah", "and", "Mah."};
    for (int i = 0; text.size() < 6000; ++i) text += words[(i * 7 + i / 5) % words.size()] + QLatin1Char(' ');
    return text.trimmed();
}

}  // namespace

class TestTextBlock : public QObject {
    Q_OBJECT

    QQmlEngine engine_;
    std::unique_ptr<QObject> scene_;
    QQuickItem* block_ = nullptr;
    QQuickItem* reference_ = nullptr;

    void show(const QString& text) {
        block_->setProperty("block", QVariantMap{{"kind", "text"}, {"text", text}});
        reference_->setProperty("text", text);
    }

    // The pieces' texts in order, and the live text last.
    QList<QQuickItem*> parts() const {
        QList<QQuickItem*> out;
        QQuickItem* column = block_->childItems().value(0);
        for (QQuickItem* child : column->childItems())
            if (child->inherits("QQuickTextEdit")) out << child;
        return out;
    }

    int piece_count() const { return int(parts().size()) - 1; }

    QRectF reference_rect(int position) const {
        QRectF r;
        QMetaObject::invokeMethod(reference_, "positionToRectangle", Q_RETURN_ARG(QRectF, r), Q_ARG(int, position));
        return r;
    }

    // Looks like the reference: same height, and each part starts a line of the reference at the
    // part's own height in the block.
    void expect_same_layout(const char* when) {
        QVERIFY(QQuickTest::qWaitForPolish(block_->window()));
        const QList<QQuickItem*> all = parts();
        QVERIFY2(qAbs(block_->implicitHeight() - reference_->implicitHeight()) < 0.5,
                 qPrintable(QStringLiteral("%1: %2 px high, the whole text %3 px")
                                .arg(when).arg(block_->implicitHeight()).arg(reference_->implicitHeight())));
        int offset = 0;
        for (qsizetype i = 0; i + 1 < all.size(); ++i) {
            offset += all[i]->property("pieceText").toString().size();
            const QRectF at = reference_rect(offset);
            QVERIFY2(qAbs(at.x()) < 0.5, qPrintable(QStringLiteral("%1: piece %2 ends mid-line").arg(when).arg(i)));
            QVERIFY2(qAbs(at.y() - all[i + 1]->y()) < 0.5,
                     qPrintable(QStringLiteral("%1: part %2 at y %3, the whole text's line at %4")
                                    .arg(when).arg(i + 1).arg(all[i + 1]->y()).arg(at.y())));
        }
    }

private slots:
    void initTestCase() {
        gui_test::install_warning_recorder();
    }

    void init() {
        engine_.addImportPath(QStringLiteral("qrc:/qt/qml"));
        QQmlComponent component(&engine_);
        component.setData(kScene, QUrl());
        scene_.reset(component.create());
        QVERIFY2(scene_, qPrintable(component.errorString()));
        auto* window = qobject_cast<QQuickWindow*>(scene_.get());
        QVERIFY(QTest::qWaitForWindowExposed(window));
        block_ = window->findChild<QQuickItem*>(QStringLiteral("block"));
        reference_ = window->findChild<QQuickItem*>(QStringLiteral("reference"));
        QVERIFY(block_ && reference_);
    }

    void cleanup() {
        scene_.reset();
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    void a_long_paragraph_streams_in_pieces_that_look_like_one_text() {
        const QString text = long_paragraph();
        for (int n = 4; n < text.size(); n += 5) {
            show(text.left(n));
            if (n % 400 < 5) expect_same_layout(qPrintable(QStringLiteral("after %1 characters").arg(n)));
        }
        show(text);
        expect_same_layout("streamed");
        // 6000 characters in 300 px are about 150 lines: most of them moved out of the live text.
        QVERIFY2(piece_count() >= 5, qPrintable(QString::number(piece_count())));
        QVERIFY(parts().back()->property("lineCount").toInt() <= 13);
        // A screen reader reads the whole paragraph, not a piece.
        QCOMPARE(QQmlProperty::read(block_, QStringLiteral("Accessible.name"), qmlContext(block_)).toString(), text);

        block_->setProperty("streaming", false);
        QCOMPARE(piece_count(), 0);
        QCOMPARE(parts().back()->property("lineCount").toInt(), reference_->property("lineCount").toInt());
        expect_same_layout("finished");
    }

    void a_new_width_makes_it_one_text_again() {
        const QString text = long_paragraph().left(3000);
        for (int n = 5; n <= text.size(); n += 5) show(text.left(n));
        QVERIFY(piece_count() > 0);
        block_->setWidth(200);
        reference_->setWidth(200);
        QCOMPARE(piece_count(), 0);
        expect_same_layout("narrower");
        show(text + QStringLiteral(" and more"));
        expect_same_layout("narrower, streaming on");
    }

    // A paragraph with Markdown in it keeps that part in the live text: a piece must not cut an
    // emphasis or a link in two.
    void markup_is_not_cut() {
        const QString text = QStringLiteral("**Genesis** ") + long_paragraph().left(2000);
        for (int n = 5; n <= text.size(); n += 5) show(text.left(n));
        QCOMPARE(piece_count(), 0);
        expect_same_layout("with markup");
    }

    // A line that would start with a list marker or a heading's # stays joined to the one above:
    // in a piece of its own it would become a list or a heading.
    void a_line_that_would_start_a_block_is_not_cut_before() {
        QString text;
        for (int i = 0; i < 120; ++i) text += QStringLiteral("word - 1. ");
        for (int n = 5; n <= text.size(); n += 5) show(text.left(n));
        const QList<QQuickItem*> all = parts();
        int offset = 0;
        for (qsizetype i = 0; i + 1 < all.size(); ++i) {
            offset += all[i]->property("pieceText").toString().size();
            const QChar next = text[offset];
            QVERIFY2(next != u'-' && !next.isDigit() && !next.isSpace(), qPrintable(text.mid(offset, 10)));
        }
        expect_same_layout("list-like words");
    }
};

QTEST_MAIN(TestTextBlock)
#include "tst_text_block.moc"
