#include "app/engine/sparsity_calibrator.h"

#include <QFile>
#include <QFileInfo>

#include "app/hub/model_suggestion.h"
#include "ember/sparsity.h"

#if defined(Q_OS_WIN)
#include <windows.h>
#else
#include <unistd.h>
#endif
#if defined(Q_OS_LINUX)
#include <sys/prctl.h>

#include <csignal>
#endif

namespace ember::app {
namespace {

// Memory left to the system and the app besides the two copies of the model.
constexpr qint64 kSpareMemory = qint64(2) << 30;

QString calibration_path(const QString& model) {
    return QString::fromStdString(ember::sparsity_calibration_path(model.toStdString()));
}

// The last line ember-calibrate wrote to stderr, without its name: what went wrong.
QString last_error(const QByteArray& errors) {
    const QList<QByteArray> lines = errors.trimmed().split('\n');
    QString line = QString::fromUtf8(lines.isEmpty() ? QByteArray() : lines.back()).trimmed();
    if (line.startsWith(QStringLiteral("ember-calibrate: "))) line = line.mid(17);
    return line;
}

}  // namespace

std::optional<SparsityChoices> measured_sparsity(const ember::Model& model) {
    const auto cal = ember::read_sparsity_calibration(model);
    if (!cal || cal->ppl_dense <= 0.0f) return std::nullopt;
    SparsityChoices out;
    for (const ember::SparsityLevelCost& l : cal->levels)
        out.levels.append(QVariantMap{
            {"level", l.level}, {"pplIncrease", l.ppl / cal->ppl_dense - 1.0f}, {"sameTop", l.same_top}, {"speed", l.speed}});
    out.recommended = cal->recommended;
    return out;
}

SparsityCalibrator::SparsityCalibrator(QObject* parent) : QObject(parent) {}

SparsityCalibrator::~SparsityCalibrator() { cancel(); }

void SparsityCalibrator::model_loaded(const QString& model, bool calibratable) {
    if (running() && model != model_) cancel();
    model_ = model;
    calibratable_ = calibratable;
    note_.clear();
    if (!calibratable || running() || setup_.text.isEmpty() || declined_.contains(model)) return emit changed();
    const qint64 ram = physical_ram_bytes();
    if (ram > 0 && 2 * QFileInfo(model).size() + kSpareMemory > ram) {
        note_ = tr("Measuring needs a second copy of the model in memory while it runs; start it when little else is open.");
        return emit changed();
    }
    run();
}

void SparsityCalibrator::model_unloaded() {
    cancel();
    model_.clear();
    calibratable_ = false;
    note_.clear();
    emit changed();
}

void SparsityCalibrator::start() {
    if (!calibratable_ || running()) return;
    if (declined_.removeAll(model_) > 0) emit declined_changed(declined_);
    note_.clear();
    run();
}

void SparsityCalibrator::stop() {
    if (!running()) return;
    cancel();
    if (!declined_.contains(model_)) {
        declined_.append(model_);
        emit declined_changed(declined_);
    }
    note_ = tr("Measuring stopped.");
    emit changed();
}

void SparsityCalibrator::run() {
    const QString text = setup_.text;
    if (!QFileInfo::exists(text)) {
        note_ = tr("No calibration text at %1.").arg(text);
        return emit changed();
    }
    part_ = calibration_path(model_) + QStringLiteral(".part");
    errors_.clear();
    progress_ = 0.0;
    process_ = new QProcess(this);
#if defined(Q_OS_WIN)
    process_->setCreateProcessArgumentsModifier(
        [](QProcess::CreateProcessArguments* args) { args->flags |= BELOW_NORMAL_PRIORITY_CLASS; });
#else
    const pid_t app = ::getpid();
    process_->setChildProcessModifier([app] {
        // Between fork and exec: every thread ember-calibrate starts inherits the lowest priority.
        [[maybe_unused]] const int niced = ::nice(19);
#if defined(Q_OS_LINUX)
        // It ends with the app also when the app is killed and no destructor stops it (a logout's
        // SIGTERM): at once, as the kernel kills it when the thread that started it (the GUI
        // thread) is gone, not minutes later at its next progress line into the dead app's pipe.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != app) ::_exit(1);
#endif
    });
#endif
    connect(process_, &QProcess::readyReadStandardOutput, this, &SparsityCalibrator::read_progress);
    connect(process_, &QProcess::readyReadStandardError, this, [this] {
        errors_ += process_->readAllStandardError();
        if (errors_.size() > 8192) errors_ = errors_.right(4096);
    });
    connect(process_, &QProcess::finished, this, &SparsityCalibrator::on_finished);
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return;
        const QString why = process_->errorString();
        cancel();
        note_ = tr("Measuring could not start %1: %2").arg(setup_.program, why);
        emit changed();
    });
    process_->start(setup_.program, {QStringLiteral("-m"), model_, QStringLiteral("-f"), text, QStringLiteral("-o"), part_,
                                     QStringLiteral("-c"), QString::number(setup_.n_ctx), QStringLiteral("--max-tokens"),
                                     QString::number(setup_.max_tokens), QStringLiteral("--quality-tokens"),
                                     QString::number(setup_.quality_tokens), QStringLiteral("--progress")});
    emit changed();
}

void SparsityCalibrator::cancel() {
    if (!process_) return;
    QProcess* p = std::exchange(process_, nullptr);
    p->disconnect(this);
    p->kill();
    p->waitForFinished(10000);
    p->deleteLater();
    QFile::remove(part_);
    progress_ = 0.0;
}

void SparsityCalibrator::read_progress() {
    bool moved = false;
    while (process_ && process_->canReadLine()) {
        const QList<QByteArray> words = process_->readLine().trimmed().split(' ');
        if (words.size() != 3 || words[0] != "progress") continue;
        const double done = words[1].toDouble(), total = words[2].toDouble();
        if (total > 0.0 && done / total > progress_) {
            progress_ = std::min(1.0, done / total);
            moved = true;
        }
    }
    if (moved) emit changed();
}

void SparsityCalibrator::on_finished(int exit_code, QProcess::ExitStatus status) {
    read_progress();
    errors_ += process_->readAllStandardError();
    QProcess* p = std::exchange(process_, nullptr);
    p->deleteLater();
    const QString model = model_;
    const QString done = calibration_path(model);
    if (status == QProcess::NormalExit && exit_code == 0) {
        QFile::remove(done);
        if (QFile::rename(part_, done)) {
            emit changed();
            emit calibrated(model);
            return;
        }
        note_ = tr("Measuring finished, but %1 could not be written.").arg(done);
    } else {
        const QString why = last_error(errors_);
        note_ = tr("Measuring failed: %1").arg(why.isEmpty() ? tr("ember-calibrate ended (exit status %1)").arg(exit_code) : why);
    }
    QFile::remove(part_);
    progress_ = 0.0;
    emit changed();
}

}  // namespace ember::app
