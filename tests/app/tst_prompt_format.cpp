// The prompt format a model's chat template asks for, recognized from templates as real models
// ship them, and what each format renders for a short conversation.
#include <QtTest>

#include "app/chat/chat_prompt.h"
#include "app/chat/model_template.h"
#include "app/chat/template_detect.h"

using ember::app::PromptFormat;

namespace {

// Abridged from the chat templates of Llama-2-chat and of a ChatML model (Qwen), as stored in
// their GGUF files' tokenizer.chat_template, and of Zephyr, whose format Ember has no renderer for.
const char* kLlama2 =
    "{% if messages[0]['role'] == 'system' %}{% set system_message = '<<SYS>>\\n' + messages[0]['content'] + "
    "'\\n<</SYS>>\\n\\n' %}{% endif %}{% for message in messages %}{% if message['role'] == 'user' %}"
    "{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}"
    "{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}";
const char* kChatML =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
    "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
const char* kMistral =
    "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% endif %}{% endfor %}";
const char* kZephyr =
    "{% for message in messages %}{% if message['role'] == 'user' %}{{ '<|user|>\\n' + message['content'] + eos_token }}"
    "{% endif %}{% endfor %}";

QVector<ember::app::ChatMessage> conversation() {
    ember::app::ChatMessage q, a;
    q.role = QStringLiteral("user");
    q.content = QStringLiteral("Who begat Enos?");
    a.role = QStringLiteral("assistant");
    a.generating = true;
    return {q, a};
}

}  // namespace

class TestPromptFormat : public QObject {
    Q_OBJECT

private slots:
    void templates_are_recognized_data() {
        QTest::addColumn<QString>("chat_template");
        QTest::addColumn<int>("format");
        QTest::addColumn<QString>("why");
        QTest::newRow("none") << QString() << int(PromptFormat::Completion) << "no chat template";
        QTest::newRow("blank") << QStringLiteral("  \n") << int(PromptFormat::Completion) << "no chat template";
        // Templates the interpreter runs are used as they are.
        for (const char* t : {kLlama2, kChatML, kZephyr, kMistral})
            QTest::addRow("runs: %.40s", t) << QString::fromLatin1(t) << int(PromptFormat::ModelTemplate) << "own chat template";
        // The rest fall back to the built-in format whose tokens they emit, saying why.
        // (include: a model file carries one template, so there is nothing to include.)
        const QString unsupported = QStringLiteral("{% include 'turn.jinja' %}%1");
        QTest::newRow("llama-2 chat") << unsupported.arg("[INST]") << int(PromptFormat::Llama2Chat) << "[INST]";
        QTest::newRow("chatml") << unsupported.arg("<|im_start|>") << int(PromptFormat::ChatML) << "<|im_start|>";
        QTest::newRow("unknown") << unsupported.arg("<|user|>") << int(PromptFormat::Completion) << "matches no built-in";
        QTest::newRow("reason") << unsupported.arg("<|user|>") << int(PromptFormat::Completion)
                                << "cannot be run (line 1: unknown or unsupported statement 'include')";
    }

    void templates_are_recognized() {
        QFETCH(QString, chat_template);
        QFETCH(int, format);
        QFETCH(QString, why);
        const ember::app::DetectedFormat d = ember::app::detect_prompt_format(chat_template);
        QCOMPARE(int(d.format), format);
        QCOMPARE(ember::app::prompt_format_from_name(d.name), d.format);
        QVERIFY2(d.why.contains(why), qPrintable(d.why));
    }

    void names_round_trip() {
        for (PromptFormat f : {PromptFormat::Completion, PromptFormat::Llama2Chat, PromptFormat::ChatML, PromptFormat::ModelTemplate,
                               PromptFormat::Mistral})
            QCOMPARE(ember::app::prompt_format_from_name(ember::app::prompt_format_name(f)), f);
    }

    void formats_render_what_their_templates_would() {
        const QString system = QStringLiteral("Answer from Genesis.");
        QCOMPARE(ember::app::render_prompt(PromptFormat::ChatML, system, conversation()),
                 QStringLiteral("<|im_start|>system\nAnswer from Genesis.<|im_end|>\n"
                                "<|im_start|>user\nWho begat Enos?<|im_end|>\n<|im_start|>assistant\n"));
        QCOMPARE(ember::app::render_prompt(PromptFormat::Llama2Chat, system, conversation()),
                 QStringLiteral("[INST] <<SYS>>\nAnswer from Genesis.\n<</SYS>>\n\nWho begat Enos? [/INST]"));
        QCOMPARE(ember::app::render_prompt(PromptFormat::Completion, system, conversation()),
                 QStringLiteral("Answer from Genesis.Who begat Enos?"));
    }

