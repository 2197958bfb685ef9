#include "base/suggest.h"

#include <algorithm>

namespace culprit {

namespace {

char fold(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool starts_with_folded(std::string_view s, std::string_view prefix) {
  if (prefix.size() > s.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (fold(s[i]) != fold(prefix[i])) return false;
  return true;
}

size_t allowed_distance(size_t len) { return len <= 4 ? 1 : len <= 8 ? 2 : 3; }

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) noexcept {
  // Three rows suffice for adjacent transpositions.
  std::vector<size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]))
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.empty()) return std::nullopt;
  const std::string* best = nullptr;
  size_t best_d = 0;
  for (const auto& c : candidates) {
    if (c == word || c.empty()) continue;
    size_t d = edit_distance(word, c);
    bool close = d <= allowed_distance(std::max(word.size(), c.size())) && d < std::min(word.size(), c.size());
    // A prefix relation ("lowercase" for "lower") is close however long the rest.
    size_t shorter = std::min(word.size(), c.size()), longer = std::max(word.size(), c.size());
    if (!close && shorter >= 3 && shorter * 2 >= longer && (starts_with_folded(c, word) || starts_with_folded(word, c)))
      close = true;
    if (!close) continue;
    if (!best || d < best_d) {
      best = &c;
      best_d = d;
    }
  }
  if (!best) return std::nullopt;
  return *best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  auto m = closest_match(word, candidates);
  return m ? "did you mean '" + *m + "'?" : std::string();
}

}  // namespace culprit
