#include "base/text_util.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#ifdef __SSE2__
#include <immintrin.h>
#endif

namespace culprit {

// Table 3-7 of the Unicode standard: the second byte's range depends on the
// lead byte; that is where overlongs (E0, F0), surrogates (ED) and code points
// above U+10FFFF (F4) are excluded.
int utf8_sequence_length(std::string_view s, size_t i) noexcept {
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

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";     // U+2026

constexpr bool is_unwanted_control(unsigned char c) noexcept { return c < 0x20 && c != '\t'; }

// Index of the first byte sanitize_utf8 would change, or s.size().
size_t first_dirty(std::string_view s) noexcept {
  size_t i = 0;
#ifdef __SSE2__
  // A signed compare with 0x20 flags C0 controls and, being negative, every
  // byte >= 0x80: one compare finds where the byte-wise loop must look (a
  // TAB is flagged too, and passed there).
  const __m128i space = _mm_set1_epi8(0x20);
  while (i + 16 <= s.size()) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    const int mask = _mm_movemask_epi8(_mm_cmplt_epi8(v, space));
    if (mask == 0) {
      i += 16;
      continue;
    }
    i += static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
    break;
  }
#endif
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x80) {  // printable ASCII is nearly all of a log
      ++i;
      continue;
    }
    if (is_unwanted_control(c)) return i;
    const int n = utf8_sequence_length(s, i);
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

namespace {

// Portable tail: eight bytes per step. A byte equal to '\n' becomes zero after
// the xor, and the expression below sets the high bit of exactly the zero
// bytes (no false positives); one multiply sums the eight 0/1 bytes.
size_t count_newlines_words(const char* p, size_t n, uint64_t& high) noexcept {
  constexpr uint64_t kNl = 0x0a0a0a0a0a0a0a0aULL, kLow7 = 0x7f7f7f7f7f7f7f7fULL, kOnes = 0x0101010101010101ULL;
  size_t count = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    high |= w;
    const uint64_t x = w ^ kNl;
    const uint64_t zero = ~(((x & kLow7) + kLow7) | x | kLow7);
    count += static_cast<size_t>(((zero >> 7) * kOnes) >> 56);
  }
  for (; i < n; ++i) {
    high |= static_cast<unsigned char>(p[i]);
    count += p[i] == '\n';
  }
  return count;
}

#ifdef __SSE2__
// Compare gives 0xFF (-1) per newline; subtracting it counts in byte-wide
// counters, which psadbw sums every 255 steps, before they can wrap. The
// high bits are OR-ed on the side, for the ASCII answer.
size_t count_newlines_sse2(const char* p, size_t n, uint64_t& high) noexcept {
  const __m128i nl = _mm_set1_epi8('\n');
  __m128i hi = _mm_setzero_si128();
  size_t count = 0, i = 0;
  while (i + 16 <= n) {
    __m128i acc = _mm_setzero_si128();
    const size_t stop = std::min(n - 15, i + 16 * 255);
    for (; i < stop; i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
      hi = _mm_or_si128(hi, v);
    }
    const __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
    count += static_cast<size_t>(_mm_cvtsi128_si64(sums)) + static_cast<size_t>(_mm_extract_epi16(sums, 4));
  }
  if (_mm_movemask_epi8(hi)) high |= 0x80;
  return count + count_newlines_words(p + i, n - i, high);
}

// The same with 32-byte vectors and two accumulators (the loop is bound by
// the dependency on the accumulator otherwise).
__attribute__((target("avx2"))) size_t count_newlines_avx2(const char* p, size_t n, uint64_t& high) noexcept {
  const __m256i nl = _mm256_set1_epi8('\n');
  __m256i hi = _mm256_setzero_si256();
  __m256i total = _mm256_setzero_si256();
  size_t i = 0;
  while (i + 64 <= n) {
    __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
    const size_t stop = std::min(n - 63, i + 64 * 255);
    for (; i < stop; i += 64) {
      const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
      const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32));
      a0 = _mm256_sub_epi8(a0, _mm256_cmpeq_epi8(v0, nl));
      a1 = _mm256_sub_epi8(a1, _mm256_cmpeq_epi8(v1, nl));
      hi = _mm256_or_si256(hi, _mm256_or_si256(v0, v1));
    }
    total = _mm256_add_epi64(total, _mm256_sad_epu8(a0, _mm256_setzero_si256()));
    total = _mm256_add_epi64(total, _mm256_sad_epu8(a1, _mm256_setzero_si256()));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), total);
  if (_mm256_movemask_epi8(hi)) high |= 0x80;
  return static_cast<size_t>(lanes[0] + lanes[1] + lanes[2] + lanes[3]) + count_newlines_words(p + i, n - i, high);
}

