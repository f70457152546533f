#pragma once
// The QML face of the engine: owns the EngineWorker thread, mirrors its state in properties,
// forwards requests as queued calls. Lives on the GUI thread; never waits on the worker.

#include <QObject>
#include <QThread>
#include <QTimer>
#include <QtQml/qqmlregistration.h>

#include "app/engine/engine_worker.h"
#include "app/engine/layer_split_model.h"
#include "app/engine/sparsity_calibrator.h"

class QQmlEngine;
class QJSEngine;

namespace ember::app {

class EngineController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON

    Q_PROPERTY(Status status READ status NOTIFY statusChanged)
    Q_PROPERTY(QString error READ error NOTIFY statusChanged)
    // Why the last file chosen did not load, naming it, and which model runs instead; empty
    // after a load that worked or once dismissed.
    Q_PROPERTY(QString loadError READ load_error NOTIFY loadErrorChanged)
    Q_PROPERTY(QString modelPath READ model_path NOTIFY modelChanged)
    Q_PROPERTY(QString modelName READ model_name NOTIFY modelChanged)
    Q_PROPERTY(QString modelDescription READ model_description NOTIFY modelChanged)
    Q_PROPERTY(bool sparse READ sparse NOTIFY modelChanged)
    Q_PROPERTY(QString deviceName READ device_name NOTIFY deviceChanged)
    Q_PROPERTY(QString deviceNote READ device_note NOTIFY deviceChanged)
    // Whether a sparse model may use a GPU (AppSettings.useGpu, which AppShell passes on).
    Q_PROPERTY(bool gpuEnabled READ gpu_enabled NOTIFY deviceChanged)
    // A usable GPU exists (the last load's probe), in use or turned off.
    Q_PROPERTY(bool gpuFound READ gpu_found NOTIFY deviceChanged)
    Q_PROPERTY(double budgetBytes READ budget_bytes NOTIFY deviceChanged)
    Q_PROPERTY(double usedBytes READ used_bytes NOTIFY deviceChanged)
    // usedBytes by kind: dense matrices with norms and scratch, the KV cache, hot FFN rows.
    Q_PROPERTY(double denseBytes READ dense_bytes NOTIFY deviceChanged)
    Q_PROPERTY(double kvBytes READ kv_bytes NOTIFY deviceChanged)
    Q_PROPERTY(double hotBytes READ hot_bytes NOTIFY deviceChanged)
    Q_PROPERTY(double maxBudgetBytes READ max_budget_bytes NOTIFY modelChanged)
    Q_PROPERTY(double hotNeurons READ hot_neurons NOTIFY deviceChanged)
    Q_PROPERTY(double totalNeurons READ total_neurons NOTIFY deviceChanged)
    Q_PROPERTY(double tokensPerSecond READ tokens_per_second NOTIFY splitChanged)
    // Of the active neurons of every token of the answer so far, the share computed on the device.
    Q_PROPERTY(double answerDeviceShare READ answer_device_share NOTIFY splitChanged)
    // The device's share of the active neurons for each of the latest tokens, oldest first.
    Q_PROPERTY(QList<double> recentShares READ recent_shares NOTIFY splitChanged)
    Q_PROPERTY(int recentTokens READ recent_tokens CONSTANT)
    Q_PROPERTY(ember::app::LayerSplitModel* layers READ layers CONSTANT)
    // Measuring the loaded model's activation sparsity in the background.
    Q_PROPERTY(ember::app::SparsityCalibrator* calibration READ calibration CONSTANT)
    // The context meter: tokens of the conversation in the model's context, and its size.
    Q_PROPERTY(int contextUsed READ context_used NOTIFY contextChanged)
    Q_PROPERTY(int contextSize READ context_size NOTIFY contextChanged)
    // For the context-length setting: the KV cache's bytes per token of context, and the
    // context the model was trained for (beyond it, answers degrade).
    Q_PROPERTY(double kvBytesPerToken READ kv_bytes_per_token NOTIFY modelChanged)
    Q_PROPERTY(int trainedContext READ trained_context NOTIFY modelChanged)
    Q_PROPERTY(QString chatTemplate READ chat_template NOTIFY modelChanged)
    // Activation sparsity of a calibrated dense model (LoadedModel): the level in use, the
    // measured levels ({level, pplIncrease, sameTop, speed}; empty without a calibration), the
    // level to suggest (within 1 % of the dense perplexity and, where measured, faster than
    // dense), and why a level chosen is not in use.
    Q_PROPERTY(double activationSparsity READ activation_sparsity NOTIFY modelChanged)
    Q_PROPERTY(QVariantList sparsityLevels READ sparsity_levels NOTIFY modelChanged)
    Q_PROPERTY(double recommendedSparsity READ recommended_sparsity NOTIFY modelChanged)
    Q_PROPERTY(QString sparsityNote READ sparsity_note NOTIFY modelChanged)

public:
    // Empty: no model; Error: the last load failed (error says why). A failed answer goes back
    // to Ready, with error set, when a model is still loaded.
    enum class Status { Empty, Loading, Ready, Generating, Error };
    Q_ENUM(Status)

    // Not default-constructible on purpose: QML (Qt 6.4) would build its own instance instead
    // of calling create().
    explicit EngineController(QObject* parent);
    ~EngineController() override;

    // The one instance main() (or a test) created, handed to QML.
    static EngineController* create(QQmlEngine*, QJSEngine*);
    static void set_instance(EngineController* controller);

