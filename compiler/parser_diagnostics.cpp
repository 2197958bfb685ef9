// The ANTLR-free half of the parser's diagnostics: columns counted in bytes
// rather than ANTLR's code points, ANTLR's syntax error messages said in the
// words of docs/language.md, and where a file stops being valid UTF-8.
//
// Separate from the ANTLR fence (compiler/parser_antlr*) because none of it
// needs ANTLR: it works on SourceFile, strings and RawSyntaxError
// (compiler/parser_internal.h). Keeping it out leaves inside the fence only
// the code that has to handle ANTLR's types.

#include "compiler/parser_internal.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "base/text_util.h"

namespace culprit::parser_internal {

// ANTLR counts columns in code points (its input stream is UTF-32); the
// diagnostics count bytes so carets line up with the UTF-8 source line.
uint32_t byte_column(const SourceFile& f, size_t line, size_t cp_col) {
  std::string_view text = f.line_text(static_cast<uint32_t>(line));
  size_t cp = 0, i = 0;
  while (i < text.size() && cp < cp_col) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    i += len;
    ++cp;
  }
  return static_cast<uint32_t>(i + 1);
}

namespace {

// ANTLR's token names in an expected set, as a person would say them.
std::string say_token(const std::string& t) {
  static const std::pair<const char*, const char*> names[] = {
      {"IDENT", "a name"}, {"STRING", "a string"}, {"REGEX", "a /regex/"}, {"INT", "a number"},
      {"FLOAT", "a number"}, {"HEX", "a number"}, {"DURATION", "a duration"}, {"<EOF>", "the end of the file"}};
  for (const auto& [k, v] : names)
    if (t == k) return v;
  return t;
}

// "{'a', 'b', IDENT}" or "'a'" -> the items, in ANTLR's order.
std::vector<std::string> expected_items(const std::string& set) {
  std::vector<std::string> out;
  std::string s = set;
  if (s.size() >= 2 && s.front() == '{' && s.back() == '}') s = s.substr(1, s.size() - 2);
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == ',')) ++i;
    if (i >= s.size()) break;
    size_t j = i;
    if (s[i] == '\'') {
      j = s.find('\'', i + 1);
      j = j == std::string::npos ? s.size() : j + 1;
    } else {
      while (j < s.size() && s[j] != ',') ++j;
    }
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// ", expected X, Y or Z" for a short expected set; "" for a long one (a
// list of twenty tokens helps nobody) or when it is an expression's start.
std::string expected_phrase(const std::string& set) {
  auto items = expected_items(set);
  bool expr = std::find(items.begin(), items.end(), "STRING") != items.end() &&
              std::find(items.begin(), items.end(), "INT") != items.end() &&
              std::find(items.begin(), items.end(), "'('") != items.end();
  if (expr) return "; expected an expression";
  if (items.empty() || items.size() > 6) return "";
  std::vector<std::string> said;
  for (const auto& t : items) {
    std::string w = say_token(t);
    if (std::find(said.begin(), said.end(), w) == said.end()) said.push_back(w);
  }
  std::string out = "; expected ";
  for (size_t i = 0; i < said.size(); ++i) {
    if (i) out += i + 1 == said.size() ? " or " : ", ";
    out += said[i];
  }
  return out;
}

}  // namespace

// ANTLR's message in the words of docs/language.md: "unexpected 'X'",
// "missing 'X' before 'Y'", with the expected tokens only when few.
std::string plain_syntax_message(const RawSyntaxError& e) {
  const std::string& m = e.message;
  std::string what = e.at_eof ? std::string("the end of the file") : "'" + e.token + "'";
  auto after = [&](const std::string& key) {
    size_t p = m.find(key);
    return p == std::string::npos ? std::string() : m.substr(p + key.size());
  };
  if (m.rfind("missing ", 0) == 0) {
    size_t at = m.rfind(" at ");
    std::string missing = m.substr(8, at == std::string::npos ? std::string::npos : at - 8);
    return fmt::format("missing {} before {}", say_token(missing), what);
  }
  if (m.rfind("extraneous input", 0) == 0 || m.rfind("mismatched input", 0) == 0)
    return fmt::format("unexpected {}{}", what, expected_phrase(after(" expecting ")));
  if (m.rfind("token recognition error", 0) == 0) return fmt::format("unexpected character {}", what);
  return fmt::format("unexpected {}", what);
}

// The first byte of `text` that is not well-formed UTF-8, or npos.
size_t first_invalid_utf8(std::string_view text) {
  size_t i = ascii_prefix_length(text);
  if (i == text.size()) return std::string_view::npos;
  // Sequence by sequence from the first non-ASCII byte: the longest valid
  // prefix ends where is_valid_utf8 fails.
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > text.size() || !is_valid_utf8(text.substr(i, len))) return i;
    i += len;
  }
  return std::string_view::npos;
}

SourceRange point_at(const SourceFile& f, size_t offset) {
  SourceRange r;
  r.file = &f;
  auto it = std::upper_bound(f.line_starts.begin(), f.line_starts.end(), static_cast<uint32_t>(offset));
  size_t line = static_cast<size_t>(it - f.line_starts.begin());  // 1-based
  r.line = static_cast<uint32_t>(line);
  r.col = static_cast<uint32_t>(offset - f.line_starts[line - 1] + 1);
  r.end_line = r.line;
  r.end_col = r.col + 1;
  return r;
}

}  // namespace culprit::parser_internal
