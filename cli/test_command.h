// `culprit test`: run a rule catalog's inline tests, for people and for CI.
#pragma once

namespace culprit::cli {

// argv[1] is "test". Exit status: 0 all selected tests passed (and coverage
// is at least --min-coverage), 1 a test failed or coverage is too low,
// 2 bad usage, rules that do not compile, or nothing to test.
int cmd_test(int argc, char** argv);

}  // namespace culprit::cli
