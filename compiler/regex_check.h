// Regex admission: a pattern is usable only if both engines accept it.
//
// Extractor patterns are scanned by Hyperscan (to find candidate lines in one
// pass) and then matched by RE2 (to take captures), so each must compile in
// both. This module compiles a pattern in each engine, translates the named
// group spelling RE2 needs, and lists the capture names in group order.
// Stateless; safe to call from any thread.
#pragma once

#include <string>
#include <vector>

namespace culprit {

struct RegexCheck {
  bool ok = false;
  std::string hyperscan_error;            // empty if Hyperscan accepted it
  std::string re2_error;                  // empty if RE2 accepted it
  std::string re2_pattern;                // `(?<n>` rewritten as `(?P<n>`
  std::vector<std::string> capture_names; // by group number - 1; "" for unnamed groups
};

RegexCheck check_regex(const std::string& pattern, bool caseless, bool dotall);

// Hyperscan flags the scanner uses for a pattern, so the check and the scan
// compile the same thing.
unsigned hyperscan_flags(bool caseless, bool dotall);

// `(?<name>` -> `(?P<name>`; leaves look-behind `(?<=`/`(?<!` untouched (RE2
// rejects those anyway, with its own message).
std::string to_re2_syntax(const std::string& pattern);

}  // namespace culprit