bool have_avx2() noexcept {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return yes;
}
#endif

}  // namespace

size_t count_newlines(std::string_view s, bool* non_ascii) noexcept {
  uint64_t high = 0;
#ifdef __SSE2__
  const size_t count = have_avx2() ? count_newlines_avx2(s.data(), s.size(), high) : count_newlines_sse2(s.data(), s.size(), high);
#else
  const size_t count = count_newlines_words(s.data(), s.size(), high);
#endif
  if (non_ascii && (high & 0x8080808080808080ULL)) *non_ascii = true;
  return count;
}

bool is_valid_utf8(std::string_view s) noexcept {
  size_t i = 0;
  while (i < s.size()) {
    i += ascii_prefix_length(s.substr(i));
    if (i == s.size()) break;
    const int n = utf8_sequence_length(s, i);
    if (n < 0) return false;
    i += static_cast<size_t>(n);
  }
  return true;
}

bool is_clean_text(std::string_view s) noexcept { return first_dirty(s) == s.size(); }

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
    const int n = utf8_sequence_length(s, i);
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

std::string escape_for_terminal(std::string_view s) noexcept {
  static constexpr char kHex[] = "0123456789abcdef";
  auto hex = [](std::string& out, std::string_view prefix, unsigned v, int digits) {
    out += prefix;
    for (int k = digits - 1; k >= 0; --k) out += kHex[(v >> (4 * k)) & 0xF];
  };
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\t') {
      out += "\\t", ++i;
    } else if (c == '\n') {
      out += "\\n", ++i;
    } else if (c == '\r') {
      out += "\\r", ++i;
    } else if (c < 0x80) {  // the other C0 controls and DEL
      hex(out, "\\x", c, 2), ++i;
    } else {
      const int n = utf8_sequence_length(s, i);
      if (n < 0) {  // ill-formed, a lone 8-bit C1 byte (0x9B is CSI) among them
        for (int k = 0; k < -n; ++k) hex(out, "\\x", static_cast<unsigned char>(s[i + k]), 2);
        i += static_cast<size_t>(-n);
      } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) <= 0x9F) {  // U+0080..U+009F
        hex(out, "\\u", static_cast<unsigned char>(s[i + 1]), 4);
        i += 2;
      } else {
        out.append(s.substr(i, static_cast<size_t>(n)));
        i += static_cast<size_t>(n);
      }
    }
  }
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
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

bool contains_text(std::string_view hay, std::string_view needle) noexcept {
  if (needle.empty()) return true;
  if (needle.size() > hay.size()) return false;
  return memmem(hay.data(), hay.size(), needle.data(), needle.size()) != nullptr;
}

std::string_view trim(std::string_view s) noexcept {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::optional<std::string> rank_gaps(std::string_view list) {
  constexpr int64_t kMaxRank = 10000000;
  std::vector<bool> seen;
  int64_t cur = -1, top = -1;
  auto close = [&]() {
    if (cur < 0) return;
    if (static_cast<size_t>(cur) >= seen.size()) seen.resize(static_cast<size_t>(cur) + 1, false);
    seen[static_cast<size_t>(cur)] = true;
    top = std::max(top, cur);
    cur = -1;
  };
  for (char c : list) {
    if (c >= '0' && c <= '9') {
      cur = (cur < 0 ? 0 : cur * 10) + (c - '0');
      if (cur > kMaxRank) return std::nullopt;
    } else if (c == ',' || c == ' ') {
      close();
    } else {
      return std::nullopt;
    }
  }
  close();
  if (top < 0) return std::nullopt;
  std::string out;
  for (int64_t r = 0; r < top; ++r)
    if (!seen[static_cast<size_t>(r)]) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
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
