#include "blueprint/store/pq_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include "blueprint/library_symbol.h"

namespace culprit::blueprint {

namespace {

struct Loaded {
  PqLibrary lib;
  std::string error;  // "" when loaded
};

}  // namespace

bool load_pq_library(const char* soname, PqLibrary& lib, std::string& error) {
  // RTLD_NOW: a dependency or symbol that is missing fails here, as an
  // error value, not at the first call into the library.
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    error = fmt::format("the PostgreSQL store needs {} (Debian package libpq5): {}", soname,
                        why ? why : "it cannot be loaded");
    return false;
  }
  PqLibrary l;
  // The name looked up is spelled from the member's, so the two cannot
  // drift apart; the member's type comes from the header's declaration.
#define CULPRIT_PQ_FUNCTION(member) resolve_function(handle, soname, "PQ" #member, l.member, error)
  bool ok = CULPRIT_PQ_FUNCTION(connectdbParams) && CULPRIT_PQ_FUNCTION(status) &&
            CULPRIT_PQ_FUNCTION(errorMessage) && CULPRIT_PQ_FUNCTION(finish) && CULPRIT_PQ_FUNCTION(exec) &&
            CULPRIT_PQ_FUNCTION(execParams) && CULPRIT_PQ_FUNCTION(resultStatus) &&
            CULPRIT_PQ_FUNCTION(resultErrorMessage) && CULPRIT_PQ_FUNCTION(cmdTuples) &&
            CULPRIT_PQ_FUNCTION(ntuples) && CULPRIT_PQ_FUNCTION(nfields) && CULPRIT_PQ_FUNCTION(getisnull) &&
            CULPRIT_PQ_FUNCTION(getvalue) && CULPRIT_PQ_FUNCTION(getlength) && CULPRIT_PQ_FUNCTION(clear);
#undef CULPRIT_PQ_FUNCTION
  if (!ok) {
    dlclose(handle);
    return false;
  }
  lib = l;
  return true;
}

const PqLibrary* pq_library(std::string& error) {
  // Loaded once, by the first caller, while any other waits (a
  // function-local static).
  static const Loaded loaded = [] {
    Loaded l;
    load_pq_library("libpq.so.5", l.lib, l.error);
    return l;
  }();
  if (!loaded.error.empty()) {
    error = loaded.error;
    return nullptr;
  }
  return &loaded.lib;
}

}  // namespace culprit::blueprint
