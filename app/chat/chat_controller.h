#pragma once
// The open conversation: sends the user's text, streams the answer into the message model at
// ~10 Hz (one dataChanged per flush, however many tokens arrived), stops, regenerates, edits,
// switches between sibling answers; the chat's settings and what of it the model's context holds.
// Which chat is open is HistoryController's choice (show_chat).

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <QtQml/qqmlregistration.h>

#include <optional>
#include <random>

#include "app/chat/chat_prompt.h"
#include "app/chat/generation_settings.h"
#include "app/chat/message_list_model.h"
#include "app/chat/model_template.h"
#include "app/chat/template_detect.h"
#include "app/engine/generation_stats.h"
#include "app/store/chat_types.h"
#include "ember/result.h"

class QQmlEngine;
class QJSEngine;

namespace ember::store {
class ChatStore;
}

namespace ember::app {

class AppSettings;
class EngineController;

class ChatController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON

    Q_PROPERTY(ember::app::MessageListModel* messages READ messages CONSTANT)
    // A number in QML (qmllint does not know qint64); SQLite ids stay far below 2^53.
    Q_PROPERTY(double chatId READ chat_id_number NOTIFY chatIdChanged)
    Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
    Q_PROPERTY(QString promptFormat READ prompt_format WRITE set_prompt_format NOTIFY settingsChanged)
    Q_PROPERTY(bool promptFormatChosen READ prompt_format_chosen NOTIFY settingsChanged)
    Q_PROPERTY(QString detectedFormatWhy READ detected_format_why NOTIFY settingsChanged)
    Q_PROPERTY(QString systemPrompt READ system_prompt WRITE set_system_prompt NOTIFY settingsChanged)
    // The system prompt is the one new chats with this model start with.
    Q_PROPERTY(bool systemPromptIsDefault READ system_prompt_is_default NOTIFY settingsChanged)
    // The open chat's sampling settings, saved with it (a new chat starts with the last ones).
    Q_PROPERTY(double temperature READ temperature WRITE set_temperature NOTIFY settingsChanged)
    Q_PROPERTY(int maxTokens READ max_tokens WRITE set_max_tokens NOTIFY settingsChanged)
    Q_PROPERTY(int topK READ top_k WRITE set_top_k NOTIFY settingsChanged)
    Q_PROPERTY(double topP READ top_p WRITE set_top_p NOTIFY settingsChanged)
    Q_PROPERTY(double minP READ min_p WRITE set_min_p NOTIFY settingsChanged)
    Q_PROPERTY(double repeatPenalty READ repeat_penalty WRITE set_repeat_penalty NOTIFY settingsChanged)
    Q_PROPERTY(double seed READ seed WRITE set_seed NOTIFY settingsChanged)
    // Tokens of context for this chat's answers; the engine resizes its session to it before the
    // next answer (the conversation is then evaluated again).
    Q_PROPERTY(int contextLength READ context_length WRITE set_context_length NOTIFY settingsChanged)
    // The last failure to save, by this controller or HistoryController; the chat goes on unsaved.
    Q_PROPERTY(QString historyError READ history_error NOTIFY historyErrorChanged)
    // The first row the model sees (earlier turns stay in the history, dimmed); and whether the
    // last answer ran out of context, so the user chooses what happens next.
    Q_PROPERTY(int contextStart READ context_start NOTIFY contextChanged)
    Q_PROPERTY(bool contextFull READ context_full NOTIFY contextChanged)
    // The tokens the open chat fills in the model's context (the meter under the message box):
    // the engine's count after an answer, counted from the text when a chat opens or the model changes.
    Q_PROPERTY(int contextTokens READ context_tokens NOTIFY contextChanged)
    // The row of the message the last search hit opened, marked and scrolled to; -1: none.
    Q_PROPERTY(int foundRow READ found_row NOTIFY foundRowChanged)

public:
    // store may be null (history could not be opened): the chat works, nothing is saved.
    // app_settings may be null (tests): a chosen prompt format then lasts for this run only.
    ChatController(EngineController* engine, store::ChatStore* store, AppSettings* app_settings = nullptr,
                   QObject* parent = nullptr);

