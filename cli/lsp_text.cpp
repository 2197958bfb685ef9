#include "cli/lsp_text.h"

namespace culprit::cli::lsp {

namespace {

// Length in bytes of the UTF-8 sequence starting at `line[at]`, and its
// length in UTF-16 units; a byte that cannot start a sequence (a stray
// continuation byte, 0xF8..0xFF) or whose sequence the line cuts short is
// one byte and one unit (an editor shows it as one U+FFFD), so that invalid
// text still maps every byte somewhere.
void sequence(std::string_view line, size_t at, uint32_t& bytes, uint32_t& units) {
  auto lead = static_cast<unsigned char>(line[at]);
  if (lead < 0x80) bytes = 1, units = 1;
  else if (lead >= 0xC0 && lead < 0xE0) bytes = 2, units = 1;
  else if (lead >= 0xE0 && lead < 0xF0) bytes = 3, units = 1;
  else if (lead >= 0xF0 && lead < 0xF8) bytes = 4, units = 2;  // a surrogate pair
  else bytes = 1, units = 1;
  if (at + bytes > line.size()) bytes = 1, units = 1;
}

}  // namespace

uint32_t utf16_to_byte(std::string_view line, uint32_t character) {
  uint32_t byte = 0, unit = 0;
  while (byte < line.size() && unit < character) {
    uint32_t bytes = 0, units = 0;
    sequence(line, byte, bytes, units);
    // A client that points between the two halves of a surrogate pair is
    // answered with the character's start, not a byte inside it.
    if (unit + units > character) break;
    byte += bytes;
    unit += units;
  }
  return byte < line.size() ? byte : static_cast<uint32_t>(line.size());
}

uint32_t byte_to_utf16(std::string_view line, uint32_t byte) {
  uint32_t at = 0, unit = 0;
  while (at < line.size()) {
    uint32_t bytes = 0, units = 0;
    sequence(line, at, bytes, units);
    if (at + bytes > byte) break;  // `byte` is inside (or at) this character
    at += bytes;
    unit += units;
  }
  return unit;  // past the end: the line's end
}

std::string_view line_of(std::string_view text, uint32_t line) {
  size_t start = 0;
  for (uint32_t i = 0; i < line; ++i) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return {};
    start = nl + 1;
  }
  size_t end = text.find('\n', start);
  std::string_view l = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return l;
}

Range to_lsp(const SourceRange& r) {
  Range out;
  if (!r.file || r.line == 0) return out;
  auto at = [&](uint32_t line, uint32_t col) {
    // Line and column are 1-based; col counts bytes.
    return Position{line - 1, byte_to_utf16(r.file->line_text(line), col > 0 ? col - 1 : 0)};
  };
  out.start = at(r.line, r.col);
  out.end = r.end_line >= r.line && (r.end_line > r.line || r.end_col > r.col) ? at(r.end_line, r.end_col) : out.start;
  return out;
}

std::string_view word_at(std::string_view line, uint32_t byte, uint32_t& start) {
  auto part = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '*';
  };
  size_t b = byte < line.size() ? byte : line.size();
  if ((b == line.size() || !part(line[b])) && b > 0 && part(line[b - 1])) --b;
  if (b >= line.size() || !part(line[b])) return {};
  size_t s = b, e = b;
  while (s > 0 && part(line[s - 1])) --s;
  while (e < line.size() && part(line[e])) ++e;
  start = static_cast<uint32_t>(s);
  return line.substr(s, e - s);
}

std::string uri_to_path(std::string_view uri) {
  constexpr std::string_view scheme = "file://";
  if (uri.size() < scheme.size()) return {};
  for (size_t i = 0; i < scheme.size(); ++i)
    if (static_cast<char>(uri[i] | 0x20) != scheme[i]) return {};  // the scheme is case-insensitive
  uri.remove_prefix(scheme.size());
  size_t slash = uri.find('/');
  if (slash == std::string_view::npos) return {};
  std::string_view authority = uri.substr(0, slash);
  if (!authority.empty() && authority != "localhost") return {};
  uri.remove_prefix(slash);
  size_t q = uri.find_first_of("?#");
  if (q != std::string_view::npos) uri = uri.substr(0, q);
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string path;
  for (size_t i = 0; i < uri.size(); ++i) {
    int hi = 0, lo = 0;
    if (uri[i] == '%' && i + 2 < uri.size() && (hi = hex(uri[i + 1])) >= 0 && (lo = hex(uri[i + 2])) >= 0) {
      path += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      path += uri[i];
    }
  }
  // A NUL would cut the path short in every system call; such a URI names no file.
  if (path.find('\0') != std::string::npos) return {};
  return path;
}

std::string path_to_uri(std::string_view path) {
  static const char* kHex = "0123456789ABCDEF";
  std::string uri = "file://";
  for (unsigned char c : path) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
                 c == '_' || c == '~' || c == '/';
    if (plain) {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  return uri;
}

}  // namespace culprit::cli::lsp
