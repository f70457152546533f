#include "app/hub/token_keychain.h"

#ifdef EMBER_HAVE_QTKEYCHAIN
#include <qt6keychain/keychain.h>
#endif

namespace ember::app {
namespace {

#ifdef EMBER_HAVE_QTKEYCHAIN
const QString kService = QStringLiteral("Ember");
const QString kKey = QStringLiteral("huggingface-token");

// Jobs have no parent: a backend (libsecret) may still call back into a job after the object
// that started it is gone, so each job deletes itself once finished, and reports only to a
// TokenKeychain that still exists (the connection's context).
QString error_of(const QKeychain::Job* job) {
    return job->error() == QKeychain::NoError ? QString() : job->errorString();
}
#endif

}  // namespace

bool TokenKeychain::built_in() {
#ifdef EMBER_HAVE_QTKEYCHAIN
    return true;
#else
    return false;
#endif
}

#ifdef EMBER_HAVE_QTKEYCHAIN

void TokenKeychain::read() {
    auto* job = new QKeychain::ReadPasswordJob(kService);
    job->setKey(kKey);
    connect(job, &QKeychain::Job::finished, this, [this, job] {
        if (job->error() == QKeychain::EntryNotFound) emit read_done({}, {});
        else emit read_done(job->textData(), error_of(job));
    });
    job->start();
}

void TokenKeychain::write(const QString& token) {
    auto* job = new QKeychain::WritePasswordJob(kService);
    job->setKey(kKey);
    job->setTextData(token);
    connect(job, &QKeychain::Job::finished, this, [this, job] { emit write_done(error_of(job)); });
    job->start();
}

void TokenKeychain::remove() {
    auto* job = new QKeychain::DeletePasswordJob(kService);
    job->setKey(kKey);
    connect(job, &QKeychain::Job::finished, this, [this, job] {
        emit remove_done(job->error() == QKeychain::EntryNotFound ? QString() : error_of(job));
    });
    job->start();
}

#else

void TokenKeychain::read() { emit read_done({}, tr("this build has no keychain support")); }
void TokenKeychain::write(const QString&) { emit write_done(tr("this build has no keychain support")); }
void TokenKeychain::remove() { emit remove_done({}); }

#endif

}  // namespace ember::app
