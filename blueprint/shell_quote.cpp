#include "blueprint/shell_quote.h"

namespace culprit::blueprint {

namespace {

// Characters no POSIX shell gives a meaning to in an unquoted word (outside
// of the first word, where '=' could make an assignment: argv[0] is a
// command name and never has one).
bool plain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '/' || c == ':' || c == '=' || c == '@' || c == '%' || c == '+' || c == ',' || c == '-';
}

bool all_plain(std::string_view s) {
  for (char c : s)
    if (!plain(c)) return false;
  return true;
}

// The length of a leading "NAME=" (a shell-variable-like name), or 0.
size_t name_prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_' ||
                          (i > 0 && s[i] >= '0' && s[i] <= '9')))
    ++i;
  return i > 0 && i < s.size() && s[i] == '=' ? i + 1 : 0;
}

std::string single_quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += '\'';
  return out;
}

}  // namespace

std::string shell_quote(std::string_view arg) {
  if (!arg.empty() && all_plain(arg)) return std::string(arg);
  size_t keep = name_prefix(arg);
  return std::string(arg.substr(0, keep)) + single_quoted(arg.substr(keep));
}

std::string shell_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += shell_quote(a);
  }
  return out;
}

}  // namespace culprit::blueprint
