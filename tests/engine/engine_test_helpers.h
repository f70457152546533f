#pragma once
// Shared by the model-level tests: load a model or open a session or fail the test binary with
// the engine's message, read reference files, and greedy generation settings.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QtGlobal>

#include <memory>
#include <vector>

#include "ember/model.h"
#include "ember/session.h"

namespace test_helpers {

inline std::shared_ptr<ember::Model> load_model(const QString& path, const ember::ModelParams& params = {}) {
    auto m = ember::Model::load(path.toStdString(), params);
    if (!m) qFatal("%s", m.error().message.c_str());
    return *m;
}

inline std::unique_ptr<ember::Session> open_session(std::shared_ptr<ember::Model> m, int32_t n_batch,
                                                    int32_t n_threads) {
    ember::SessionParams sp;
    sp.n_ctx = 256;
    sp.n_batch = n_batch;
    sp.n_threads = n_threads;
    auto s = ember::Session::create(std::move(m), sp);
    if (!s) qFatal("%s", s.error().message.c_str());
    return std::move(*s);
}

// A reference file (the fixtures' *.reference.json), or the test binary stops with its path.
inline QJsonObject read_json(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(path));
    return QJsonDocument::fromJson(f.readAll()).object();
}

inline std::vector<int32_t> ints(const QJsonArray& a) {
    std::vector<int32_t> v;
    for (const auto& x : a) v.push_back(x.toInt());
    return v;
}

// Greedy, no repetition penalty, past the end-of-text token: how the references were made.
inline ember::GenerateParams greedy(int32_t n) {
    ember::GenerateParams gp;
    gp.n_predict = n;
    gp.ignore_eos = true;
    gp.sampling.temperature = 0.0f;
    gp.sampling.repeat_penalty = 1.0f;
    return gp;
}

}  // namespace test_helpers
