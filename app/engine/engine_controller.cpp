#include "app/engine/engine_controller.h"

#include <QFileInfo>
#include <QJSEngine>
#include <QQmlEngine>

namespace ember::app {
namespace {

EngineController* g_instance = nullptr;

}  // namespace

EngineController::EngineController(QObject* parent) : QObject(parent), worker_(new EngineWorker) {
    qRegisterMetaType<GenerationRequest>();
    qRegisterMetaType<GenerationStats>();
    qRegisterMetaType<LoadedModel>();
    qRegisterMetaType<DeviceState>();
    qRegisterMetaType<SplitSnapshot>();
    qRegisterMetaType<ember::ErrorCode>();
    worker_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    connect(worker_, &EngineWorker::loaded, this, [this](const LoadedModel& m) {
        model_ = m;
        // Without a GPU the slider previews cards up to twice the model's size.
        max_budget_ = 2 * QFileInfo(m.path).size();
        emit modelChanged();
        set_load_error({});
        awaiting_device_ = true;
        calibrator_.model_loaded(m.path, m.calibratable);
    }, Qt::QueuedConnection);
    // A calibration made while the model runs dense: its levels are offered at once, and a level
    // chosen loads the model again with it.
    connect(&calibrator_, &SparsityCalibrator::calibrated, this, [this](const QString& path) {
        if (path != model_.path || !model_.handle) return;
        const std::optional<SparsityChoices> measured = measured_sparsity(*model_.handle);
        if (!measured) return;
        model_.sparsity_levels = measured->levels;
        model_.recommended_sparsity = measured->recommended;
        model_.sparsity_note.clear();
        model_.calibratable = false;
        calibrator_.model_loaded(path, false);
        emit modelChanged();
    });
    connect(worker_, &EngineWorker::load_failed, this, [this](const QString& path, const QString& e, bool kept) {
        const QString why = tr("%1 could not be loaded: %2").arg(QFileInfo(path).fileName(), e);
        if (kept) {
            // loaded() came first: the model from before runs again.
            set_load_error(why + "\n" + tr("Still using %1.").arg(model_.name));
            set_status(Status::Ready);
            return;
        }
        if (!model_.path.isEmpty()) {
            model_ = {};
            calibrator_.model_unloaded();
            emit modelChanged();
        }
        set_load_error(why);
        set_status(Status::Error, why);
    }, Qt::QueuedConnection);
    connect(worker_, &EngineWorker::unloaded, this, [this] {
        model_ = {};
        calibrator_.model_unloaded();
        device_ = {};
        awaiting_device_ = false;
        context_used_ = context_size_ = 0;
        split_timer_.stop();
        pending_split_ = {};
        show_split();  // no layers
        emit modelChanged();
        emit deviceChanged();
        emit contextChanged();
        set_status(Status::Empty);
    }, Qt::QueuedConnection);
    connect(worker_, &EngineWorker::sparsity_changed, this, [this](double level, const QString& description) {
        remember_sparsity(model_.path, level);
        model_.activation_sparsity = level;
        model_.description = description;
        emit modelChanged();
    }, Qt::QueuedConnection);
    connect(worker_, &EngineWorker::token, this, &EngineController::token, Qt::QueuedConnection);
    // A snapshot arrives per batch of tokens (~20 a second); the view shows the latest one at
    // most 4 times a second: bars that move faster are not read, and every update redraws the
    // panel, which on a machine without a GPU takes CPU from the engine.
    split_timer_.setSingleShot(true);
    split_timer_.setInterval(250);
    connect(&split_timer_, &QTimer::timeout, this, &EngineController::show_split);
    connect(worker_, &EngineWorker::split, this, [this](const SplitSnapshot& s) {
        // Every token counts in the answer's share and the strip, even those the view skips.
        answer_active_ += s.active;
        answer_on_device_ += s.active_on_device;
        for (double share : s.token_shares) {
            if (recent_shares_.size() == kRecentTokens) recent_shares_.removeFirst();
            recent_shares_.append(share);
        }
        pending_split_ = s;
        if (!split_timer_.isActive()) split_timer_.start();
    }, Qt::QueuedConnection);
    connect(worker_, &EngineWorker::device_changed, this, [this](const DeviceState& d) {
        device_ = d;
        // The bars follow a re-plan at once, not at the next answer's first token.
        layers_.set_hot(d.hot_per_layer, d.layer_neurons);
        // A snapshot still waiting for the view's timer was taken under the old placement: it
        // keeps its tokens' activity but must not put the old resident counts back.
        if (pending_split_.layers.size() == d.hot_per_layer.size())
            for (qsizetype il = 0; il < d.hot_per_layer.size(); ++il) pending_split_.layers[il].hot = d.hot_per_layer[il];
        // On a GPU the slider goes up to its free memory.
        if (d.max_budget_bytes > 0 && d.max_budget_bytes != max_budget_) {
            max_budget_ = d.max_budget_bytes;
            emit modelChanged();
        }
        emit deviceChanged();
        if (awaiting_device_) {
            awaiting_device_ = false;
            set_status(Status::Ready);
        }
    }, Qt::QueuedConnection);
    connect(worker_, &EngineWorker::context_changed, this, [this](int used, int size) {
        context_used_ = used;
        context_size_ = size;
        emit contextChanged();
    }, Qt::QueuedConnection);
    connect(worker_, &EngineWorker::finished, this, [this](GenerationStats st) {
        // The answer's split snapshots came before it: the share counts every token.
        st.device_share = answer_device_share();
        set_status(Status::Ready);
        emit generationFinished(st);
    }, Qt::QueuedConnection);
    connect(worker_, &EngineWorker::failed, this, [this](const QString& e, ember::ErrorCode code) {
        set_status(model_.path.isEmpty() ? Status::Error : Status::Ready, e);
        emit generationFailed(e, code);
    }, Qt::QueuedConnection);
    thread_.setObjectName(QStringLiteral("EngineWorker"));
    thread_.start();
}

EngineController::~EngineController() {
    worker_->request_stop();
    thread_.quit();
    thread_.wait();
    if (g_instance == this) g_instance = nullptr;
}

EngineController* EngineController::create(QQmlEngine*, QJSEngine*) {
    Q_ASSERT(g_instance);
    QJSEngine::setObjectOwnership(g_instance, QJSEngine::CppOwnership);
    return g_instance;
}

void EngineController::set_instance(EngineController* controller) { g_instance = controller; }

void EngineController::show_split() {
    const SplitSnapshot& s = pending_split_;
    layers_.update(s);
    tokens_per_second_ = s.tokens_per_second;
    emit splitChanged();
}

void EngineController::set_status(Status status, const QString& error) {
    status_ = status;
    error_ = error;
    emit statusChanged();
}

void EngineController::set_load_error(const QString& error) {
    if (error == load_error_) return;
    load_error_ = error;
    emit loadErrorChanged();
}

void EngineController::dismissLoadError() { set_load_error({}); }

void EngineController::loadModel(const QString& path, double budgetBytes) {
    set_status(Status::Loading);
    const double sparsity = sparsity_by_path_.value(path, 0.0).toDouble();
    budgetBytes = budget_by_path_.value(path, budgetBytes).toDouble();
    QMetaObject::invokeMethod(
        worker_,
        [w = worker_, path, budgetBytes, gpu = gpu_enabled_, sparsity] { w->load(path, qint64(budgetBytes), 2048, gpu, sparsity); },
        Qt::QueuedConnection);
}

void EngineController::set_gpu_index_folders(const QString& library_dir, const QString& cache_dir) {
    QMetaObject::invokeMethod(
        worker_, [w = worker_, library_dir, cache_dir] { w->set_gpu_index_folders(library_dir, cache_dir); },
        Qt::QueuedConnection);
}

void EngineController::setActivationSparsity(double level) {
    if (model_.path.isEmpty() || level == model_.activation_sparsity) return;
    worker_->request_stop();
    // Every level runs on the weights loaded for any (kept as the choice once it runs); off, or
    // on from off, needs another layout.
    if (model_.activation_sparsity > 0.0 && level > 0.0) {
        QMetaObject::invokeMethod(worker_, [w = worker_, level] { w->set_activation_sparsity(level); }, Qt::QueuedConnection);
        return;
    }
    remember_sparsity(model_.path, level);
    loadModel(model_.path, double(device_.budget_bytes));
}

void EngineController::remember_sparsity(const QString& path, double level) {
    sparsity_by_path_.insert(path, level);
    emit sparsityChoiceChanged(path, level);
}

void EngineController::set_gpu_enabled(bool enabled) {
    if (enabled == gpu_enabled_) return;
    gpu_enabled_ = enabled;
    emit deviceChanged();
    if (model_.path.isEmpty()) return;
    worker_->request_stop();
    loadModel(model_.path, double(device_.budget_bytes));
}

void EngineController::generate(const GenerationRequest& r) {
    set_status(Status::Generating);
    answer_active_ = answer_on_device_ = 0;
    recent_shares_.clear();
    QMetaObject::invokeMethod(worker_, [w = worker_, r] { w->generate(r); }, Qt::QueuedConnection);
}

void EngineController::unloadModel() {
    if (model_.path.isEmpty()) return;
    worker_->request_stop();
    QMetaObject::invokeMethod(worker_, [w = worker_] { w->unload(); }, Qt::QueuedConnection);
}

void EngineController::stop() { worker_->request_stop(); }

void EngineController::setBudget(double bytes) {
    if (!model_.path.isEmpty()) {
        budget_by_path_.insert(model_.path, bytes);
        emit budgetChoiceChanged(model_.path, bytes);
    }
    worker_->request_budget(qint64(bytes));
    // Idle: apply now; generating: the worker applies it between tokens.
    QMetaObject::invokeMethod(worker_, [w = worker_] { w->apply_pending_budget(); }, Qt::QueuedConnection);
}

}  // namespace ember::app
