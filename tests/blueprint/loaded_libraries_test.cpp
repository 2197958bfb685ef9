// libcurl and libpq are loaded at first use (blueprint/net/curl_library.h,
// blueprint/store/pq_library.h): a library that is missing, or that lacks a
// function, is an error value naming it, never a crash. The installed ones
// load with every function resolved. The requests and queries through them
// are tested against real servers (check_loki.sh, check_promql.sh,
// check_kube.sh, check_stores.sh).
#include <doctest/doctest.h>

#include <string>

#include "blueprint/net/curl_library.h"
#include "blueprint/store/pq_library.h"

using namespace culprit::blueprint;

namespace {
const char* const kMissing = "libculprit-no-such-library.so.1";
// Installed wherever culprit runs (culprit links it), and has none of
// libcurl's or libpq's functions.
const char* const kUnrelated = "libz.so.1";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("curl library: a missing library is an error naming it and its package") {
  CurlLibrary lib;
  std::string error;
  CHECK_FALSE(load_curl_library(kMissing, lib, error));  // and `lib` is left as it was
  CHECK(contains(error, std::string("need ") + kMissing + " (Debian package libcurl4): "));
  CHECK(contains(error, "cannot open shared object file"));  // the loader's own words follow
  CHECK_FALSE(static_cast<bool>(lib.easy_init));
  CHECK_FALSE(static_cast<bool>(lib.global_init));
}

TEST_CASE("curl library: a library without libcurl's functions is an error naming the first missing one") {
  CurlLibrary lib;
  std::string error;
  CHECK_FALSE(load_curl_library(kUnrelated, lib, error));
  CHECK(contains(error, std::string(kUnrelated) + " has no function curl_global_init: "));
  CHECK_FALSE(static_cast<bool>(lib.global_init));
}

TEST_CASE("curl library: the installed libcurl.so.4 loads, initialized, with every function") {
  std::string error;
  const CurlLibrary* lib = curl_library(error);
  REQUIRE_MESSAGE(lib != nullptr, error);
  CHECK(error.empty());
  CHECK(curl_library(error) == lib);  // loaded once
  CHECK((lib->global_init && lib->easy_init && lib->easy_setopt && lib->easy_perform && lib->easy_getinfo &&
         lib->easy_cleanup && lib->easy_strerror && lib->share_init && lib->share_setopt && lib->share_cleanup &&
         lib->slist_append && lib->slist_free_all));
  CURL* h = lib->easy_init();
  REQUIRE(h != nullptr);
  CHECK(lib->easy_setopt(h, CURLOPT_URL, "http://127.0.0.1:1/") == CURLE_OK);
  lib->easy_cleanup(h);
  CHECK(std::string(lib->easy_strerror(CURLE_OK)) == "No error");
}

TEST_CASE("pq library: a missing library is an error naming it and its package") {
  PqLibrary lib;
  std::string error;
  CHECK_FALSE(load_pq_library(kMissing, lib, error));
  CHECK(contains(error, std::string("the PostgreSQL store needs ") + kMissing + " (Debian package libpq5): "));
  CHECK(contains(error, "cannot open shared object file"));
  CHECK_FALSE(static_cast<bool>(lib.connectdbParams));
}

TEST_CASE("pq library: a library without libpq's functions is an error naming the first missing one") {
  PqLibrary lib;
  std::string error;
  CHECK_FALSE(load_pq_library(kUnrelated, lib, error));
  CHECK(contains(error, std::string(kUnrelated) + " has no function PQconnectdbParams: "));
  CHECK_FALSE(static_cast<bool>(lib.connectdbParams));
}

TEST_CASE("pq library: the installed libpq.so.5 loads with every function") {
  std::string error;
  const PqLibrary* lib = pq_library(error);
  REQUIRE_MESSAGE(lib != nullptr, error);
  CHECK(pq_library(error) == lib);  // loaded once
  CHECK((lib->connectdbParams && lib->status && lib->errorMessage && lib->finish && lib->exec && lib->execParams &&
         lib->resultStatus && lib->resultErrorMessage && lib->cmdTuples && lib->ntuples && lib->nfields &&
         lib->getisnull && lib->getvalue && lib->getlength && lib->clear));
  // A connection that cannot be made is still a PGconn, with libpq's message.
  const char* keys[] = {"dbname", "connect_timeout", nullptr};
  const char* vals[] = {"postgresql://127.0.0.1:1/none", "2", nullptr};
  PGconn* conn = lib->connectdbParams(keys, vals, 1);
  REQUIRE(conn != nullptr);
  CHECK(lib->status(conn) == CONNECTION_BAD);
  CHECK(std::string(lib->errorMessage(conn)).size() > 0);
  lib->finish(conn);
}
