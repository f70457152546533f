#pragma once
// The engine on its own thread (architecture.md): loads a model, opens a session, generates with
// streaming. Lives in a QThread owned by EngineController; requests arrive as queued calls,
// results leave as signals carrying values. Stop and budget changes are atomics the generation
// loop reads between tokens, so they take effect while a generation runs.

#include <QObject>
#include <QString>
#include <QVariantList>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "app/engine/generation_stats.h"
#include "app/engine/split_snapshot.h"
#include "ember/model.h"
#include "ember/result.h"
#include "ember/session.h"

namespace ember::app {

struct GenerationRequest {
    QString prompt;            // the whole rendered conversation
    bool markup = false;       // the prompt's "<s>", "<|im_start|>"… are control tokens (a chat format's)
    int max_tokens = 256;
    ember::SamplingParams sampling;
    int n_ctx = 0;  // the context the session must hold; 0 keeps it
};

struct LoadedModel {
    QString path;
    QString name;
    QString description;  // architecture, size, weight type, sparse or dense
    bool sparse = false;
    int n_layer = 0;
    int n_ctx_train = 0;
    qint64 kv_bytes_per_token = 0;  // F16 K and V, all layers
    QString chat_template;          // the file's tokenizer.chat_template, empty when it has none
    QString bos_token;              // the BOS and EOS pieces, for the template
    QString eos_token;
    std::vector<std::string> control_pieces;  // what escape_markup keeps as text (ember/markup.h)
    QString architecture;           // general.architecture
    std::shared_ptr<const ember::Model> handle;  // the loaded weights, for others to share (the API server)
    // Activation sparsity (a dense model with a calibration beside it, from ember-calibrate): the
    // level it runs at (0: off), each measured level as {level, pplIncrease, sameTop, speed}, the
    // level to suggest (measured_sparsity), and why a level asked for is not in use.
    double activation_sparsity = 0.0;
    QVariantList sparsity_levels;
    double recommended_sparsity = 0.0;
    QString sparsity_note;
    // Dense with a gated FFN and no calibration with its cost measured: the app can make one.
    bool calibratable = false;
};

struct DeviceState {
    QString device;  // "cpu", "sim" (no GPU in use: a preview on the CPU) or the GPU's name
    qint64 max_budget_bytes = 0;  // the GPU's free memory when the model was loaded; 0 without one
    bool gpu_found = false;       // a usable GPU exists, whether the user lets the model use it or not
    qint64 budget_bytes = 0;
    qint64 used_bytes = 0;    // dense_bytes + kv_bytes + hot_bytes
    qint64 dense_bytes = 0;
    qint64 kv_bytes = 0;
    qint64 hot_bytes = 0;
    qint64 hot_neurons = 0;
    qint64 total_neurons = 0;
    QString note;  // why less than asked is on the device, or why there is no device
    QVector<int> hot_per_layer;  // resident on the device, layer by layer, as placed now
    int layer_neurons = 0;       // FFN neurons of a layer (all its experts')
};

class EngineWorker : public QObject {
    Q_OBJECT

public:
    EngineWorker();
    ~EngineWorker() override;

    // Thread-safe: make a running generation stop after the current token.
    void request_stop();
    // Thread-safe: a new device budget, applied between tokens (or at once when idle).
    void request_budget(qint64 bytes);

public slots:
    // Where GPU indexes go (SessionParams::gpu_index_path): beside models inside `library_dir`,
    // the app's own; in `cache_dir` for models anywhere else. Unset: beside every model.
    void set_gpu_index_folders(const QString& library_dir, const QString& cache_dir);
    // use_gpu false: the user turned the GPU off (choose_device says where the model goes). A file
    // that fails to load gives way to the model loaded before it, loaded again (the two are never
    // in memory together): loaded() for that one, then load_failed(). activation_sparsity > 0
    // runs a calibrated dense model sparse; when its calibration does not fit, the model loads
    // dense and LoadedModel::sparsity_note says why.
    void load(const QString& path, qint64 budget_bytes, int n_ctx, bool use_gpu, double activation_sparsity = 0.0);
    // Frees the session and the model (memory and device memory).
    void unload();
    void generate(const ember::app::GenerationRequest& request);
    void apply_pending_budget();
    // A model loaded with activation sparsity runs `level` (> 0) from now on: a new session on
    // the same weights, no reload; the conversation is evaluated again with the next answer.
    // sparsity_changed() when it runs, failed() (the old level kept) when it cannot.
    void set_activation_sparsity(double level);

signals:
    void loaded(const ember::app::LoadedModel& model);
    // model_kept: the model loaded before is loaded again (else none is).
    void load_failed(const QString& path, const QString& error, bool model_kept);
    void unloaded();
    // While generating: the text of the tokens since the previous token() (the first token alone),
    // and the split readings of the same tokens; at most ~20 times a second.
    void token(const QString& text);
    void split(const ember::app::SplitSnapshot& snapshot);
    void finished(const ember::app::GenerationStats& stats);
    // code: ContextOverflow when the conversation no longer fits the context.
    void failed(const QString& error, ember::ErrorCode code = ember::ErrorCode::Failed);
    void device_changed(const ember::app::DeviceState& state);
    // Tokens held in the context (the conversation so far) and its size, after a load and after
    // each answer.
    void context_changed(int used, int size);
    // The level set_activation_sparsity() switched to, and the model's description with it.
    void sparsity_changed(double level, const QString& description);

private:
    SplitSnapshot snapshot(double tokens_per_second);
    DeviceState device_state() const;
    void warm_up();      // the first forward pass after a load, before the user's
    void refresh_hot();  // hot neurons per layer, after a load or a re-plan
    // A new session made with `sp` on the same model and device, the old one freed first (on a
    // GPU it holds the whole budget); when it cannot be made the old one comes back and the
    // reason is returned. The conversation is evaluated again with the next answer.
    std::optional<QString> replace_session(ember::SessionParams sp);
    bool resize_context(int n_ctx);

    std::shared_ptr<ember::Model> model_;
    std::unique_ptr<ember::Session> session_;  // replaced under session_mutex_ (request_stop reads it)
    std::mutex session_mutex_;
    ember::SessionParams session_params_;  // what session_ was made with
    QString loaded_path_;                  // the file model_ came from; empty without one
    double loaded_sparsity_ = 0.0;         // the activation sparsity it was asked to run at
    std::vector<int32_t> context_;  // tokens in the session's KV cache
    std::vector<ember::LayerSparsity> previous_;
    std::vector<int> hot_per_layer_;
    std::atomic<bool> stop_{false};
    std::atomic<qint64> pending_budget_{-1};
    qint64 gpu_free_bytes_ = 0;  // of the GPU in use, at load
    bool gpu_found_ = false;
    QString no_gpu_reason_;      // why no GPU is in use
    QString library_dir_, gpu_index_cache_dir_;
};

}  // namespace ember::app

Q_DECLARE_METATYPE(ember::app::GenerationRequest)
Q_DECLARE_METATYPE(ember::app::LoadedModel)
Q_DECLARE_METATYPE(ember::app::DeviceState)
Q_DECLARE_METATYPE(ember::ErrorCode)
