#pragma once
// The engine without the app: the session EngineWorker would make for `model_path` (same context,
// threads, device and budget), answering `prompt` with the same sampling, in this thread. The
// frame probe's reference rate.

#include <QString>

#include <string>

#include "ember/session.h"

namespace ember::app::probe {

struct EngineRun {
    int tokens = 0;
    std::string text;  // the answer, as the app would show it
    double tokens_per_second = 0;
    double first_token_ms = 0;  // from generate() until the first token was ready
    QString device;
    QString error;
};

inline EngineRun engine_alone(const QString& model_path, qint64 budget_bytes, const QString& prompt,
                              const ember::SamplingParams& sampling, int max_tokens) {
    EngineRun run;
    auto model = ember::Model::load(model_path.toStdString());
    if (!model) return run.error = QString::fromStdString(model.error().message), run;
    ember::SessionParams sp;
    sp.n_ctx = 2048;  // as EngineController::loadModel asks
    if ((*model)->info().sparse) {
        sp.device = "sim";  // what the app uses without a GPU
        sp.device_budget_bytes = uint64_t(budget_bytes);
    }
    auto session = ember::Session::create(*model, sp);
    if (!session) return run.error = QString::fromStdString(session.error().message), run;
    ember::GenerateParams gp;
    gp.n_predict = max_tokens;
    gp.sampling = sampling;
    const auto tokens = (*model)->tokenize(prompt.toStdString(), (*model)->add_bos());
    auto result = (*session)->generate(tokens, gp, [&](const ember::TokenEvent& ev) {
        run.text += ev.text;
        return true;
    });
    if (!result) return run.error = QString::fromStdString(result.error().message), run;
    const ember::Timings& t = (*session)->timings();
    run.tokens = int(result->tokens.size());
    run.tokens_per_second = t.generate_ms > 0 ? 1000.0 * t.n_generated / t.generate_ms : 0.0;
    run.first_token_ms = t.first_token_ms;
    run.device = QString::fromStdString((*session)->device_report().device);
    return run;
}

}  // namespace ember::app::probe