    static ChatController* create(QQmlEngine*, QJSEngine*);
    static void set_instance(ChatController* controller);

    MessageListModel* messages() { return &messages_; }
    bool generating() const { return generating_; }
    // The format the model's prompts are rendered in: the user's choice for this model, else
    // the one its chat template asks for.
    QString prompt_format() const;
    // Remembers `f` for the loaded model; an empty name goes back to detection.
    void set_prompt_format(const QString& f);
    bool prompt_format_chosen() const;
    QString detected_format_why() const;
    QString system_prompt() const { return system_prompt_; }
    void set_system_prompt(const QString& s);
    bool system_prompt_is_default() const;
    const GenerationSettings& settings() const { return settings_; }
    double temperature() const { return settings_.temperature; }
    void set_temperature(double t) { update_settings(&GenerationSettings::temperature, t); }
    int max_tokens() const { return settings_.max_tokens; }
    void set_max_tokens(int n) { update_settings(&GenerationSettings::max_tokens, n); }
    int top_k() const { return settings_.top_k; }
    void set_top_k(int k) { update_settings(&GenerationSettings::top_k, k); }
    double top_p() const { return settings_.top_p; }
    void set_top_p(double p) { update_settings(&GenerationSettings::top_p, p); }
    double min_p() const { return settings_.min_p; }
    void set_min_p(double p) { update_settings(&GenerationSettings::min_p, p); }
    double repeat_penalty() const { return settings_.repeat_penalty; }
    void set_repeat_penalty(double p) { update_settings(&GenerationSettings::repeat_penalty, p); }
    double seed() const { return double(settings_.seed); }
    void set_seed(double s) { update_settings(&GenerationSettings::seed, qint64(s)); }
    int context_length() const { return settings_.context_length; }
    void set_context_length(int n) { update_settings(&GenerationSettings::context_length, n); }
    QString history_error() const { return history_error_; }
    int context_start() const { return context_start_; }
    bool context_full() const { return context_full_; }
    int context_tokens() const { return context_tokens_; }
    qint64 chat_id() const { return chat_id_; }
    double chat_id_number() const { return double(chat_id_); }

    // Shows a chat read from the store: its branch `path`, its settings and context; marks the
    // row of `found_message` (a search hit's) when given.
    void show_chat(const store::Chat& chat, const QList<store::Message>& path, qint64 found_message = 0);
    // Runs a store call's result through: a failure is shown (historyError) and false returned.
    template <typename R>
    bool saved(const R& result) {
        if (result.ok()) return true;
        history_error_ = result.error();
        emit historyErrorChanged();
        return false;
    }

    Q_INVOKABLE void send(const QString& text);
    Q_INVOKABLE void stop();
    Q_INVOKABLE void regenerate();
    Q_INVOKABLE void newChat();
    // New chats with the loaded model start with the current system prompt (empty: none).
    Q_INVOKABLE void makeSystemPromptDefault();
    // The prompt for the conversation on screen; an error from the model's chat template instead,
    // prefixed "error: ".
    Q_INVOKABLE QString renderedPrompt() const;
    // What the model would read for the next answer; an empty chat shows a sample question.
    Q_INVOKABLE QString previewPrompt() const;
    // The open chat's branch on screen as Markdown (empty when nothing is saved yet), and the
    // same put on the clipboard.
    Q_INVOKABLE QString conversationMarkdown();
    Q_INVOKABLE void copyConversation();
    Q_INVOKABLE void copyText(const QString& text);  // a code block's or a message's Copy button

