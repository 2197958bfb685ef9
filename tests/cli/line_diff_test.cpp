// cli/line_diff.h: unified diffs for `culprit fmt --diff`. Exact output on
// small cases, and on many random pairs of texts that applying the diff to
// the old text gives the new one (with an applier written here, from the
// format's definition).
#include <doctest/doctest.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli/line_diff.h"

using culprit::cli::unified_diff;

namespace {

// Applies a unified diff produced for `old_text`; "" and false on a hunk that
// does not fit.
bool apply(const std::string& old_text, const std::string& diff, std::string& out) {
  std::vector<std::string> old_lines;
  {
    std::istringstream in(old_text);
    for (std::string l; std::getline(in, l);) old_lines.push_back(l);
  }
  std::istringstream in(diff);
  std::string line;
  std::getline(in, line);  // ---
  std::getline(in, line);  // +++
  std::vector<std::string> result;
  size_t next_old = 0;  // 0-based: old lines before it are done
  bool last_unterminated = !old_text.empty() && old_text.back() != '\n';
  std::string pending;
  std::vector<std::string> hunk;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  bool new_unterminated = last_unterminated;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.rfind("@@ -", 0) == 0) {
      size_t start = std::stoul(l.substr(4));
      size_t comma = l.find(',', 4), space = l.find(' ', 4);
      size_t count = comma != std::string::npos && comma < space ? std::stoul(l.substr(comma + 1)) : 1;
      size_t first = count == 0 ? start : start - 1;  // 0-based first old line of the hunk
      if (first < next_old || first > old_lines.size()) return false;
      while (next_old < first) result.push_back(old_lines[next_old++]);
      continue;
    }
    if (l == "\\ No newline at end of file") {
      // Says the line before it had no '\n': which side decides the result.
      char op = lines[i - 1][0];
      if (op == '+' || op == ' ') new_unterminated = true;
      continue;
    }
    char op = l[0];
    std::string text = l.substr(1);
    if (op == ' ' || op == '-') {
      if (next_old >= old_lines.size() || old_lines[next_old] != text) return false;
      ++next_old;
    }
    if (op == ' ' || op == '+') result.push_back(text);
    if (op == '+' || op == ' ') new_unterminated = false;
  }
  while (next_old < old_lines.size()) {
    result.push_back(old_lines[next_old++]);
    new_unterminated = last_unterminated;
  }
  out.clear();
  for (size_t i = 0; i < result.size(); ++i) out += result[i] + "\n";
  if (new_unterminated && !out.empty()) out.pop_back();
  return true;
}

std::string random_text(std::mt19937& rng, size_t lines) {
  static const char* words[] = {"rule", "for", "x", "", "  demote", "}", "{", "match /a/"};
  std::string s;
  for (size_t i = 0; i < lines; ++i) {
    s += words[rng() % 8];
    s += '\n';
  }
  if (!s.empty() && rng() % 4 == 0) s.pop_back();  // sometimes no final newline
  return s;
}

}  // namespace

TEST_CASE("unified_diff: equal texts give nothing; a change gives the diff -u format") {
  CHECK(unified_diff("a\nb\n", "a\nb\n", "f", "f").empty());
  CHECK(unified_diff("a\nb\nc\n", "a\nB\nc\n", "f.attr", "f.attr") ==
        "--- f.attr\n+++ f.attr\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
  // Far-apart changes are separate hunks with three lines of context.
  std::string old_text, new_text;
  for (int i = 1; i <= 20; ++i) {
    old_text += std::to_string(i) + "\n";
    new_text += (i == 2 || i == 18 ? "x" : std::to_string(i)) + "\n";
  }
  CHECK(unified_diff(old_text, new_text, "f", "f") ==
        "--- f\n+++ f\n@@ -1,5 +1,5 @@\n 1\n-2\n+x\n 3\n 4\n 5\n@@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+x\n 19\n 20\n");
  // An insertion at the top names the line before it (0), and a missing
  // final newline is marked.
  CHECK(unified_diff("new\n", "", "f", "f") == "--- f\n+++ f\n@@ -1 +0,0 @@\n-new\n");
  CHECK(unified_diff("a", "new\na", "f", "f") ==
        "--- f\n+++ f\n@@ -1 +1,2 @@\n+new\n a\n\\ No newline at end of file\n");
  CHECK(unified_diff("a\n", "a", "f", "f") == "--- f\n+++ f\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n");
}

TEST_CASE("unified_diff: applying the diff to the old text gives the new one, on random texts") {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string a = random_text(rng, rng() % 30), b = random_text(rng, rng() % 30);
    std::string d = unified_diff(a, b, "f", "f");
    CAPTURE(a);
    CAPTURE(b);
    CAPTURE(d);
    if (a == b) {
      CHECK(d.empty());
      continue;
    }
    std::string got;
    REQUIRE(apply(a, d, got));
    CHECK(got == b);
  }
}
