#include "blueprint/net/curl_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include "blueprint/library_symbol.h"

namespace culprit::blueprint {

namespace {

struct Loaded {
  CurlLibrary lib;
  std::string error;  // "" when loaded and initialized
};

}  // namespace

bool load_curl_library(const char* soname, CurlLibrary& lib, std::string& error) {
  // RTLD_NOW: a dependency or symbol that is missing fails here, as an
  // error value, not at the first call into the library.
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    error = fmt::format("HTTP calls (Loki, Prometheus, Kubernetes, webhooks, culprit serve's clients) need {} "
                        "(Debian package libcurl4): {}",
                        soname, why ? why : "it cannot be loaded");
    return false;
  }
  CurlLibrary l;
  // The name looked up is spelled from the member's, so the two cannot
  // drift apart; the member's type comes from the header's declaration.
#define CULPRIT_CURL_FUNCTION(member) resolve_function(handle, soname, "curl_" #member, l.member, error)
  bool ok = CULPRIT_CURL_FUNCTION(global_init) && CULPRIT_CURL_FUNCTION(easy_init) &&
            CULPRIT_CURL_FUNCTION(easy_setopt) && CULPRIT_CURL_FUNCTION(easy_perform) &&
            CULPRIT_CURL_FUNCTION(easy_getinfo) && CULPRIT_CURL_FUNCTION(easy_cleanup) &&
            CULPRIT_CURL_FUNCTION(easy_strerror) && CULPRIT_CURL_FUNCTION(share_init) &&
            CULPRIT_CURL_FUNCTION(share_setopt) && CULPRIT_CURL_FUNCTION(share_cleanup) &&
            CULPRIT_CURL_FUNCTION(slist_append) && CULPRIT_CURL_FUNCTION(slist_free_all);
#undef CULPRIT_CURL_FUNCTION
  if (!ok) {
    dlclose(handle);
    return false;
  }
  lib = l;
  return true;
}

const CurlLibrary* curl_library(std::string& error) {
  // Initialized once, by the first caller, while any other waits (a
  // function-local static): curl_global_init runs exactly once, before any
  // other libcurl call, as libcurl requires.
  static const Loaded loaded = [] {
    Loaded l;
    if (!load_curl_library("libcurl.so.4", l.lib, l.error)) return l;
    if (CURLcode rc = l.lib.global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK)
      l.error = fmt::format("libcurl.so.4 failed to initialize: {}", l.lib.easy_strerror(rc));
    return l;
  }();
  if (!loaded.error.empty()) {
    error = loaded.error;
    return nullptr;
  }
  return &loaded.lib;
}

}  // namespace culprit::blueprint
