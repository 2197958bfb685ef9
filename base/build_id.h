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
// Thread-safety: computed once, on the first call; safe from any thread.
// Nothing here throws.
#pragma once

#include <string>

namespace culprit {

const std::string& build_id();

}  // namespace culprit