    Status status() const { return status_; }
    QString error() const { return error_; }
    QString load_error() const { return load_error_; }
    QString model_path() const { return model_.path; }
    QString model_name() const { return model_.name; }
    QString model_description() const { return model_.description; }
    bool sparse() const { return model_.sparse; }
    double kv_bytes_per_token() const { return double(model_.kv_bytes_per_token); }
    int trained_context() const { return model_.n_ctx_train; }
    QString chat_template() const { return model_.chat_template; }
    double activation_sparsity() const { return model_.activation_sparsity; }
    QVariantList sparsity_levels() const { return model_.sparsity_levels; }
    double recommended_sparsity() const { return model_.recommended_sparsity; }
    QString sparsity_note() const { return model_.sparsity_note; }
    // The level chosen for each model file (AppSettings keeps them), used whenever it loads.
    void set_sparsity_choices(const QVariantMap& level_by_path) { sparsity_by_path_ = level_by_path; }
    // The VRAM budget set for each model file (AppSettings keeps them), used instead of the
    // caller's default whenever that model loads.
    void set_budget_choices(const QVariantMap& bytes_by_path) { budget_by_path_ = bytes_by_path; }
    // Where GPU indexes go (EngineWorker::set_gpu_index_folders); for the loads after this call.
    void set_gpu_index_folders(const QString& library_dir, const QString& cache_dir);
    std::shared_ptr<const ember::Model> model_handle() const { return model_.handle; }
    QString bos_token() const { return model_.bos_token; }
    QString eos_token() const { return model_.eos_token; }
    const std::vector<std::string>& control_pieces() const { return model_.control_pieces; }
    QString architecture() const { return model_.architecture; }
    QString device_name() const { return device_.device; }
    QString device_note() const { return device_.note; }
    bool gpu_enabled() const { return gpu_enabled_; }
    bool gpu_found() const { return device_.gpu_found; }
    // Loaded models move at once: an answer in progress stops and the model loads again on the
    // new device choice.
    void set_gpu_enabled(bool enabled);
    double budget_bytes() const { return double(device_.budget_bytes); }
    double used_bytes() const { return double(device_.used_bytes); }
    double dense_bytes() const { return double(device_.dense_bytes); }
    double kv_bytes() const { return double(device_.kv_bytes); }
    double hot_bytes() const { return double(device_.hot_bytes); }
    double max_budget_bytes() const { return double(max_budget_); }
    double hot_neurons() const { return double(device_.hot_neurons); }
    double total_neurons() const { return double(device_.total_neurons); }
    double tokens_per_second() const { return tokens_per_second_; }
    double answer_device_share() const { return answer_active_ > 0 ? double(answer_on_device_) / double(answer_active_) : 0.0; }
    QList<double> recent_shares() const { return recent_shares_; }
    static constexpr int kRecentTokens = 64;
    int recent_tokens() const { return kRecentTokens; }
    LayerSplitModel* layers() { return &layers_; }
    SparsityCalibrator* calibration() { return &calibrator_; }
    int context_used() const { return context_used_; }
    int context_size() const { return context_size_; }

    Q_INVOKABLE void loadModel(const QString& path, double budgetBytes = 0);
    // Stops an answer in progress and frees the model; status becomes Empty.
    Q_INVOKABLE void unloadModel();
    // n_ctx: the context the session must hold (it is resized first when it differs); 0 keeps it.
    void generate(const GenerationRequest& request);
    Q_INVOKABLE void stop();
    Q_INVOKABLE void dismissLoadError();
    Q_INVOKABLE void setBudget(double bytes);
    // Loads the model again at this activation sparsity (0: off) and remembers the choice for it.
    Q_INVOKABLE void setActivationSparsity(double level);

signals:
    void statusChanged();
    void loadErrorChanged();
    void modelChanged();
    void deviceChanged();
    void splitChanged();
    void contextChanged();
    void sparsityChoiceChanged(const QString& path, double level);
    void budgetChoiceChanged(const QString& path, double bytes);
    void token(const QString& text);
    void generationFinished(const ember::app::GenerationStats& stats);
    // code: ContextOverflow when the conversation no longer fits the context.
    void generationFailed(const QString& error, ember::ErrorCode code);

private:
    void set_status(Status status, const QString& error = {});
    // The level `path` runs at from now on, kept for its next load (sparsityChoiceChanged).
    void remember_sparsity(const QString& path, double level);
    void set_load_error(const QString& error);
    void show_split();

    QThread thread_;
    EngineWorker* worker_;  // lives on thread_, deleted when it finishes
    LayerSplitModel layers_;
    SparsityCalibrator calibrator_;
    SplitSnapshot pending_split_;  // the latest token's, shown by split_timer_
    QTimer split_timer_;
    Status status_ = Status::Empty;
    QString error_;
    QString load_error_;
    LoadedModel model_;
    DeviceState device_;
    bool gpu_enabled_ = true;
    qint64 max_budget_ = 0;
    // A model has loaded and its device's state, which the worker sends next, has not come yet:
    // the status turns Ready with it, so nothing sees a loaded model without its device.
    bool awaiting_device_ = false;
    double tokens_per_second_ = 0.0;
    qint64 answer_active_ = 0, answer_on_device_ = 0;
    QList<double> recent_shares_;  // per token, every token (not only those shown), at most kRecentTokens
    int context_used_ = 0;
    int context_size_ = 0;
    QVariantMap sparsity_by_path_;
    QVariantMap budget_by_path_;
};

}  // namespace ember::app