    void model_template_renders_the_conversation() {
        const QString system = QStringLiteral("Answer from Genesis.");
        // A ChatML template gives what the built-in ChatML format gives.
        const ember::app::ModelTemplate chatml(QString::fromLatin1(kChatML), "<s>", "</s>");
        QVERIFY(chatml.usable());
        const ember::app::RenderedPrompt p = chatml.render(system, conversation());
        QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
        QCOMPARE(p.text, ember::app::render_prompt(PromptFormat::ChatML, system, conversation()));

        // An answer being continued follows the generation prompt.
        QVector<ember::app::ChatMessage> partial = conversation();
        partial.back().content = QStringLiteral("Seth");
        QCOMPARE(chatml.render({}, partial).text,
                 QStringLiteral("<|im_start|>user\nWho begat Enos?<|im_end|>\n<|im_start|>assistant\nSeth"));
    }

    void models_without_a_template_get_their_familys_format() {
        using ember::app::detect_prompt_format;
        const auto dpo = detect_prompt_format({}, QStringLiteral("bamboo"), QStringLiteral("bamboo-7b-dpo-v0.1.Q4_0.powerinfer.gguf"));
        QCOMPARE(dpo.format, PromptFormat::Mistral);
        QVERIFY2(dpo.why.contains(QLatin1String("Mistral")), qPrintable(dpo.why));
        QCOMPARE(detect_prompt_format({}, QStringLiteral("bamboo"), QStringLiteral("bamboo-7b-v0.1.powerinfer.gguf")).format,
                 PromptFormat::Completion);  // the base model continues text
        QCOMPARE(detect_prompt_format({}, QStringLiteral("llama"), QStringLiteral("x-dpo.gguf")).format, PromptFormat::Completion);
        // SmallThinker without a template: ChatML, which PowerInfer's README prompts it with.
        const auto st = detect_prompt_format({}, QStringLiteral("smallthinker"), QStringLiteral("SmallThinker-4B-A0.6B-Instruct.Q4_0.gguf"));
        QCOMPARE(st.format, PromptFormat::ChatML);
        QVERIFY2(st.why.contains(QLatin1String("SmallThinker")), qPrintable(st.why));
        // A template in the file wins over the guess.
        QCOMPARE(detect_prompt_format(QString::fromLatin1(kChatML), QStringLiteral("bamboo"), QStringLiteral("bamboo-dpo.gguf")).format,
                 PromptFormat::ModelTemplate);
    }

    void mistral_format_equals_mistrals_template() {
        // The built-in format renders what Mistral's own template (run by the interpreter, which
        // tst_chat_template checks against jinja2) renders, turn by turn; BOS is the tokenizer's.
        const ember::app::ModelTemplate mistral(QString::fromLatin1(kMistral), "<s>", "</s>");
        QVector<ember::app::ChatMessage> turns = conversation();
        turns.back().content = QStringLiteral("Seth.");
        turns.back().generating = false;
        ember::app::ChatMessage again, next;
        again.role = QStringLiteral("user");
        again.content = QStringLiteral("And who begat Seth?");
        next.role = QStringLiteral("assistant");
        next.generating = true;
        turns << again << next;
        for (const QString& system : {QString(), QStringLiteral("Answer from Genesis.")}) {
            const ember::app::RenderedPrompt from_template = mistral.render(system, turns);
            QVERIFY2(from_template.error.isEmpty(), qPrintable(from_template.error));
            QCOMPARE(QStringLiteral("<s>") + ember::app::render_prompt(PromptFormat::Mistral, system, turns), from_template.text);
        }
    }

    void model_template_without_system_role_gets_it_in_the_question() {
        // Mistral's template refuses a system message (roles must alternate); the system prompt
        // then leads the first question, as llama.cpp does for it.
        const ember::app::ModelTemplate mistral(QString::fromLatin1(kMistral), "<s>", "</s>");
        const ember::app::RenderedPrompt p = mistral.render(QStringLiteral("Answer from Genesis."), conversation());
        QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
        QCOMPARE(p.text, QStringLiteral("<s>[INST] Answer from Genesis.\n\nWho begat Enos? [/INST]"));
        QCOMPARE(mistral.render({}, conversation()).text, QStringLiteral("<s>[INST] Who begat Enos? [/INST]"));
    }

    void model_template_errors_are_reported() {
        const ember::app::ModelTemplate refusing(QStringLiteral("{{ raise_exception('Only one turn, please') }}"), "<s>", "</s>");
        const ember::app::RenderedPrompt p = refusing.render({}, conversation());
        QVERIFY(p.text.isEmpty());
        QVERIFY2(p.error.contains(QLatin1String("the template refused: Only one turn, please")), qPrintable(p.error));

        const ember::app::ModelTemplate broken(QStringLiteral("{% for m in messages %}"), "<s>", "</s>");
        QVERIFY(!broken.usable());
        QVERIFY2(broken.render({}, conversation()).error.contains(QLatin1String("expected {% endfor %}")),
                 qPrintable(broken.render({}, conversation()).error));
        QVERIFY(ember::app::ModelTemplate(QString(), "<s>", "</s>").render({}, conversation()).error.contains("no chat template"));
    }
};

QTEST_GUILESS_MAIN(TestPromptFormat)
#include "tst_prompt_format.moc"
