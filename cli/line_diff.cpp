// Why not shell out to diff(1): `culprit fmt --diff` must work where only
// the culprit binary is installed (a CI image), and the texts are in memory.
#include "cli/line_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace culprit::cli {

namespace {

constexpr size_t kContext = 3;
constexpr size_t kMaxCells = size_t{1} << 26;  // 64 Mi table cells: two files of ~8,000 lines

struct Line {
  std::string_view text;  // without its '\n'
  bool terminated = true;
};

std::vector<Line> split_lines(std::string_view s) {
  std::vector<Line> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    if (nl == std::string_view::npos) {
      out.push_back({s.substr(pos), false});
      break;
    }
    out.push_back({s.substr(pos, nl - pos), true});
    pos = nl + 1;
  }
  return out;
}

bool same(const Line& a, const Line& b) { return a.text == b.text && a.terminated == b.terminated; }

// One step of the edit script: ' ' kept, '-' only in the old text, '+' only in the new.
struct Step {
  char op;
  size_t old_index, new_index;
};

std::vector<Step> edit_script(const std::vector<Line>& a, const std::vector<Line>& b) {
  std::vector<Step> steps;
  // The common prefix and suffix need no table.
  size_t head = 0;
  while (head < a.size() && head < b.size() && same(a[head], b[head])) ++head;
  size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head && same(a[a.size() - 1 - tail], b[b.size() - 1 - tail])) ++tail;
  for (size_t i = 0; i < head; ++i) steps.push_back({' ', i, i});
  const size_t n = a.size() - head - tail, m = b.size() - head - tail;
  if (n * m > kMaxCells) {
    for (size_t i = 0; i < n; ++i) steps.push_back({'-', head + i, head});
    for (size_t j = 0; j < m; ++j) steps.push_back({'+', head + n, head + j});
  } else {
    // lcs[i][j]: the longest common subsequence of a[head+i..] and b[head+j..].
    std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
    for (size_t i = n; i-- > 0;)
      for (size_t j = m; j-- > 0;)
        at(i, j) = same(a[head + i], b[head + j]) ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && same(a[head + i], b[head + j])) {
        steps.push_back({' ', head + i, head + j});
        ++i;
        ++j;
      } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
        steps.push_back({'-', head + i, head + j});  // removals first, as diff -u shows them
        ++i;
      } else {
        steps.push_back({'+', head + i, head + j});
        ++j;
      }
    }
  }
  for (size_t k = 0; k < tail; ++k) steps.push_back({' ', a.size() - tail + k, b.size() - tail + k});
  return steps;
}

// "start,count" of a hunk's side, as diff -u writes it (an empty side names
// the line before it).
std::string range(size_t first, size_t count) {
  if (count == 1) return fmt::format("{}", first + 1);
  return fmt::format("{},{}", count == 0 ? first : first + 1, count);
}

}  // namespace

std::string unified_diff(std::string_view old_text, std::string_view new_text, const std::string& old_name,
                         const std::string& new_name) {
  if (old_text == new_text) return "";
  std::vector<Line> a = split_lines(old_text), b = split_lines(new_text);
  std::vector<Step> steps = edit_script(a, b);
  std::string out = fmt::format("--- {}\n+++ {}\n", old_name, new_name);
  size_t k = 0;
  while (k < steps.size()) {
    // The next change, and its hunk: context before it, every change within
    // 2 * kContext kept lines of the previous one, context after.
    while (k < steps.size() && steps[k].op == ' ') ++k;
    if (k == steps.size()) break;
    size_t start = k >= kContext ? k - kContext : 0;
    size_t end = k;
    for (;;) {
      while (end < steps.size() && steps[end].op != ' ') ++end;
      size_t kept = 0;
      while (end + kept < steps.size() && steps[end + kept].op == ' ' && kept <= 2 * kContext) ++kept;
      if (end + kept < steps.size() && kept <= 2 * kContext) {
        end += kept;
        continue;
      }
      end = std::min(steps.size(), end + kContext);
      break;
    }
    size_t old_count = 0, new_count = 0;
    for (size_t s = start; s < end; ++s) {
      old_count += steps[s].op != '+';
      new_count += steps[s].op != '-';
    }
    out += fmt::format("@@ -{} +{} @@\n", range(steps[start].old_index, old_count), range(steps[start].new_index, new_count));
    for (size_t s = start; s < end; ++s) {
      const Line& l = steps[s].op == '+' ? b[steps[s].new_index] : a[steps[s].old_index];
      out += steps[s].op;
      out += l.text;
      out += '\n';
      if (!l.terminated) out += "\\ No newline at end of file\n";
    }
    k = end;
  }
  return out;
}

}  // namespace culprit::cli