    // None of these touches the chat while an answer is generating.
    // The previous (delta -1) or next (+1) alternative of the message in `row`, with the newest
    // branch below it.
    Q_INVOKABLE void showSibling(int row, int delta);
    // The message at `row` rewritten as a new sibling of it (◀ n/m ▶ goes back to the original);
    // an edited question is answered anew, an edited answer just replaces what is shown.
    Q_INVOKABLE void editMessage(int row, const QString& text);
    // The answer to a full context: leave the oldest question and its answer out of what the
    // model sees (they stay in the history) and answer the last question again.
    Q_INVOKABLE void dropOldestTurn();
    int found_row() const { return found_row_; }

signals:
    void generatingChanged();
    void chatIdChanged();
    void settingsChanged();
    void answerFinished(const ember::app::GenerationStats& stats);
    void historyErrorChanged();
    void contextChanged();
    void foundRowChanged();
    // The store now holds a new chat or question (the list shows it one flush later, so the frame
    // that shows the question does not also lay out the list); and a finished answer or an edit.
    void questionSaved();
    void chatUpdated();

private:
    RenderedPrompt render(const QVector<ChatMessage>& rows) const;
    static QString for_display(const RenderedPrompt& p);  // without the escapes render() put in
    QString default_system_prompt() const;
    DetectedFormat detected_format() const;
    QVector<ChatMessage> rows_in_context() const;  // from the first message the model still sees
    // The prompt format the user chose for the loaded model; empty: none.
    QString chosen_format() const;
    // Sets one setting (clamped); a change is saved with the open chat.
    template <typename T>
    void update_settings(T GenerationSettings::*field, T value) {
        GenerationSettings next = settings_;
        next.*field = value;
        next = clamped(next);
        if (next == settings_) return;
        settings_ = next;
        save_options();
        emit settingsChanged();
    }
    QJsonObject options_json() const;
    void save_options();
    void set_context(int start, bool full);
    void set_context_tokens(int n);
    void count_context_tokens();
    void start_answer();
    // Stores the question send() showed, with the row of its answer (crash safety starts there).
    void save_question();
    // Stores the row of the answer being generated, a child of the message before it.
    void save_answer_row();
    void flush();
    void on_finished(const ember::app::GenerationStats& stats);
    void on_failed(const QString& error, ember::ErrorCode code);
    void finish_answer(const QString& stats_line, const store::GenerationStats& stats);
    void set_chat_id(qint64 id);
    // Rows for a branch read from the store, each with its place among its siblings.
    QVector<ChatMessage> rows_of(const QList<store::Message>& path);
    void set_found_row(int row);
    void update_last_siblings();

    EngineController* engine_;
    store::ChatStore* store_;
    qint64 chat_id_ = 0;    // 0: a new chat, created in the store with its first message
    QElapsedTimer since_saved_;  // the streaming answer is saved every kSaveIntervalMs
    QString history_error_;
    int found_row_ = -1;
    MessageListModel messages_;
    QTimer flush_timer_;
    QString pending_;  // tokens received since the last flush
    struct UnsavedQuestion {
        QString text;
        qint64 parent = 0;  // the message it follows, 0 for a chat's first
    };
    std::optional<UnsavedQuestion> unsaved_question_;  // shown by send(), not yet in the store
    bool generating_ = false;
    AppSettings* app_settings_;
    QString chosen_format_;  // without app_settings_: the format chosen this run
    mutable ModelTemplate model_template_;  // the loaded model's chat template, parsed once
    struct DetectedFor {
        QString model_path, chat_template;
        DetectedFormat format;
    };
    mutable std::optional<DetectedFor> detected_;  // QML reads it often; the template is parsed once per model
    QString system_prompt_;
    GenerationSettings settings_;
    int context_start_ = 0;
    bool context_full_ = false;
    int context_tokens_ = 0;
    std::mt19937_64 random_{std::random_device{}()};  // seeds for answers without a fixed seed
};

}  // namespace ember::app
