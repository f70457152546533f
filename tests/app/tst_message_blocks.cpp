// How answers are cut into Markdown, code and <think> blocks, and highlighted: fences with and
// without a language, ~~~ fences, unterminated fences and <think> while streaming, code that
// must come out escaped, and — the streaming rule — extending block by block gives the same
// blocks as splitting the whole text, however the text arrives.
#include <QAbstractItemModelTester>
#include <QtTest>

#include <random>

#include "app/chat/code_highlighter.h"
#include "app/chat/message_blocks.h"
#include "app/chat/message_list_model.h"

using ember::app::MessageBlock;
using Kind = ember::app::MessageBlock::Kind;

namespace {

QString describe(const QVector<MessageBlock>& blocks) {
    QStringList parts;
    for (const MessageBlock& b : blocks) {
        const char* kind = b.kind == Kind::Code ? "code" : b.kind == Kind::Think ? "think" : "text";
        parts << QStringLiteral("%1%2%3@%4:%5")
                     .arg(QLatin1String(kind), b.language.isEmpty() ? QString() : "(" + b.language + ")",
                          b.open ? QStringLiteral("[open]") : QString())
                     .arg(b.start)
                     .arg(b.text);
    }
    return parts.join(QStringLiteral(" | "));
}

const char* const kSamples[] = {
    "Plain answer with **bold** and a [link](https://example.com).",
    "Here is code:\n\n```python\ndef f(x):\n    return x * 2  # twice\n```\n\nThat was it.",
    "<think>\nThe user wants a loop.\n</think>\n\nUse `for`:\n```c\nfor (int i = 0; i < n; ++i) {}\n```",
    "~~~\nno language\n~~~\nafter",
    "````js\nlet s = `a ${b}`;\n```\nstill code: three backticks do not close a four-backtick fence\n````\ntext",
    "  ```\nindented fence\n  ```\n",
    "Before <think>inline thought</think> after, then\n```\nunterminated",
    "<think>never closed, still thinking about ```code``` inside",
    "Numbers 1 2 3\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    // Found by fuzz_message_blocks: a <think> opening on a paragraph's first line.
    "inl>\n\nHere <think>in</think> after\n  B",
    "One.\n\nTwo **b**.\n\n- a\n\n- b\n\n    indented\n\n10. x\n\n2) y\nz\n\n\nThree\n\n-not a list\n\n7 days",
};

}  // namespace

class TestMessageBlocks : public QObject {
    Q_OBJECT

private slots:
    void splits_fences_and_thoughts() {
        auto blocks = ember::app::split_blocks(QString::fromUtf8(kSamples[1]));
        QCOMPARE(blocks.size(), 3);
        QCOMPARE(blocks[0].kind, Kind::Text);
        QCOMPARE(blocks[1].kind, Kind::Code);
        QCOMPARE(blocks[1].language, QStringLiteral("python"));
        QCOMPARE(blocks[1].text, QStringLiteral("def f(x):\n    return x * 2  # twice"));
        QVERIFY(!blocks[1].open);
        QCOMPARE(blocks[2].text.trimmed(), QStringLiteral("That was it."));

        blocks = ember::app::split_blocks(QString::fromUtf8(kSamples[2]));
        QCOMPARE(describe(blocks), QStringLiteral("think@0:The user wants a loop. | text@39:\n\nUse `for`:\n | "
                                                  "code(c)@52:for (int i = 0; i < n; ++i) {}"));

        blocks = ember::app::split_blocks(QString::fromUtf8(kSamples[3]));
        QCOMPARE(describe(blocks), QStringLiteral("code@0:no language | text@20:after"));

        // A fence closes only with at least as many of its characters.
        blocks = ember::app::split_blocks(QString::fromUtf8(kSamples[4]));
        QCOMPARE(blocks.size(), 2);
        QCOMPARE(blocks[0].text,
                 QStringLiteral("let s = `a ${b}`;\n```\nstill code: three backticks do not close a four-backtick fence"));
        QCOMPARE(blocks[1].kind, Kind::Text);

        blocks = ember::app::split_blocks(QString::fromUtf8(kSamples[5]));
        QCOMPARE(describe(blocks), QStringLiteral("code@0:indented fence"));
    }

    // Prose becomes one block per paragraph; list items and indented lines after a blank line
    // stay with what they continue, as Markdown reads them.
    void prose_is_cut_at_paragraphs() {
        const auto blocks = ember::app::split_blocks(QString::fromUtf8(kSamples[10]));
        QCOMPARE(describe(blocks),
                 QStringLiteral("text@0:One.\n\n | text@6:Two **b**.\n\n- a\n\n- b\n\n    indented\n\n10. x\n\n2) y\nz\n\n\n | "
                                "text@58:Three\n\n | text@65:-not a list\n\n | text@78:7 days"));
        // While streaming, a last line that may still become a list item ("1" of "1. x") stays
        // with the paragraph before it.
        QCOMPARE(ember::app::split_blocks(QStringLiteral("A.\n\n1"), 0, false).size(), 1);
        QCOMPARE(ember::app::split_blocks(QStringLiteral("A.\n\n1"), 0, true).size(), 2);
        QCOMPARE(ember::app::split_blocks(QStringLiteral("A.\n\n1. x\n"), 0, false).size(), 1);
        // A finished answer with a link definition stays one block, so its links resolve.
        const QString refs = QStringLiteral("See [the docs][1].\n\nMore.\n\n[1]: https://example.com\n");
        QCOMPARE(ember::app::split_blocks(refs, 0, false).size(), 3);
        QCOMPARE(ember::app::split_blocks(refs, 0, true).size(), 1);
    }

