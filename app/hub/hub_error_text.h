#pragma once
// The Hub's refusals in the app's words: what to do, pointing at the token field beside a repo's
// files rather than an environment variable, and without the URL the downloader's line carries
// (that line stays the text of every other error).

#include <QString>

#include "ember/hub/result.h"

namespace ember::app {

QString hub_error_text(hub::ErrorKind kind, const QString& subject, const QString& message, bool have_token);

// A refusal a token may cure: gated, private (which the Hub reports as not found) or refused.
bool token_may_help(hub::ErrorKind kind);

}  // namespace ember::app
