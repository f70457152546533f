#pragma once
// A loopback Hub for the downloader tests: runs hub_server.py on free ports, lays out repos
// for it to serve, and sets its misbehaviours (see the script's docstring).

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include "ember/hub/settings.h"

namespace hub_test {

// Deterministic pseudo-random bytes, so a failure reproduces.
QByteArray random_bytes(qsizetype n, quint32 seed);

inline const char* token = "hf_test_token";
inline const char* tiny_repo = "PowerInfer/Tiny-PowerInfer-GGUF";
inline const char* tiny_sha = "0123456789abcdef0123456789abcdef01234567";

class HubFixture {
public:
    HubFixture();
    ~HubFixture();

    // Starts the server; on failure `why` says what went wrong.
    bool start(QString* why);
    QString endpoint() const { return QStringLiteral("http://127.0.0.1:%1").arg(api_port_); }
    QString dir() const { return dir_.path(); }
    QString models_dir() const { return dir_.path() + "/models"; }

    // Settings for the library: this endpoint, a 1 s stall timeout, no token unless asked.
    ember::hub::Settings settings(bool with_token = false) const;

    void add_file(const QString& repo, const QString& path, const QByteArray& content);
    QByteArray file(const QString& repo, const QString& path) const;
    // A PowerInfer-shaped repo: two sparse GGUFs, activation/, config.json, README.md, .gitattributes.
    void add_tiny_repo();
    // Repo entry in the server's config; `extra` is merged in (gated, renamed_to, extra_tree).
    void add_repo(const QString& repo, const QJsonObject& extra = {});
    void set_faults(const QJsonArray& faults);
    void set_page_size(int n);
    QJsonObject stats() const;

private:
    void write_config();

    QTemporaryDir dir_;
    QProcess server_;
    QJsonObject repos_;
    QJsonArray faults_;
    int page_size_ = 3;
    int api_port_ = 0;
};

}  // namespace hub_test
