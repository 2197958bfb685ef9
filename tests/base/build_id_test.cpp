// Build IDs name code for cache keys: the executable's, and each loaded
// library's apart from it.
#include "base/build_id.h"

#include <doctest/doctest.h>
#include <zlib.h>

#include <cctype>

#include "compiler/parser.h"
#include "compiler/regex_check.h"
#include "runtime/capture_regex.h"

using namespace culprit;

namespace {
bool is_hex_id(const std::string& s) {
  if (s.size() < 16) return false;  // GNU ld writes a 20-byte SHA-1 by default
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c))) return false;
  return true;
}
}  // namespace

TEST_CASE("build id: the executable's, stable within a process") {
  CHECK(is_hex_id(build_id()));
  CHECK(build_id() == build_id());
  int local = 0;
  CHECK(build_id_of(&local).empty());  // the stack is in no loaded object
  CHECK(build_id_of(nullptr).empty());
}

TEST_CASE("build id: a shared library's is its own, not the executable's") {
  std::string zlib = build_id_of(reinterpret_cast<const void*>(&zlibVersion));
  CHECK(is_hex_id(zlib));
  CHECK(zlib != build_id());
  // The identities the caches key on carry the libraries' IDs, not the executable's.
  CHECK(antlr_runtime_identity().find(build_id()) == std::string::npos);
  CHECK(regex_engines_identity().find(build_id()) == std::string::npos);
  CHECK(pcre2_identity().find(build_id()) == std::string::npos);
  CHECK(antlr_runtime_identity().size() > antlr_runtime_version().size() + 16);
  CHECK(pcre2_identity().size() > pcre2_version().size() + 16);
}
