#pragma once
// Where the Hub is and how to reach it, read the way Hugging Face's own tools read it.

#include <chrono>
#include <string>

#include "ember/hub/result.h"

namespace ember::hub {

struct Settings {
    std::string endpoint = "https://huggingface.co";  // HF_ENDPOINT; no trailing slash
    std::string token;                                // HF_TOKEN or the token file; empty: anonymous
    // Empty: libcurl's own reading of https_proxy/HTTPS_PROXY, http_proxy, ALL_PROXY and NO_PROXY.
    std::string proxy;
    std::chrono::seconds connect_timeout{15};
    std::chrono::seconds stall_timeout{30};  // no byte for this long ends a transfer (then retried)

    // HF_ENDPOINT, HF_TOKEN (or HUGGING_FACE_HUB_TOKEN, or the file at HF_TOKEN_PATH,
    // $HF_HOME/token, ~/.cache/huggingface/token), HF_HUB_DOWNLOAD_TIMEOUT (the stall timeout, in
    // seconds). Fails on an endpoint check_endpoint refuses or a timeout that is not 1..3600 s.
    static Result<Settings> from_environment();
};

// Only https, except plain http to a loopback host (the test server).
Status check_endpoint(const std::string& endpoint);

// The token file Hugging Face's own tools use (HF_TOKEN_PATH, else $HF_HOME/token, else
// ~/.cache/huggingface/token); empty when none of those can be named.
std::string token_file_path();
// A token as typed (surrounding space ignored) is one word; otherwise an error saying so.
Status check_token(const std::string& token);
// Writes the token there (checked as above), as `hf auth login` does (owner-only, replaced whole); HF_TOKEN in the
// environment still comes first when it is set.
Status save_token(const std::string& token);
// Removes the token file; no file is fine.
Status forget_token();

}  // namespace ember::hub
