#include "runtime/text_util.h"

#include <cstring>

#include <cstdint>

namespace culprit {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";     // U+2026

// Length of the well-formed sequence starting at s[i], or the length of its maximal ill-formed
// subpart as a negative number (at least one byte is always consumed). The second byte's range
// depends on the lead byte; that is where overlongs (E0, F0), surrogates (ED) and code points
// above U+10FFFF (F4) are excluded, per Unicode Table 3-7.
int sequence_length(std::string_view s, size_t i) noexcept {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  int len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return -1;  // continuation byte without a lead, C0/C1 overlong lead, or F5..FF
  }
  for (int k = 1; k < len; ++k) {
    if (i + k >= s.size()) return -k;
    const auto b = static_cast<unsigned char>(s[i + k]);
    const unsigned char min = k == 1 ? lo : 0x80;
    const unsigned char max = k == 1 ? hi : 0xBF;
    if (b < min || b > max) return -k;
  }
  return len;
}

constexpr bool is_unwanted_control(unsigned char c) noexcept { return c < 0x20 && c != '\t'; }

// Index of the first byte sanitize_utf8 would change, or s.size().
size_t first_dirty(std::string_view s) noexcept {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x80) {  // printable ASCII is nearly all of a log
      ++i;
      continue;
    }
    if (is_unwanted_control(c)) return i;
    const int n = sequence_length(s, i);
    if (n < 0) return i;
    i += static_cast<size_t>(n);
  }
  return s.size();
}

constexpr bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

}  // namespace

size_t ascii_prefix_length(std::string_view s) noexcept {
  // Logs are almost all ASCII: test 32 bytes per step for a high bit (the
  // compiler turns the word loop into vector code) before going byte-wise.
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  const char* p = s.data();
  const size_t n = s.size();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    uint64_t w[4];
    std::memcpy(w, p + i, 32);
    if ((w[0] | w[1] | w[2] | w[3]) & kHigh) break;
  }
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w & kHigh) break;
  }
  while (i < n && !(static_cast<unsigned char>(p[i]) & 0x80)) ++i;
  return i;
}

bool is_valid_utf8(std::string_view s) noexcept {
  size_t i = 0;
  while (i < s.size()) {
    i += ascii_prefix_length(s.substr(i));
    if (i == s.size()) break;
    const int n = sequence_length(s, i);
    if (n < 0) return false;
    i += static_cast<size_t>(n);
  }
  return true;
}

std::string sanitize_utf8(std::string_view s) noexcept {
  size_t i = first_dirty(s);
  if (i == s.size()) return std::string(s);
  std::string out;
  out.reserve(s.size() + 16);
  out.append(s.data(), i);
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (is_unwanted_control(c)) {
      out += kReplacement;
      ++i;
      continue;
    }
    const int n = sequence_length(s, i);
    if (n > 0) {
      out.append(s.data() + i, static_cast<size_t>(n));
      i += static_cast<size_t>(n);
    } else {
      out += kReplacement;
      i += static_cast<size_t>(-n);
    }
  }
  return out;
}

std::string truncate_utf8(std::string_view s, size_t max_bytes) noexcept {
  if (s.size() <= max_bytes) return std::string(s);
  const bool with_mark = max_bytes >= kEllipsis.size();
  size_t cut = with_mark ? max_bytes - kEllipsis.size() : max_bytes;
  // If s[cut] continues a sequence, step back to that sequence's lead byte so it is dropped
  // whole. A sequence is at most 4 bytes, so a lead more than 3 bytes back cannot own s[cut].
  if (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) {
    size_t j = cut;
    for (int steps = 0; steps < 3 && j > 0; ++steps) {
      --j;
      const auto b = static_cast<unsigned char>(s[j]);
      if ((b & 0xC0) != 0x80) {
        const size_t len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
        if (j + len > cut) cut = j;
        break;
      }
    }
  }
  std::string out(s.substr(0, cut));
  if (with_mark) out += kEllipsis;
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) noexcept {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string_view trim(std::string_view s) noexcept {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

bool glob_kind_match(std::string_view pattern, std::string_view kind) noexcept {
  if (pattern == "*") return true;
  if (pattern.size() >= 2 && pattern.substr(pattern.size() - 2) == ".*") {
    const std::string_view family = pattern.substr(0, pattern.size() - 1);  // keeps the dot
    return kind.size() > family.size() && kind.substr(0, family.size()) == family;
  }
  return pattern == kind;
}

}  // namespace culprit
