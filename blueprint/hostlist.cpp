#include "blueprint/hostlist.h"

#include <fmt/format.h>

#include <cctype>

namespace culprit::blueprint {

namespace {

// Splits on commas that are not inside brackets.
bool split_top(std::string_view s, std::vector<std::string_view>& items, std::string& error) {
  int depth = 0;
  size_t from = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '[') {
      if (++depth > 1) {
        error = fmt::format("nested '[' at position {}", i + 1);
        return false;
      }
    } else if (c == ']') {
      if (--depth < 0) {
        error = fmt::format("unmatched ']' at position {}", i + 1);
        return false;
      }
    } else if (c == ',' && depth == 0) {
      items.push_back(s.substr(from, i - from));
      from = i + 1;
    }
  }
  if (depth != 0) {
    error = "unmatched '['";
    return false;
  }
  items.push_back(s.substr(from));
  return true;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// The members of one bracket group's content "001-004,010".
bool expand_group(std::string_view g, std::vector<std::string>& out, std::string& error, size_t max_hosts) {
  size_t from = 0;
  while (from <= g.size()) {
    size_t comma = g.find(',', from);
    if (comma == std::string_view::npos) comma = g.size();
    std::string_view r = g.substr(from, comma - from);
    size_t dash = r.find('-');
    std::string_view lo = r.substr(0, dash), hi = dash == std::string_view::npos ? r : r.substr(dash + 1);
    if (!all_digits(lo) || !all_digits(hi) || lo.size() > 18 || hi.size() > 18) {
      error = fmt::format("'{}' is not a number or a range a-b", r);
      return false;
    }
    unsigned long long a = std::stoull(std::string(lo)), b = std::stoull(std::string(hi));
    if (b < a) {
      error = fmt::format("reversed range '{}'", r);
      return false;
    }
    if (b - a >= max_hosts || out.size() + (b - a + 1) > max_hosts) {
      error = fmt::format("range '{}' expands to more than {} hosts", r, max_hosts);
      return false;
    }
    size_t width = lo.size() > 1 && lo[0] == '0' ? lo.size() : 0;
    for (unsigned long long v = a; v <= b; ++v) out.push_back(fmt::format("{:0{}}", v, width));
    from = comma + 1;
  }
  return true;
}

}  // namespace

bool expand_hostlist(std::string_view list, std::vector<std::string>& out, std::string& error, size_t max_hosts) {
  out.clear();
  while (!list.empty() && std::isspace(static_cast<unsigned char>(list.front()))) list.remove_prefix(1);
  while (!list.empty() && std::isspace(static_cast<unsigned char>(list.back()))) list.remove_suffix(1);
  if (list.empty() || list == "None assigned" || list == "(null)") return true;
  std::vector<std::string_view> items;
  if (!split_top(list, items, error)) return false;
  for (auto item : items) {
    if (item.empty()) {
      error = "empty host name";
      return false;
    }
    // Cartesian product of the fixed parts and the groups, left to right.
    std::vector<std::string> partial = {""};
    size_t pos = 0;
    while (pos < item.size()) {
      size_t open = item.find('[', pos);
      std::string_view fixed = item.substr(pos, open == std::string_view::npos ? std::string_view::npos : open - pos);
      for (auto& p : partial) p += fixed;
      if (open == std::string_view::npos) break;
      size_t close = item.find(']', open);
      std::vector<std::string> members;
      if (!expand_group(item.substr(open + 1, close - open - 1), members, error, max_hosts)) return false;
      if (partial.size() * members.size() + out.size() > max_hosts) {
        error = fmt::format("'{}' expands to more than {} hosts", item, max_hosts);
        return false;
      }
      std::vector<std::string> next;
      next.reserve(partial.size() * members.size());
      for (const auto& p : partial)
        for (const auto& m : members) next.push_back(p + m);
      partial = std::move(next);
      pos = close + 1;
    }
    for (auto& p : partial) {
      for (char c : p)
        if (std::isspace(static_cast<unsigned char>(c))) {
          error = fmt::format("host name '{}' contains a space", p);
          return false;
        }
      out.push_back(std::move(p));
    }
  }
  return true;
}

}  // namespace culprit::blueprint
