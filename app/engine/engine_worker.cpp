#include "app/engine/engine_worker.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>

#include "app/engine/device_choice.h"
#include "app/engine/reusable_prefix.h"
#include "app/engine/sparsity_calibrator.h"
#include "ember/gpu.h"

namespace ember::app {
namespace {

// A layer's FFN neurons: a mixture of experts' are all its experts'.
int layer_neurons(const ember::ModelInfo& info) { return info.n_expert > 0 ? info.n_expert * info.n_ff : info.n_ff; }

// `activation_sparsity`: the level the session runs, which may differ from the load's.
QString describe(const ember::ModelInfo& info, float activation_sparsity) {
    const QString kind = activation_sparsity > 0.0f
                             ? QCoreApplication::translate("EngineWorker", "%1 % activation sparsity")
                                   .arg(std::lround(100.0f * activation_sparsity))
                         : info.sparse ? QCoreApplication::translate("EngineWorker", "sparse (PowerInfer)")
                                       : QCoreApplication::translate("EngineWorker", "dense");
    return QCoreApplication::translate("EngineWorker", "%1 · %2 layers · %3 · %4 MiB · %5")
        .arg(QString::fromStdString(info.architecture))
        .arg(info.n_layer)
        .arg(QString::fromStdString(info.weight_type))
        .arg(info.weight_bytes >> 20)
        .arg(kind);
}

// A model in the app's library keeps its GPU index beside it (PowerInfer's place; deleting the
// model deletes both). A model anywhere else gets one in the app's cache folder: a folder the user
// pointed the app at may be read-only, shared, or simply not the app's to write in. The name keeps
// the file's name and a hash of its whole path, so two models of one name do not collide.
std::string gpu_index_place(const QString& model, const QString& library_dir, const QString& cache_dir) {
    if (cache_dir.isEmpty()) return {};
    const QString canonical = QFileInfo(model).canonicalFilePath();
    const QString library = QFileInfo(library_dir).canonicalFilePath();
    if (!library.isEmpty() && canonical.startsWith(library + QLatin1Char('/'))) return {};
    QDir().mkpath(cache_dir);
    const QByteArray key = QCryptographicHash::hash(canonical.toUtf8(), QCryptographicHash::Sha1).toHex().left(12);
    return QString(cache_dir + QLatin1Char('/') + QFileInfo(model).fileName() + QLatin1Char('.') +
                   QString::fromLatin1(key) + QStringLiteral(".generated.gpuidx")).toStdString();
}

// ~20 batches a second: more than the chat shows (ChatController flushes at ~10 Hz), so a batch is
// always ready for the next flush.
constexpr std::chrono::milliseconds kBatchInterval{50};

// One token's reading folded into a batch: its layers replace the batch's (the view shows the
// latest token), its share and counts add to the batch's.
void add_token(SplitSnapshot& batch, SplitSnapshot token) {
    int active = 0, on_device = 0;
    for (const LayerSplit& l : token.layers) {
        active += l.active;
        on_device += l.active_on_device;
    }
    batch.active += active;
    batch.active_on_device += on_device;
    batch.token_shares.push_back(active > 0 ? double(on_device) / active : 0.0);
    batch.layers = std::move(token.layers);
    batch.tokens_per_second = token.tokens_per_second;
}

}  // namespace

EngineWorker::EngineWorker() = default;
EngineWorker::~EngineWorker() = default;

void EngineWorker::request_stop() {
    stop_.store(true);
    // Session::cancel is thread-safe; it also stops a prompt evaluation in progress.
    std::lock_guard lock(session_mutex_);
    if (session_) session_->cancel();
}

void EngineWorker::request_budget(qint64 bytes) { pending_budget_.store(std::max<qint64>(bytes, 0)); }

void EngineWorker::unload() {
    {
        std::lock_guard lock(session_mutex_);
        session_.reset();
    }
    model_.reset();
    loaded_path_.clear();
    context_.clear();
    previous_.clear();
    emit unloaded();
}

void EngineWorker::set_gpu_index_folders(const QString& library_dir, const QString& cache_dir) {
    library_dir_ = library_dir;
    gpu_index_cache_dir_ = cache_dir;
}

void EngineWorker::load(const QString& path, qint64 budget_bytes, int n_ctx, bool use_gpu, double activation_sparsity) {
    const QString before = loaded_path_;
    const qint64 before_budget = qint64(session_params_.device_budget_bytes);
    const double before_sparsity = loaded_sparsity_;
    const auto fail = [&](const std::string& message) {
        // The first model goes before the second loads, so the machine never holds both.
        bool kept = false;
        if (!before.isEmpty() && before != path) {
            load(before, before_budget, n_ctx, use_gpu, before_sparsity);
            kept = loaded_path_ == before;
        }
        emit load_failed(path, QString::fromStdString(message), kept);
    };
    {
        std::lock_guard lock(session_mutex_);
        session_.reset();
    }
    model_.reset();
    loaded_path_.clear();
    context_.clear();
    previous_.clear();
    ember::ModelParams mp;
    mp.activation_sparsity = float(activation_sparsity);
    auto model = ember::Model::load(path.toStdString(), mp);
    QString sparsity_note;
    if (!model && activation_sparsity > 0.0) {
        sparsity_note = tr("Activation sparsity is off: %1").arg(QString::fromStdString(model.error().message));
        model = ember::Model::load(path.toStdString());
    }
    if (!model) return fail(model.error().message);
    ember::SessionParams sp;
    sp.n_ctx = n_ctx;
    sp.gpu_index_path = gpu_index_place(path, library_dir_, gpu_index_cache_dir_);
    const DeviceChoice choice = choose_device(ember::probe_gpus(), use_gpu, uint64_t(std::max<qint64>(budget_bytes, 0)));
    sp.device = choice.device;
    sp.device_budget_bytes = choice.budget_bytes;
    gpu_free_bytes_ = qint64(choice.gpu_free_bytes);
    gpu_found_ = choice.gpu_found;
    no_gpu_reason_ = choice.no_gpu_reason;
    auto session = ember::Session::create(*model, sp);
    if (!session && sp.device != "sim" && sp.device != "cpu") {
        no_gpu_reason_ = QString::fromStdString(session.error().message);
        gpu_free_bytes_ = 0;
        sp.device = "sim";
        session = ember::Session::create(*model, sp);
    }
    if (!session) return fail(session.error().message);
    model_ = *model;
    loaded_path_ = path;
    loaded_sparsity_ = activation_sparsity;
    session_params_ = sp;
    {
        std::lock_guard lock(session_mutex_);
        session_ = std::move(*session);
    }
    pending_budget_.store(-1);
    warm_up();
    refresh_hot();
    const ember::ModelInfo& info = model_->info();
    // The file name is what the user downloaded or chose; general.name is often a converter's
    // folder name ("hf").
    LoadedModel loaded_model{path, QFileInfo(path).completeBaseName(), describe(info, info.activation_sparsity), info.sparse, info.n_layer,
                             info.n_ctx_train, qint64(info.kv_bytes_per_token), QString::fromStdString(info.chat_template),
                             QString::fromStdString(info.bos_token), QString::fromStdString(info.eos_token),
                             info.control_pieces, QString::fromStdString(info.architecture), model_,
                             info.activation_sparsity, {}, 0.0, sparsity_note};
    if (const std::optional<SparsityChoices> measured = measured_sparsity(*model_)) {
        loaded_model.sparsity_levels = measured->levels;
        loaded_model.recommended_sparsity = measured->recommended;
    } else {
        loaded_model.calibratable = info.activation_sparsity_possible;
    }
    emit loaded(loaded_model);
    emit context_changed(0, session_->n_ctx());
    emit device_changed(device_state());
    emit split(snapshot(0.0));
}

// The first forward pass after a load is several times slower than the next ones (a 1B Q4_0 file on
// a 2-core VM: 65 ms for one token, then 7-12 ms; the first 48-token prompt 290 ms, then 200 ms),
// and a new session on the same model does not pay it again. One token evaluated while the model
// loads pays it, not the user's first question; the context stays empty.
void EngineWorker::warm_up() {
    const int32_t token = model_->add_bos() ? model_->bos() : model_->eos();
    if (token < 0) return;
    ember::GenerateParams gp;
    gp.n_predict = 0;
    // A failure here shows again, and is reported, when the first question is evaluated.
    (void)session_->generate(std::vector<int32_t>{token}, gp, {});
    session_->truncate(0);
}

void EngineWorker::apply_pending_budget() {
    const qint64 budget = pending_budget_.exchange(-1);
    if (budget < 0 || !session_) return;
    if (auto st = session_->set_device_budget(uint64_t(budget)); !st)
        emit failed(QString::fromStdString(st.error().message));
    refresh_hot();
    emit device_changed(device_state());
}

std::optional<QString> EngineWorker::replace_session(ember::SessionParams sp) {
    sp.device_budget_bytes = session_->device_report().budget_bytes;
    ember::SessionParams old = session_params_;
    old.device_budget_bytes = sp.device_budget_bytes;
    {
        std::lock_guard lock(session_mutex_);
        session_.reset();
    }
    context_.clear();
    auto session = ember::Session::create(model_, sp);
    if (!session) {
        auto previous = ember::Session::create(model_, old);
        {
            std::lock_guard lock(session_mutex_);
            if (previous) session_ = std::move(*previous);
        }
        if (session_) emit context_changed(0, session_->n_ctx());
        return QString::fromStdString(session.error().message);
    }
    {
        std::lock_guard lock(session_mutex_);
        session_ = std::move(*session);
    }
    session_params_ = sp;
    refresh_hot();
    emit context_changed(0, session_->n_ctx());
    emit device_changed(device_state());
    return std::nullopt;
}

bool EngineWorker::resize_context(int n_ctx) {
    ember::SessionParams sp = session_params_;
    sp.n_ctx = n_ctx;
    if (const std::optional<QString> why = replace_session(sp)) {
        emit failed(tr("cannot make a context of %1 tokens: %2").arg(n_ctx).arg(*why));
        return false;
    }
    return true;
}

void EngineWorker::set_activation_sparsity(double level) {
    if (!session_ || level == loaded_sparsity_) return;
    ember::SessionParams sp = session_params_;
    sp.activation_sparsity = float(level);
    if (const std::optional<QString> why = replace_session(sp)) {
        emit failed(tr("cannot run activation sparsity %1 %: %2").arg(std::lround(100.0 * level)).arg(*why));
        return;
    }
    loaded_sparsity_ = level;
    emit sparsity_changed(level, describe(model_->info(), float(level)));
}

void EngineWorker::generate(const GenerationRequest& request) {
    if (!session_) return emit failed(tr("no model is loaded"));
    stop_.store(false);
    apply_pending_budget();
    if (request.n_ctx > 0 && request.n_ctx != session_->n_ctx() && !resize_context(request.n_ctx)) return;
    const std::string text = request.prompt.toStdString();
    std::vector<int32_t> prompt = request.markup ? model_->tokenize_markup(text, model_->add_bos())
                                                 : model_->tokenize(text, model_->add_bos());
    const size_t keep = reusable_prefix(context_, prompt);
    session_->truncate(int32_t(keep));
    context_.assign(prompt.begin(), prompt.begin() + std::ptrdiff_t(keep));
    const std::vector<int32_t> fresh(prompt.begin() + std::ptrdiff_t(keep), prompt.end());

    ember::GenerateParams gp;
    gp.n_predict = request.max_tokens;
    gp.sampling = request.sampling;
    const auto start = std::chrono::steady_clock::now();
    int generated = 0;
    // A queued signal per token would wake the GUI thread hundreds of times a second and allocate
    // there for every token, taking a core from this loop on a small machine. Text and split
    // readings leave in batches instead: the first text at once (the user waits for it), then
    // what came since at most every kBatchInterval.
    std::string unsent;  // UTF-8 of the tokens since the last batch
    SplitSnapshot batch;
    std::chrono::steady_clock::time_point sent{};
    bool text_sent = false;
    const auto send_batch = [&] {
        text_sent = text_sent || !unsent.empty();
        if (!unsent.empty()) emit token(QString::fromUtf8(unsent.data(), qsizetype(unsent.size())));
        unsent.clear();
        emit split(batch);
        batch.token_shares.clear();
        batch.active = batch.active_on_device = 0;
    };
    auto result = session_->generate(fresh, gp, [&](const ember::TokenEvent& ev) {
        ++generated;
        unsent += ev.text;
        const auto now = std::chrono::steady_clock::now();
        const double seconds = std::chrono::duration<double>(now - start).count();
        add_token(batch, snapshot(seconds > 0 ? generated / seconds : 0.0));
        if ((!text_sent && !unsent.empty()) || now - sent >= kBatchInterval) {
            send_batch();
            sent = now;
        }
        if (pending_budget_.load() >= 0) apply_pending_budget();
        return !stop_.load();
    });
    if (!unsent.empty() || !batch.token_shares.isEmpty()) send_batch();
    context_.insert(context_.end(), fresh.begin(), fresh.end());
    if (!result) {
        context_.clear();
        session_->clear();
        emit context_changed(0, session_->n_ctx());
        return emit failed(QString::fromStdString(result.error().message), result.error().code);
    }
    context_.insert(context_.end(), result->tokens.begin(), result->tokens.end());
    context_.resize(size_t(session_->n_past()));
    const ember::Timings& t = session_->timings();
    GenerationStats stats;
    stats.prompt_tokens = t.n_prompt;
    stats.prompt_tokens_per_second = t.prompt_ms > 0 ? 1000.0 * t.n_prompt / t.prompt_ms : 0.0;
    stats.generated_tokens = int(result->tokens.size());
    stats.tokens_per_second = t.generate_ms > 0 ? 1000.0 * t.n_generated / t.generate_ms : 0.0;
    stats.first_token_ms = t.first_token_ms;
    stats.stop_reason = stop_reason_of(result->stop_reason, stop_.load());
    emit context_changed(session_->n_past(), session_->n_ctx());
    emit finished(stats);
}

SplitSnapshot EngineWorker::snapshot(double tokens_per_second) {
    SplitSnapshot snap;
    snap.tokens_per_second = tokens_per_second;
    const std::vector<ember::LayerSparsity> now = session_->layer_sparsity();
    const int n_ff = layer_neurons(model_->info());
    if (hot_per_layer_.size() != size_t(model_->info().n_layer)) refresh_hot();
    // A dense model computes every neuron of every token; a layer on the device computes them there.
    if (now.empty())
        for (const int hot : hot_per_layer_) snap.layers.push_back(LayerSplit{n_ff, hot, n_ff, hot});
    // The session counts since it began; the difference to the last reading is this token.
    for (size_t il = 0; il < now.size(); ++il) {
        const bool have_previous = il < previous_.size() && previous_[il].tokens < now[il].tokens;
        LayerSplit l;
        l.n_ff = now[il].n_ff;
        l.hot = hot_per_layer_[il];
        l.active = int(have_previous ? now[il].active - previous_[il].active : 0);
        l.active_on_device = int(have_previous ? now[il].active_on_device - previous_[il].active_on_device : 0);
        snap.layers.push_back(l);
    }
    previous_ = now;
    return snap;
}

void EngineWorker::refresh_hot() {
    const auto hot = session_->hot_neurons();
    hot_per_layer_.assign(size_t(model_->info().n_layer), 0);
    for (size_t il = 0; il < hot.size() && il < hot_per_layer_.size(); ++il) hot_per_layer_[il] = int(hot[il].size());
}

DeviceState EngineWorker::device_state() const {
    DeviceState d;
    d.hot_per_layer = QVector<int>(hot_per_layer_.begin(), hot_per_layer_.end());
    d.layer_neurons = layer_neurons(model_->info());
    const ember::DeviceReport r = session_->device_report();
    d.device = QString::fromStdString(r.device);
    d.budget_bytes = qint64(r.budget_bytes);
    d.used_bytes = qint64(r.used_bytes);
    d.dense_bytes = qint64(r.dense_bytes);
    d.kv_bytes = qint64(r.kv_bytes);
    d.hot_bytes = qint64(r.ffn_bytes);
    d.hot_neurons = r.hot_neurons;
    d.total_neurons = qint64(model_->info().n_layer) * layer_neurons(model_->info());
    d.max_budget_bytes = gpu_free_bytes_;
    d.gpu_found = gpu_found_;
    d.note = QString::fromStdString(r.note);
    if (!no_gpu_reason_.isEmpty())
        d.note = tr("No GPU in use: %1%2").arg(no_gpu_reason_, d.note.isEmpty() ? QString() : "; " + d.note);
    return d;
}

}  // namespace ember::app
