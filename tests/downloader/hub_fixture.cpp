#include "hub_fixture.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSaveFile>

namespace hub_test {

QByteArray random_bytes(qsizetype n, quint32 seed) {
    QByteArray out(n, Qt::Uninitialized);
    quint32 x = seed * 2654435761u + 1;
    for (qsizetype i = 0; i < n; ++i) {
        x ^= x << 13;  // xorshift32
        x ^= x >> 17;
        x ^= x << 5;
        out[i] = char(x >> 24);
    }
    return out;
}

HubFixture::HubFixture() { QDir().mkpath(dir_.path() + "/files"); }

HubFixture::~HubFixture() {
    if (server_.state() != QProcess::NotRunning) {
        server_.kill();
        server_.waitForFinished(5000);
    }
}

bool HubFixture::start(QString* why) {
    write_config();
    server_.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    server_.start(QStringLiteral(EMBER_PYTHON3), {QStringLiteral(EMBER_DL_TEST_DIR "/hub_server.py"), dir_.path()});
    if (!server_.waitForStarted(10000)) {
        *why = "cannot start " EMBER_PYTHON3 ": " + server_.errorString();
        return false;
    }
    QByteArray line;
    while (!line.endsWith('\n')) {
        if (!server_.waitForReadyRead(10000)) {
            *why = "hub_server.py printed no ports: " + QString::fromUtf8(line);
            return false;
        }
        line += server_.readAll();
    }
    const auto parts = line.trimmed().split(' ');
    if (parts.size() != 3 || parts[0] != "PORTS") {
        *why = "hub_server.py said: " + QString::fromUtf8(line);
        return false;
    }
    api_port_ = parts[1].toInt();
    return true;
}

ember::hub::Settings HubFixture::settings(bool with_token) const {
    ember::hub::Settings s;
    s.endpoint = endpoint().toStdString();
    s.token = with_token ? token : "";
    s.stall_timeout = std::chrono::seconds(1);
    s.connect_timeout = std::chrono::seconds(5);
    return s;
}

void HubFixture::add_file(const QString& repo, const QString& path, const QByteArray& content) {
    QString full = dir_.path() + "/files/" + repo + "/" + path;
    QDir().mkpath(QFileInfo(full).path());
    QFile f(full);
    if (f.open(QIODevice::WriteOnly)) f.write(content);
}

QByteArray HubFixture::file(const QString& repo, const QString& path) const {
    QFile f(dir_.path() + "/files/" + repo + "/" + path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void HubFixture::add_tiny_repo() {
    const QString r = tiny_repo;
    add_file(r, "tiny.powerinfer.gguf", random_bytes(3 << 20, 1));
    add_file(r, "tiny.q4.powerinfer.gguf", random_bytes(1 << 20, 2));
    for (int il = 0; il < 4; ++il) add_file(r, QString("activation/activation_%1.pt").arg(il), random_bytes(20000 + il, 10 + il));
    add_file(r, "config.json", "{\"model_type\":\"llama\"}");
    add_file(r, "README.md", random_bytes(400, 3).toHex());
    add_file(r, ".gitattributes", "*.gguf filter=lfs diff=lfs merge=lfs -text\n*.pt filter=lfs diff=lfs merge=lfs -text\n");
    add_repo(r);
}

void HubFixture::add_repo(const QString& repo, const QJsonObject& extra) {
    QJsonObject entry{{"sha", tiny_sha}};
    for (auto it = extra.begin(); it != extra.end(); ++it) entry[it.key()] = it.value();
    repos_[repo] = entry;
    write_config();
}

void HubFixture::set_faults(const QJsonArray& faults) {
    faults_ = faults;
    write_config();
}

void HubFixture::set_page_size(int n) {
    page_size_ = n;
    write_config();
}

void HubFixture::write_config() {
    QJsonObject config{{"token", token}, {"page_size", page_size_}, {"repos", repos_}, {"faults", faults_}};
    QSaveFile f(dir_.path() + "/config.json");  // replaced whole: the server never reads half of it
    if (f.open(QIODevice::WriteOnly)) {
        f.write(QJsonDocument(config).toJson());
        f.commit();
    }
}

QJsonObject HubFixture::stats() const {
    QFile f(dir_.path() + "/stats.json");
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

}  // namespace hub_test
