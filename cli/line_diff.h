// A unified diff of two texts, line by line (`culprit fmt --diff`).
//
// The lines in common are a longest common subsequence (dynamic
// programming over the lines, which is quadratic: fine for rule files of a
// few thousand lines; past kMaxCells the two texts are shown as one hunk
// that replaces every line). Hunks carry three lines of context, in the
// format of `diff -u`, so the output can be read by people and applied by
// `patch`.
//
// Thread-safety: a pure function. Nothing throws but allocation.
#pragma once

#include <string>
#include <string_view>

namespace culprit::cli {

// "--- OLD_NAME\n+++ NEW_NAME\n@@ -a,b +c,d @@\n..." or "" when the texts are
// equal. A text without a final newline is marked as `diff` marks it.
std::string unified_diff(std::string_view old_text, std::string_view new_text, const std::string& old_name,
                         const std::string& new_name);

}  // namespace culprit::cli
