#pragma once
// RAII for libcurl handles, and the options every Ember request carries.

#include <curl/curl.h>

#include <memory>
#include <string>

#include "ember/hub/settings.h"

namespace ember::hub {

struct EasyDeleter {
    void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
struct MultiDeleter {
    void operator()(CURLM* h) const { curl_multi_cleanup(h); }
};
struct SlistDeleter {
    void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;
using MultiHandle = std::unique_ptr<CURLM, MultiDeleter>;
using SlistHandle = std::unique_ptr<curl_slist, SlistDeleter>;

// curl_global_init, once per process; every constructor that touches curl calls it first.
void curl_init_once();

// A handle with the user agent, timeouts, redirect and protocol policy, and proxy set.
// libcurl itself keeps the Authorization header from hosts a redirect leads to.
EasyHandle new_easy(const Settings& settings);

// "Authorization: Bearer …" when there is a token, else null.
SlistHandle auth_headers(const Settings& settings);

}  // namespace ember::hub
