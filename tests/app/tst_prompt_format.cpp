// The prompt format a model's chat template asks for, recognized from templates as real models
// ship them, and what each format renders for a short conversation.
#include <QtTest>

#include "app/chat/chat_prompt.h"
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
        QTest::newRow("llama-2 chat") << QString::fromLatin1(kLlama2) << int(PromptFormat::Llama2Chat) << "[INST]";
        QTest::newRow("chatml") << QString::fromLatin1(kChatML) << int(PromptFormat::ChatML) << "<|im_start|>";
        QTest::newRow("unknown") << QString::fromLatin1(kZephyr) << int(PromptFormat::Completion) << "matches no built-in";
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
        for (PromptFormat f : {PromptFormat::Completion, PromptFormat::Llama2Chat, PromptFormat::ChatML})
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
};

QTEST_GUILESS_MAIN(TestPromptFormat)
#include "tst_prompt_format.moc"
