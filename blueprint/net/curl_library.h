// libcurl, loaded when the first HTTP client is made rather than at process
// start (docs/dependencies.md).
//
// Why: linking libcurl made every `culprit` process map and relocate it and
// its dependencies (TLS, Kerberos, LDAP, SASL, SSH, IDN, nghttp2, ...), with
// libpq about 20 ms of the start of `culprit --help`, although only the
// HTTP clients (blueprint/net/http_client.cpp, the only caller: Loki,
// Prometheus, Kubernetes, webhooks, the clients of `culprit serve`) use it. The library is opened with
// dlopen and exactly the functions the client calls are resolved with dlsym.
// <curl/curl.h> still declares them: every pointer below has the type of the
// declared function (decltype), so a signature that does not match the header
// does not compile.
//
// Contract: a CurlLibrary whose pointers are all set; the library stays
// loaded for the life of the process (it is never closed: handles and shares
// made from it may outlive any one user).
//
// Missing library or function: an error value naming the library, the Debian
// package that provides it and the loader's message; never a crash, never an
// exception.
//
// Thread-safety: curl_library() may be called from any thread at any time;
// the first call loads the library and runs curl_global_init once (a
// function-local static), before any other libcurl call can be made through
// it. The outcome, loaded or not, is kept for the process: a failed load is
// not retried. load_curl_library() has no shared state.
#pragma once

#include <curl/curl.h>

#include <string>

namespace culprit::blueprint {

// The libcurl functions blueprint/net/http_client.cpp calls.
struct CurlLibrary {
  decltype(&curl_global_init) global_init = nullptr;
  decltype(&curl_easy_init) easy_init = nullptr;
  decltype(&curl_easy_setopt) easy_setopt = nullptr;
  decltype(&curl_easy_perform) easy_perform = nullptr;
  decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&curl_easy_strerror) easy_strerror = nullptr;
  decltype(&curl_share_init) share_init = nullptr;
  decltype(&curl_share_setopt) share_setopt = nullptr;
  decltype(&curl_share_cleanup) share_cleanup = nullptr;
  decltype(&curl_slist_append) slist_append = nullptr;
  decltype(&curl_slist_free_all) slist_free_all = nullptr;
};

// The process's libcurl ("libcurl.so.4"), loaded and initialized
// (curl_global_init(CURL_GLOBAL_DEFAULT)) on the first call. nullptr and
// `error` set when it cannot be loaded or initialized, e.g. "HTTP calls (Loki,
// Prometheus, Kubernetes, webhooks, culprit serve's clients) need libcurl.so.4
// (Debian package libcurl4): libcurl.so.4: cannot open shared object file:
// No such file or directory".
const CurlLibrary* curl_library(std::string& error);

// Opens `soname` and resolves every function of CurlLibrary into `lib`;
// does not run curl_global_init. false and `error` set (naming `soname`)
// when the library or one of the functions is missing; the library is then
// closed again. Exposed for tests, which pass a name that does not exist.
bool load_curl_library(const char* soname, CurlLibrary& lib, std::string& error);

}  // namespace culprit::blueprint
