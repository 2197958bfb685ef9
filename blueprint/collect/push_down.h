// What the catalog needs to see of a log source, as a line filter a remote
// store can apply before sending anything (Loki's `|~ "..."`).
//
// The scanner visits only candidate lines: those holding one of the atoms
// Hyperscan scans for (literal strings every match of an extractor must
// contain, runtime/program.h), or matching the full regex of an extractor
// that has no atom. A filter that keeps exactly those lines, case-
// insensitively, loses no event: every line an extractor can match passes
// it. The filter is an RE2 (and Go regexp) pattern: `(?i)` and an
// alternation of the escaped atoms and of the atom-less extractors'
// regexes (capture groups made plain).
//
// Extractors with `keep last N` (progress lines) need only the last N of
// their lines per stream, not every one: a training log is mostly step
// lines. Their atoms (those that can only lead to such an extractor) form a
// second filter, `tail_regex`, which a store is asked for newest first and
// at most `tail_lines` lines per stream; `regex` keeps everything else.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "runtime/program.h"

namespace culprit::blueprint {

struct LineFilter {
  std::string regex;          // "" when the source cannot be filtered (every line is needed)
  int atoms = 0;              // literal alternatives
  int regexes = 0;            // full-regex alternatives (extractors without atoms)
  // Lines of `keep last N` extractors that `regex` does not take: the
  // newest `tail_lines` per stream that match it (twice the largest N) are
  // what they keep ("" when none, or when `regex` is "").
  std::string tail_regex;
  int64_t tail_lines = 0;
};

// One filter per source the catalog reads, by source name.
std::map<std::string, LineFilter> catalog_line_filters(const Program& program);

// The union of several sources' filters ("" when one of them is ""); their
// tails are joined too, and their tail_lines added.
LineFilter combine_filters(const std::vector<const LineFilter*>& filters);

// `s` as a LogQL double-quoted string literal (backslash, quote, control
// characters escaped as Go's strconv.Unquote reads them).
std::string logql_quote(std::string_view s);
// `s` with every regex metacharacter escaped (RE2 / Go syntax).
std::string regex_escape(std::string_view s);

}  // namespace culprit::blueprint
