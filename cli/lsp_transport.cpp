#include "cli/lsp_transport.h"

#include <cctype>
#include <charconv>

namespace culprit::cli::lsp {

namespace {

enum class Line { Ok, TooLong, End };

// One header line without its "\r\n" or "\n". A line over the limit is
// consumed to its end (so the reader stays in step) and reported.
Line read_line(std::istream& in, std::string& line) {
  line.clear();
  bool too_long = false;
  for (;;) {
    int c = in.get();
    if (c == std::char_traits<char>::eof()) return Line::End;
    if (c == '\n') break;
    if (line.size() < kMaxHeaderLine) line += static_cast<char>(c);
    else too_long = true;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return too_long ? Line::TooLong : Line::Ok;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

Incoming read_message(std::istream& in, size_t max_body) {
  Incoming out;
  std::string line, error;
  bool have_length = false;
  size_t length = 0, lines = 0;
  for (;;) {
    Line l = read_line(in, line);
    if (l == Line::End) return out;  // the input ended, in or before a header
    if (l == Line::Ok && line.empty()) {
      // Blank lines before a header are tolerated: some clients end a body
      // with a newline the length does not count.
      if (lines == 0) continue;
      break;
    }
    ++lines;
    if (!error.empty()) continue;  // the block is bad already; find its end
    if (l == Line::TooLong) {
      error = "a header line longer than " + std::to_string(kMaxHeaderLine) + " bytes";
    } else if (lines > kMaxHeaderLines) {
      error = "more than " + std::to_string(kMaxHeaderLines) + " header lines";
    } else if (size_t colon = line.find(':'); colon == std::string::npos) {
      error = "a header line without ':'";
    } else if (iequals(trim(std::string_view(line).substr(0, colon)), "Content-Length")) {
      std::string_view v = trim(std::string_view(line).substr(colon + 1));
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), length);
      if (ec != std::errc() || p != v.data() + v.size() || v.empty()) error = "a Content-Length that is not a number";
      else have_length = true;
    }
  }
  if (error.empty() && !have_length) error = "a header without Content-Length";
  if (!error.empty()) {
    out.status = Incoming::Skipped;
    out.error = error + " (skipped up to the blank line that ends it)";
    return out;
  }
  if (length > max_body) {
    // Read past it without keeping it, so the next header is found.
    in.ignore(static_cast<std::streamsize>(length));
    if (static_cast<size_t>(in.gcount()) < length) return out;
    out.status = Incoming::Skipped;
    out.error = "a message of " + std::to_string(length) + " bytes, over the limit of " + std::to_string(max_body);
    return out;
  }
  out.body.resize(length);
  in.read(out.body.data(), static_cast<std::streamsize>(length));
  if (static_cast<size_t>(in.gcount()) < length) {
    out.body.clear();
    return out;  // cut short by the end of the input
  }
  out.status = Incoming::Message;
  return out;
}

bool write_message(std::ostream& out, std::string_view body) {
  out << "Content-Length: " << body.size() << "\r\n\r\n" << body;
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace culprit::cli::lsp
