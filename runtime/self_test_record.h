// The record of a catalog's self-tests that passed, kept in the cache so
// that a start-up with the same rules, the same build and the same code does
// not run them again.
//
// A catalog's inline tests are a pure function of what runs them: the rule
// text, the program that compiled it (this build of Culprit and the regex
// libraries it loads), the Hyperscan databases and the native code. The key
// names all of these (record_key()): the catalog digest, the build ID of the
// executable (base/build_id.h), the versions and build IDs of the loaded
// Hyperscan, RE2 and PCRE2 libraries,
// the Hyperscan cache key (every pattern, its flags, the CPU tuning), the
// evaluator and the SHA-256 of the native code that was linked. When any
// of them differs, the tests run. Only a report in which every test passed
// is stored; a failing catalog is never started, so there is nothing to
// reuse.
//
// What is not recorded cannot be skipped: without a cache directory, without
// a build ID, or for native code that did not come through the cache (whose
// bytes were not hashed), record_key() is "" and the tests run as always.
// `culprit test` never reads the record; it always runs the tests.
//
// Thread-safety: the functions may be called from any thread; the cache's
// own rules apply to concurrent writers (compiler/jit/cache.h). Nothing
// here throws.
#pragma once

#include <string>

#include "runtime/program.h"
#include "runtime/self_test.h"

namespace culprit {

// The key of `program`'s record, or "" when its results cannot be recorded.
std::string self_test_record_key(const Program& program);

// The recorded report for `key`: every result passed, with its kind, name,
// location and file (what start-up reports; not what each test exercised,
// which only `culprit test --coverage` needs), and TestReport::recorded set.
// False on a miss or a bad entry, with `note` saying why for the latter.
bool load_self_test_record(const std::string& cache_dir, const std::string& key, TestReport& out, std::string& note);

// Stores `report` for `key` when every test in it passed; false with `note`
// when it cannot (a cache that cannot be written is not an error).
bool store_self_test_record(const std::string& cache_dir, const std::string& key, const TestReport& report,
                            std::string& note);

}  // namespace culprit
