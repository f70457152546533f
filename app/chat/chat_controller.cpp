#include "app/chat/chat_controller.h"

#include <QClipboard>
#include <QFileInfo>
#include <QGuiApplication>
#include <QJSEngine>

#include <algorithm>
#include <utility>

#include "app/chat/answer_stats.h"
#include "app/chat/template_detect.h"
#include "app/engine/engine_controller.h"
#include "app/settings/app_settings.h"
#include "app/store/chat_store.h"
#include "ember/markup.h"

namespace ember::app {
namespace {

ChatController* g_instance = nullptr;

// Each flush re-lays the answer's last lines and redraws the window, which on a machine without a
// GPU costs CPU the engine needs: 10 a second still reads as streaming and bounds that cost
// whatever the generation speed (BENCHMARKS.md, "The app").
constexpr int kFlushIntervalMs = 100;
// A killed app loses at most this much of the answer it was writing.
constexpr int kSaveIntervalMs = 300;
// The question is stored this long after it is sent: after the frame that shows it, while the
// prompt is evaluated. A first write to the database takes several ms (~7 on a 2-core VM), which,
// left to the first flush, came between the first text and the frame that shows it.
constexpr int kStoreQuestionAfterMs = 25;
// In a chat's stored settings: the message the model's context starts at (older turns dropped).
const QString kContextFromKey = QStringLiteral("contextFrom");

}  // namespace

ChatController::ChatController(EngineController* engine, store::ChatStore* store, AppSettings* app_settings,
                               QObject* parent)
    : QObject(parent), engine_(engine), store_(store), app_settings_(app_settings) {
    connect(engine_, &EngineController::modelChanged, this, [this] {
        // A chat not started yet takes the new model's default system prompt.
        if (chat_id_ == 0 && messages_.messages().isEmpty()) system_prompt_ = default_system_prompt();
        emit settingsChanged();
        count_context_tokens();  // another tokenizer
    });
    flush_timer_.setInterval(kFlushIntervalMs);
    connect(&flush_timer_, &QTimer::timeout, this, &ChatController::flush);
    connect(engine_, &EngineController::token, this, [this](const QString& t) {
        if (!generating_) return;
        pending_ += t;
        // The first text is shown at once: the user is waiting for it.
        if (messages_.messages().back().content.isEmpty()) flush();
    });
    connect(engine_, &EngineController::generationFinished, this, &ChatController::on_finished);
    connect(engine_, &EngineController::generationFailed, this, &ChatController::on_failed);
}

ChatController* ChatController::create(QQmlEngine*, QJSEngine*) {
    Q_ASSERT(g_instance);
    QJSEngine::setObjectOwnership(g_instance, QJSEngine::CppOwnership);
    return g_instance;
}

void ChatController::set_instance(ChatController* controller) { g_instance = controller; }

QString ChatController::chosen_format() const {
    return app_settings_ ? app_settings_->prompt_format_for(engine_->model_path()) : chosen_format_;
}

QString ChatController::prompt_format() const {
    const QString chosen = chosen_format();
    return chosen.isEmpty() ? detected_format().name : chosen;
}

bool ChatController::prompt_format_chosen() const { return !chosen_format().isEmpty(); }

QString ChatController::detected_format_why() const { return detected_format().why; }

DetectedFormat ChatController::detected_format() const {
    const QString path = engine_->model_path(), chat_template = engine_->chat_template();
    if (!detected_ || detected_->model_path != path || detected_->chat_template != chat_template)
        detected_ = DetectedFor{path, chat_template,
                                detect_prompt_format(chat_template, engine_->architecture(), QFileInfo(path).fileName())};
    return detected_->format;
}

void ChatController::set_prompt_format(const QString& f) {
    const QString name = f.isEmpty() ? QString() : prompt_format_name(prompt_format_from_name(f));
    if (app_settings_) app_settings_->set_prompt_format_for(engine_->model_path(), name);
    else chosen_format_ = name;
    emit settingsChanged();
}

void ChatController::set_system_prompt(const QString& s) {
    if (s == system_prompt_) return;
    system_prompt_ = s;
    save_options();
    emit settingsChanged();
}

// The chat's generation settings, and where the model's context starts if the user dropped
// older turns (by message id, so it survives reopening and sibling switches above it).
QJsonObject ChatController::options_json() const {
    QJsonObject json = to_json(settings_);
    const auto& rows = messages_.messages();
    if (context_start_ > 0 && context_start_ < rows.size() && rows[context_start_].id != 0)
        json.insert(kContextFromKey, rows[context_start_].id);
    return json;
}

void ChatController::save_options() {
    if (store_ && chat_id_ != 0)
        saved(store_->setChatOptions(chat_id_, store::ChatOptions{system_prompt_, options_json(), engine_->model_path()}));
}

void ChatController::send(const QString& text) {
    if (generating_ || text.isEmpty() || engine_->status() != EngineController::Status::Ready) return;
    const qint64 parent = messages_.messages().isEmpty() ? 0 : messages_.messages().back().id;
    messages_.append(ChatMessage{0, QStringLiteral("user"), text, false, {}});
    unsaved_question_ = UnsavedQuestion{text, parent};
    // Stored after the frame that shows it, or by the first flush if the answer's text comes
    // first; always before anything of the answer is stored.
    start_answer();
    QTimer::singleShot(kStoreQuestionAfterMs, this, &ChatController::save_question);
}

void ChatController::save_question() {
    if (!unsaved_question_) return;
    const UnsavedQuestion question = *std::exchange(unsaved_question_, std::nullopt);
    if (!store_) return;
    if (chat_id_ == 0) {
        auto chat = store_->createChat(question.text.simplified().left(60),
                                       store::ChatOptions{system_prompt_, options_json(), engine_->model_path()});
        if (saved(chat)) set_chat_id(chat.value());
    }
    if (chat_id_ == 0) return;
    auto id = store_->addMessage(chat_id_, question.parent ? std::optional<qint64>(question.parent) : std::nullopt,
                                 store::Role::User, question.text);
    if (!saved(id)) return;
    messages_.set_id(int(messages_.messages().size()) - 2, id.value());
    emit questionSaved();
    save_answer_row();
}

void ChatController::save_answer_row() {
    const auto& rows = messages_.messages();
    const qint64 parent = rows.size() >= 2 ? rows[rows.size() - 2].id : 0;
    if (!store_ || chat_id_ == 0 || parent == 0) return;
    auto id = store_->beginAssistant(chat_id_, parent);
    if (saved(id)) {
        messages_.set_id(int(rows.size()) - 1, id.value());
        update_last_siblings();
    }
}

void ChatController::regenerate() {
    if (generating_ || messages_.messages().isEmpty()) return;
    if (messages_.messages().back().role == QLatin1String("assistant")) messages_.remove_last();
    if (messages_.messages().isEmpty()) return;
    start_answer();
}

void ChatController::stop() {
    if (generating_) engine_->stop();
}

void ChatController::newChat() {
    if (generating_) return;
    set_found_row(-1);
    set_context(0, false);
    set_chat_id(0);
    messages_.replace_from(0, {});
    set_context_tokens(0);
    system_prompt_ = default_system_prompt();
    emit settingsChanged();
}

QString ChatController::default_system_prompt() const {
    return app_settings_ ? app_settings_->system_prompt_for(engine_->model_path()) : QString();
}

bool ChatController::system_prompt_is_default() const {
    return app_settings_ && !system_prompt_.isEmpty() && system_prompt_ == default_system_prompt();
}

void ChatController::makeSystemPromptDefault() {
    if (!app_settings_) return;
    app_settings_->set_system_prompt_for(engine_->model_path(), system_prompt_);
    emit settingsChanged();
}

QString ChatController::conversationMarkdown() {
    if (!store_ || chat_id_ == 0) return {};
    auto markdown = store_->exportChats(store::ExportFormat::Markdown, chat_id_);
    return saved(markdown) ? QString::fromUtf8(markdown.value()) : QString();
}

void ChatController::copyConversation() {
    const QString markdown = conversationMarkdown();
    if (!markdown.isEmpty()) QGuiApplication::clipboard()->setText(markdown);
}

void ChatController::copyText(const QString& text) { QGuiApplication::clipboard()->setText(text); }

RenderedPrompt ChatController::render(const QVector<ChatMessage>& rows) const {
    const PromptFormat format = prompt_format_from_name(prompt_format());
    if (format == PromptFormat::Completion) return {render_prompt(format, system_prompt_, rows), {}};
    // What people wrote stays text in a chat format, whose control tokens are markup: a question
    // about "</s>" or a pasted "<|im_end|>" must not end the turn (ember/markup.h).
    const auto as_text = [&](const QString& s) {
        return QString::fromStdString(escape_markup(s.toStdString(), engine_->control_pieces()));
    };
    QVector<ChatMessage> escaped = rows;
    for (ChatMessage& m : escaped) m.content = as_text(m.content);
    const QString system = as_text(system_prompt_);
    if (format != PromptFormat::ModelTemplate) return {render_prompt(format, system, escaped), {}};
    if (model_template_.source() != engine_->chat_template())
        model_template_ = ModelTemplate(engine_->chat_template(), engine_->bos_token(), engine_->eos_token());
    return model_template_.render(system, escaped);
}

QString ChatController::for_display(const RenderedPrompt& p) {
    return QString::fromStdString(unescape_markup(p.text.toStdString()));
}

QVector<ChatMessage> ChatController::rows_in_context() const {
    const QVector<ChatMessage>& rows = messages_.messages();
    return rows.mid(std::min<qsizetype>(context_start_, rows.size()));
}

QString ChatController::renderedPrompt() const {
    const RenderedPrompt p = render(rows_in_context());
    return p.error.isEmpty() ? for_display(p) : tr("error: %1").arg(p.error);
}

QString ChatController::previewPrompt() const {
    QVector<ChatMessage> rows = rows_in_context();
    if (rows.isEmpty() || rows.back().role != QLatin1String("user")) {
        ChatMessage question;
        question.role = QStringLiteral("user");
        question.content = rows.isEmpty() ? tr("(your question)") : tr("(your next question)");
        rows.push_back(question);
    }
    ChatMessage answer;
    answer.role = QStringLiteral("assistant");
    answer.generating = true;
    rows.push_back(answer);
    const RenderedPrompt p = render(rows);
    return p.error.isEmpty() ? for_display(p) : tr("The model's chat template cannot render this chat: %1").arg(p.error);
}

void ChatController::set_context(int start, bool full) {
    if (start == context_start_ && full == context_full_) return;
    context_start_ = start;
    context_full_ = full;
    emit contextChanged();
}

void ChatController::set_context_tokens(int n) {
    if (n == context_tokens_) return;
    context_tokens_ = n;
    emit contextChanged();
}

// As the engine will be given the chat: rendered, then tokenized with the model's own vocabulary.
void ChatController::count_context_tokens() {
    const std::shared_ptr<const ember::Model> model = engine_->model_handle();
    const QVector<ChatMessage> rows = rows_in_context();
    if (!model || rows.isEmpty()) return set_context_tokens(0);
    const RenderedPrompt p = render(rows);
    if (!p.error.isEmpty()) return set_context_tokens(0);
    const std::string text = p.text.toStdString();
    const bool markup = prompt_format_from_name(prompt_format()) != PromptFormat::Completion;
    set_context_tokens(int(markup ? model->tokenize_markup(text, model->add_bos()).size()
                                  : model->tokenize(text, model->add_bos()).size()));
}

void ChatController::dropOldestTurn() {
    if (generating_) return;
    const QVector<ChatMessage>& rows = messages_.messages();
    // The next question after the first one the model sees; the last question always stays.
    int last_question = -1;
    for (int r = 0; r < rows.size(); ++r)
        if (rows[r].role == QLatin1String("user")) last_question = r;
    int next = context_start_ + 1;
    while (next < last_question && rows[next].role != QLatin1String("user")) ++next;
    if (last_question < 0 || next > last_question) return;
    set_context(next, false);
    save_options();
    regenerate();
}

void ChatController::start_answer() {
    set_found_row(-1);  // the view follows the new answer again
    // A regenerated answer is a sibling of the one it replaces: same parent, the user's message.
    messages_.append(ChatMessage{0, QStringLiteral("assistant"), {}, true, {}});
    if (!unsaved_question_) save_answer_row();
    since_saved_.start();
    const RenderedPrompt prompt = render(rows_in_context());
    generating_ = true;
    emit generatingChanged();
    pending_.clear();
    if (!prompt.error.isEmpty()) {
        on_failed(prompt.error + tr(" (choose another prompt format in the chat settings)"), ember::ErrorCode::Failed);
        return;
    }
    flush_timer_.start();
    GenerationRequest request;
    request.prompt = prompt.text;
    // Control tokens are markup in every chat format; plain completion keeps all text as text.
    request.markup = prompt_format_from_name(prompt_format()) != PromptFormat::Completion;
    request.max_tokens = settings_.max_tokens;
    request.sampling = sampling_params(settings_, std::uniform_int_distribution<uint64_t>()(random_));
    request.n_ctx = settings_.context_length;
    engine_->generate(request);
}

void ChatController::flush() {
    save_question();
    if (pending_.isEmpty()) return;
    messages_.append_to_last(pending_);
    pending_.clear();
    const ChatMessage& answer = messages_.messages().back();
    if (store_ && answer.id != 0 && since_saved_.elapsed() >= kSaveIntervalMs) {
        saved(store_->updateGenerating(answer.id, answer.content));
        since_saved_.start();
    }
}

void ChatController::on_finished(const GenerationStats& stats) {
    if (!generating_) return;
    set_context(context_start_, stats.stop_reason == GenerationStats::StopReason::ContextFull);
    set_context_tokens(engine_->context_used());
    const store::GenerationStats stored = stored_stats(stats);
    finish_answer(stats_line(stored), stored);
    emit answerFinished(stats);
}

void ChatController::on_failed(const QString& error, ember::ErrorCode code) {
    if (!generating_) return;
    set_context(context_start_, code == ember::ErrorCode::ContextOverflow);
    finish_answer(tr("error: %1").arg(error), failed_stats(error));
    count_context_tokens();
}

void ChatController::finish_answer(const QString& line, const store::GenerationStats& stats) {
    flush_timer_.stop();
    flush();
    const ChatMessage& answer = messages_.messages().back();
    if (store_ && answer.id != 0) saved(store_->finishAssistant(answer.id, answer.content, stats));
    messages_.finish_last(line);
    emit chatUpdated();  // the chat moves to the top of the list
    generating_ = false;
    emit generatingChanged();
}

void ChatController::set_chat_id(qint64 id) {
    if (id == chat_id_) return;
    chat_id_ = id;
    emit chatIdChanged();
}

QVector<ChatMessage> ChatController::rows_of(const QList<store::Message>& path) {
    QVector<ChatMessage> rows;
    for (const store::Message& m : path) {
        if (m.role == store::Role::System) continue;
        QString stats = m.status == store::MessageStatus::Interrupted ? tr("interrupted") : stats_line(m.stats);
        ChatMessage row{m.id, store::roleName(m.role), m.content, false, stats};
        if (auto s = store_->siblings(m.id); saved(s)) {
            row.sibling_index = int(s.value().index);
            row.sibling_count = int(s.value().ids.size());
        }
        rows.push_back(row);
    }
    return rows;
}

void ChatController::show_chat(const store::Chat& chat, const QList<store::Message>& path, qint64 found_message) {
    QVector<ChatMessage> rows = rows_of(path);
    set_found_row(-1);
    set_context(0, false);
    set_chat_id(chat.id);
    system_prompt_ = chat.options.systemPrompt;
    settings_ = settings_from_json(chat.options.settings, settings_);
    emit settingsChanged();
    const qint64 context_from = chat.options.settings.value(kContextFromKey).toInteger();
    const auto start = std::find_if(rows.begin(), rows.end(), [&](const ChatMessage& m) { return m.id == context_from; });
    const int context_start = context_from != 0 && start != rows.end() ? int(start - rows.begin()) : 0;
    messages_.replace_from(0, std::move(rows));
    set_context(context_start, false);
    count_context_tokens();
    if (found_message == 0) return;
    const QVector<ChatMessage>& shown = messages_.messages();
    for (int r = 0; r < shown.size(); ++r)
        if (shown[r].id == found_message) set_found_row(r);
}

void ChatController::update_last_siblings() {
    auto s = store_->siblings(messages_.messages().back().id);
    if (saved(s)) messages_.set_last_siblings(int(s.value().index), int(s.value().ids.size()));
}

void ChatController::showSibling(int row, int delta) {
    if (generating_ || !store_ || row < 0 || row >= messages_.rowCount()) return;
    const qint64 id = messages_.messages()[row].id;
    if (id == 0) return;
    auto siblings = store_->siblings(id);
    if (!saved(siblings)) return;
    const qsizetype target = siblings.value().index + delta;
    if (target < 0 || target >= siblings.value().ids.size()) return;
    auto path = store_->selectBranch(siblings.value().ids[target]);
    if (!saved(path)) return;
    // Siblings share their parent, so the rows above `row` are the same on the new branch.
    set_found_row(-1);
    messages_.replace_from(row, rows_of(path.value()).mid(row));
    count_context_tokens();
}

void ChatController::editMessage(int row, const QString& text) {
    if (generating_ || row < 0 || row >= messages_.rowCount() || text.trimmed().isEmpty()) return;
    const ChatMessage old = messages_.messages()[row];
    if (text == old.content) return;
    set_found_row(-1);
    const bool question = old.role == QLatin1String("user");
    if (question && engine_->status() != EngineController::Status::Ready) return;  // it would wait for an answer
    set_context(std::min(context_start_, row), false);
    // Same parent as the original, so the edit and the original are siblings.
    const qint64 parent = row > 0 ? messages_.messages()[row - 1].id : 0;
    if (store_ && chat_id_ != 0 && old.id != 0) {
        auto id = store_->addMessage(chat_id_, parent ? std::optional<qint64>(parent) : std::nullopt,
                                     question ? store::Role::User : store::Role::Assistant, text);
        if (!saved(id)) return;
        auto path = store_->selectBranch(id.value());
        if (!saved(path)) return;
        messages_.replace_from(row, rows_of(path.value()).mid(row));
    } else {
        ChatMessage edited;
        edited.role = old.role;
        edited.content = text;
        messages_.replace_from(row, {edited});
    }
    // The context may start at the edited message: it is a new message now.
    if (context_start_ > 0) save_options();
    if (question) start_answer();
    emit chatUpdated();
}

void ChatController::set_found_row(int row) {
    if (row == found_row_) return;
    found_row_ = row;
    emit foundRowChanged();
}

}  // namespace ember::app
