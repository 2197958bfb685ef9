// `culprit export-patterns`: the catalog's extractor patterns, one per line,
// in the dialect of a peer tool (ripgrep, GNU grep -E, Python `re`), so the
// benchmark harness (bench/run.sh) runs peers on exactly the same patterns.
#pragma once

namespace culprit::cli {

int cmd_export_patterns(int argc, char** argv);

}  // namespace culprit::cli
