#pragma once
// Measures a dense model's activation sparsity in the background, so that the side panel can
// offer its levels without the user running ember-calibrate. ember-calibrate runs as a process of
// its own, at the lowest priority: a chat keeps the CPU, Stop ends it at once, and a crash takes
// nothing with it. Its calibration appears beside the model only once complete.

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include <optional>

#include "ember/model.h"

namespace ember::app {

// The levels of the calibration beside `model` whose cost was measured, as the side panel lists
// them ({level, pplIncrease, sameTop, speed}; speed 0 where it was not measured), and the level to
// suggest (ember::SparsityCalibrationInfo::recommended); none when the model has no such
// calibration.
struct SparsityChoices {
    QVariantList levels;
    double recommended = 0.0;
};
std::optional<SparsityChoices> measured_sparsity(const ember::Model& model);

struct CalibrationSetup {
    QString program;  // ember-calibrate
    QString text;     // the calibration text; empty: models are calibrated only when asked
    // Smaller than ember-calibrate's own defaults: a 1B model takes minutes on two cores, not an
    // hour; the held-out tail still scores thousands of positions per level.
    int max_tokens = 8192;
    int quality_tokens = 2048;
    int n_ctx = 512;
};

class SparsityCalibrator : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by EngineController")
    Q_PROPERTY(bool running READ running NOTIFY changed)
    Q_PROPERTY(double progress READ progress NOTIFY changed)
    // The loaded model can be calibrated and is not being calibrated: the panel offers to start.
    Q_PROPERTY(bool available READ available NOTIFY changed)
    // Why it is not running: stopped, failed (ember-calibrate's message), or too large to calibrate
    // beside the loaded copy without asking.
    Q_PROPERTY(QString note READ note NOTIFY changed)

public:
    explicit SparsityCalibrator(QObject* parent = nullptr);
    ~SparsityCalibrator() override;

    void set_setup(const CalibrationSetup& setup) { setup_ = setup; }
    // Models the user stopped calibrating (AppSettings keeps them): not started again on load.
    void set_declined(const QStringList& models) { declined_ = models; }

    bool running() const { return process_ != nullptr; }
    double progress() const { return progress_; }
    bool available() const { return calibratable_ && !running() && !setup_.program.isEmpty(); }
    QString note() const { return note_; }

    // A model loaded (calibratable: dense with a gated FFN and no calibration with its cost
    // measured); a calibration of another model stops. It starts on its own when a text is set, the
    // user has not stopped it before, and memory holds a second copy of the model.
    void model_loaded(const QString& model, bool calibratable);
    void model_unloaded();

    // For the loaded model, whatever the user did before.
    Q_INVOKABLE void start();
    // Stops it, writes nothing, and does not start it on its own again for this model.
    Q_INVOKABLE void stop();

signals:
    void changed();
    // The calibration is beside `model`, complete.
    void calibrated(const QString& model);
    void declined_changed(const QStringList& models);

private:
    void run();
    void cancel();
    void read_progress();
    void on_finished(int exit_code, QProcess::ExitStatus status);

    CalibrationSetup setup_;
    QStringList declined_;
    QString model_;  // the loaded model
    bool calibratable_ = false;
    QProcess* process_ = nullptr;  // calibrating model_
    QString part_;                 // where it writes until complete
    QByteArray errors_;            // its stderr, for the message when it fails
    double progress_ = 0.0;
    QString note_;
};

}  // namespace ember::app