    void unfinished_blocks_are_open() {
        auto blocks = ember::app::split_blocks(QString::fromUtf8(kSamples[6]));
        QCOMPARE(describe(blocks), QStringLiteral("text@0:Before  | think@7:inline thought | text@36: after, then\n | "
                                                  "code[open]@49:unterminated"));
        blocks = ember::app::split_blocks(QString::fromUtf8(kSamples[7]));
        QCOMPARE(blocks.size(), 1);
        QCOMPARE(blocks[0].kind, Kind::Think);
        QVERIFY(blocks[0].open);
        // While streaming, a closing fence on the last line may still grow ("```x" is no fence);
        // once the message is finished it closes the block.
        const QString tail = QStringLiteral("```\ncode\n```");
        QVERIFY(ember::app::split_blocks(tail, 0, false).back().open);
        QVERIFY(!ember::app::split_blocks(tail, 0, true).back().open);
    }

    // The streaming rule: whatever the chunks, extending gives the full split's blocks.
    void extending_equals_splitting_the_whole() {
        std::mt19937 rng(7);
        for (const char* sample : kSamples) {
            const QString text = QString::fromUtf8(sample);
            for (int round = 0; round < 50; ++round) {
                QVector<MessageBlock> blocks;
                QString so_far;
                int p = 0;
                while (p < text.size()) {
                    const int len = std::uniform_int_distribution<int>(1, 6)(rng);
                    so_far += text.mid(p, len);
                    p += len;
                    ember::app::extend_blocks(blocks, so_far);
                    QCOMPARE(describe(blocks), describe(ember::app::split_blocks(so_far, 0, false)));
                }
            }
        }
    }

    void highlighting_escapes_and_colours() {
        const QString html = ember::app::builtin_highlight_code(QStringLiteral("if (a < b && s == \"<x>\") return 1; // done"),
                                                        QStringLiteral("cpp"));
        QVERIFY(html.startsWith(QStringLiteral("<pre")));
        QVERIFY(html.contains(QStringLiteral(">if</span>")));
        QVERIFY(html.contains(QStringLiteral(">return</span>")));
        QVERIFY(html.contains(QStringLiteral("a &lt; b &amp;&amp; s")));
        QVERIFY(html.contains(QStringLiteral(">&quot;&lt;x&gt;&quot;</span>")));
        QVERIFY(html.contains(QStringLiteral("font-style:italic\">// done</span>")));
        QVERIFY(html.contains(QStringLiteral(">1</span>")));
        // Identifiers that merely contain a keyword stay plain.
        QVERIFY(!ember::app::builtin_highlight_code(QStringLiteral("iffy format"), QStringLiteral("python")).contains(u"<span"));
        const QString py = ember::app::builtin_highlight_code(QStringLiteral("def f():\n    \"\"\"doc\n    string\"\"\"  # note"),
                                                      QStringLiteral("Python"));
        QVERIFY(py.contains(QStringLiteral(">def</span>")));
        QVERIFY(py.contains(QStringLiteral(">&quot;&quot;&quot;doc\n    string&quot;&quot;&quot;</span>")));
        QVERIFY(py.contains(QStringLiteral(">#"" note</span>")));
        // Unknown languages: every character, escaped, nothing coloured.
        const QString plain = ember::app::builtin_highlight_code(QStringLiteral("<b>&"), QStringLiteral("brainfuck"));
        QCOMPARE(plain, QStringLiteral("<pre style=\"white-space:pre-wrap\">&lt;b&gt;&amp;</pre>"));
        // Whichever highlighter the build uses, an unknown language is only escaped.
        QCOMPARE(ember::app::highlight_code(QStringLiteral("<b>&"), QStringLiteral("no-such-language")), plain);
    }

    // The message model keeps blocks in step with streamed text and marks the final state.
    void model_streams_blocks() {
        ember::app::MessageListModel model;
        QAbstractItemModelTester tester(&model);
        ember::app::ChatMessage answer;
        answer.role = QStringLiteral("assistant");
        answer.generating = true;
        model.append(answer);
        for (const QString& piece : {QStringLiteral("Sure:\n```py\nprint(1)\n"), QStringLiteral("```")}) {
            model.append_to_last(piece);
        }
        auto blocks = model.data(model.index(0), ember::app::MessageListModel::BlocksRole).toList();
        QCOMPARE(blocks.size(), 2);
        QCOMPARE(blocks[1].toMap()[QStringLiteral("kind")].toString(), QStringLiteral("code"));
        QVERIFY(blocks[1].toMap()[QStringLiteral("open")].toBool());  // the last line may still grow
        model.finish_last(QStringLiteral("done"));
        blocks = model.data(model.index(0), ember::app::MessageListModel::BlocksRole).toList();
        QVERIFY(!blocks[1].toMap()[QStringLiteral("open")].toBool());
        QCOMPARE(blocks[1].toMap()[QStringLiteral("text")].toString(), QStringLiteral("print(1)"));
        QCOMPARE(blocks[1].toMap()[QStringLiteral("html")].toString(),
                 QStringLiteral("<pre style=\"white-space:pre-wrap\">print(<span style=\"color:#c26d1f\">1</span>)</pre>"));
    }
};

QTEST_GUILESS_MAIN(TestMessageBlocks)
#include "tst_message_blocks.moc"
