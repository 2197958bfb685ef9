// "Did you mean ...?": the nearest known spelling of a misspelt word.
//
// Compiler diagnostics (fields, kinds, functions, stages, domains), the
// command line (commands, options) and input validation (terminal states)
// use one rule, so a suggestion means the same everywhere:
//
//   * distance is the optimal string alignment distance (Damerau-Levenshtein
//     with adjacent transpositions, each edit costing 1), compared without
//     regard to ASCII case;
//   * a candidate is close enough when its distance is at most 1 for words of
//     up to 4 characters, 2 up to 8, and 3 beyond; a candidate that starts
//     with the word, or that the word starts with ("lowercase" / "lower"), is
//     also close when the shorter is at least 3 characters and half the
//     longer; an edit distance as long as the shorter word is never close
//     ("id" is not a misspelling of "os");
//   * the closest candidate wins; ties go to the one listed first, so callers
//     pass candidates in a fixed order and the result is deterministic.
//
// Thread-safety: pure functions. No exceptions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace culprit {

// Edit distance (optimal string alignment), ASCII case-insensitive.
size_t edit_distance(std::string_view a, std::string_view b) noexcept;

// The candidate closest to `word` by the rule above, or nullopt when none is
// close enough. `word` itself (same spelling) is never suggested.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

// "did you mean 'X'?" for the closest match, or "" when there is none.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace culprit
