// `culprit eval DIR`: run the rule catalog over a labeled corpus of bundles
// and score the verdicts against each bundle's expected.json (see
// docs/accuracy.md for the format and the matching rules).
#pragma once

namespace culprit::cli {

// argv[1] is "eval". Exit status: 0 every case matches, 1 some case does not
// (or is unlabeled), 2 bad input or a catalog that does not compile.
int cmd_eval(int argc, char** argv);

}  // namespace culprit::cli
