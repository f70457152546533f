#pragma once
// The engine without the app: the session EngineWorker would make for a model (same context,
// threads, device and budget), answering prompts with the same sampling, in this thread, and
// keeping the prefix a prompt shares with the context as the worker does. The frame probe's
// reference.

#include <QString>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "app/engine/reusable_prefix.h"
#include "ember/session.h"

namespace ember::app::probe {

struct EngineRun {
    int tokens = 0;
    std::string text;  // the answer, as the app would show it
    double tokens_per_second = 0;
    double first_text_ms = -1;  // from the prompt's text until the first text of the answer was ready
    QString device;
    QString error;
};

class EngineAlone {
public:
    QString open(const QString& model_path, qint64 budget_bytes) {
        auto model = ember::Model::load(model_path.toStdString());
        if (!model) return QString::fromStdString(model.error().message);
        model_ = std::move(*model);
        ember::SessionParams sp;
        sp.n_ctx = 2048;  // as EngineController::loadModel asks
        if (model_->info().sparse) {
            sp.device = "sim";  // what the app uses without a GPU
            sp.device_budget_bytes = uint64_t(budget_bytes);
        }
        auto session = ember::Session::create(model_, sp);
        if (!session) return QString::fromStdString(session.error().message);
        session_ = std::move(*session);
        return {};
    }

    EngineRun answer(const QString& prompt, const ember::SamplingParams& sampling, int max_tokens) {
        EngineRun run;
        const auto start = std::chrono::steady_clock::now();
        const auto tokens = model_->tokenize(prompt.toStdString(), model_->add_bos());
        const size_t keep = reusable_prefix(context_, tokens);
        session_->truncate(int32_t(keep));
        ember::GenerateParams gp;
        gp.n_predict = max_tokens;
        gp.sampling = sampling;
        const std::vector<int32_t> fresh(tokens.begin() + std::ptrdiff_t(keep), tokens.end());
        auto result = session_->generate(fresh, gp, [&](const ember::TokenEvent& ev) {
            run.text += ev.text;
            if (run.first_text_ms < 0 && !run.text.empty())
                run.first_text_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
            return true;
        });
        if (!result) return context_.clear(), run.error = QString::fromStdString(result.error().message), run;
        context_ = tokens;
        context_.insert(context_.end(), result->tokens.begin(), result->tokens.end());
        context_.resize(size_t(session_->n_past()));
        const ember::Timings& t = session_->timings();
        run.tokens = int(result->tokens.size());
        run.tokens_per_second = t.generate_ms > 0 ? 1000.0 * t.n_generated / t.generate_ms : 0.0;
        run.device = QString::fromStdString(session_->device_report().device);
        return run;
    }

private:
    std::shared_ptr<ember::Model> model_;
    std::unique_ptr<ember::Session> session_;
    std::vector<int32_t> context_;  // what the session's cache holds
};

inline EngineRun engine_alone(const QString& model_path, qint64 budget_bytes, const QString& prompt,
                              const ember::SamplingParams& sampling, int max_tokens) {
    EngineAlone engine;
    EngineRun failed;
    failed.error = engine.open(model_path, budget_bytes);
    return failed.error.isEmpty() ? engine.answer(prompt, sampling, max_tokens) : failed;
}

}  // namespace ember::app::probe
