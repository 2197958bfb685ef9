// The identity of the running program's own code, for cache keys.
//
// A cache entry that holds what this program's code computed from some input
// (an analyzed catalog, the outcome of a catalog's self-tests) is valid only
// for the code that computed it. build_id() names that code: the GNU build ID
// the linker writes into the ELF object holding this function (the
// executable, for Culprit's statically linked libraries), as lowercase hex.
// Any relink with different code gives a different ID.
//
// "" when the object carries no build ID (a linker run with --build-id=none):
// callers must then not cache such results, since nothing would tell two
// builds apart.
//
// build_id_of() does the same for the loaded object (a shared library) that
// holds `address`: a cache key that depends on what a library computes (RE2
// accepting a regex, ANTLR parsing) names the library's build with it, so an
// upgrade of the library, which leaves the executable as it was, is another
// key.
//
// Thread-safety: build_id() is computed once, on the first call; both are
// safe from any thread. Nothing here throws.
#pragma once

#include <string>

namespace culprit {

const std::string& build_id();

// "" when no loaded object holds `address`, or it has no build ID.
std::string build_id_of(const void* address);

}  // namespace culprit
