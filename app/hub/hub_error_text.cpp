#include "app/hub/hub_error_text.h"

#include <QCoreApplication>

namespace ember::app {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("HubError", text); }

}  // namespace

QString hub_error_text(hub::ErrorKind kind, const QString& subject, const QString& message, bool have_token) {
    const QString enter_token = tr("enter your Hugging Face access token in the field above the repo's files");
    switch (kind) {
        case hub::ErrorKind::Gated:
            return have_token ? tr("%1 is gated and your token has no access to it yet: accept the model's conditions "
                                   "on its Hugging Face page, then try again.").arg(subject)
                              : tr("%1 is gated: accept the model's conditions on its Hugging Face page, then %2.")
                                    .arg(subject, enter_token);
        case hub::ErrorKind::NotFound:
            return have_token ? tr("%1 was not found on Hugging Face.").arg(subject)
                              : tr("%1 was not found on Hugging Face; if it is private, %2.").arg(subject, enter_token);
        case hub::ErrorKind::AccessRefused:
            return have_token ? tr("Hugging Face refused your token for %1: check that the token may read it.").arg(subject)
                              : tr("Hugging Face refused access to %1: it may be private or gated; %2.").arg(subject, enter_token);
        case hub::ErrorKind::Other: break;
    }
    return message;
}

bool token_may_help(hub::ErrorKind kind) { return kind != hub::ErrorKind::Other; }

}  // namespace ember::app
