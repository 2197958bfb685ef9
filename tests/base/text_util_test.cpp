// Expected sanitize_utf8 outputs agree with Python's bytes.decode("utf-8", "replace"), which
// implements the same "maximal subpart" replacement.
#include "base/text_util.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using culprit::glob_kind_match;
using culprit::is_clean_text;
using culprit::is_valid_utf8;
using culprit::sanitize_utf8;
using culprit::split;
using culprit::trim;
using culprit::truncate_utf8;

namespace {
const std::string kFffd = "\xEF\xBF\xBD";
const std::string kEllipsis = "\xE2\x80\xA6";

std::string bytes(const char* s, size_t n) { return std::string(s, n); }
}  // namespace

TEST_CASE("is_valid_utf8 accepts well-formed text") {
  CHECK(is_valid_utf8(""));
  CHECK(is_valid_utf8("plain ASCII"));
  CHECK(is_valid_utf8("caf\xC3\xA9"));                 // U+00E9
  CHECK(is_valid_utf8("\xE2\x82\xAC"));                // U+20AC
  CHECK(is_valid_utf8("\xF0\x9F\x98\x80"));            // U+1F600
  CHECK(is_valid_utf8("\xC2\x80"));                    // U+0080, smallest 2-byte
  CHECK(is_valid_utf8("\xE0\xA0\x80"));                // U+0800, smallest 3-byte
  CHECK(is_valid_utf8("\xED\x9F\xBF"));                // U+D7FF, just below surrogates
  CHECK(is_valid_utf8("\xEE\x80\x80"));                // U+E000, just above surrogates
  CHECK(is_valid_utf8("\xF0\x90\x80\x80"));            // U+10000, smallest 4-byte
  CHECK(is_valid_utf8("\xF4\x8F\xBF\xBF"));            // U+10FFFF, largest
  CHECK(is_valid_utf8(bytes("a\0b", 3)));              // NUL is well-formed
  CHECK(is_valid_utf8("\x7F"));
}

TEST_CASE("is_valid_utf8 rejects ill-formed text") {
  const std::vector<std::string> bad = {
      "\x80",              // lone continuation
      "\xBF",              //
      "\xC0\x80",          // overlong NUL
      "\xC1\xBF",          // overlong
      "\xE0\x80\x80",      // overlong 3-byte
      "\xE0\x9F\xBF",      // overlong U+07FF
      "\xF0\x80\x80\x80",  // overlong 4-byte
      "\xF0\x8F\xBF\xBF",  // overlong U+FFFF
      "\xED\xA0\x80",      // U+D800 surrogate
      "\xED\xBF\xBF",      // U+DFFF surrogate
      "\xF4\x90\x80\x80",  // U+110000
      "\xF5\x80\x80\x80",  // lead beyond U+10FFFF
      "\xFF",
      "\xFE",
      "\xC3",              // truncated 2-byte
      "\xE2\x82",          // truncated 3-byte
      "\xF0\x9F\x98",      // truncated 4-byte
      "\xC3\x28",          // bad continuation
      "abc\xE2\x82",       // truncated at the end of otherwise good text
  };
  for (const std::string& s : bad) {
    CAPTURE(s);
    CHECK_FALSE(is_valid_utf8(s));
  }
}

TEST_CASE("utf8_sequence_length measures one sequence, or its ill-formed part") {
  using culprit::utf8_sequence_length;
  CHECK(utf8_sequence_length("a", 0) == 1);
  CHECK(utf8_sequence_length("\xC3\xA9x", 0) == 2);
  CHECK(utf8_sequence_length("\xE2\x82\xAC", 0) == 3);
  CHECK(utf8_sequence_length("\xF0\x9F\x98\x80", 0) == 4);
  CHECK(utf8_sequence_length("x\xC3\xA9", 1) == 2);
  CHECK(utf8_sequence_length("\xFF", 0) == -1);          // never a lead
  CHECK(utf8_sequence_length("\x80", 0) == -1);          // a continuation alone
  CHECK(utf8_sequence_length("\xE2\x82", 0) == -2);      // cut at the end
  CHECK(utf8_sequence_length("\xED\xA0\x80", 0) == -1); // a surrogate: the second byte is out of range
  CHECK(utf8_sequence_length("\xF4\x90\x80\x80", 0) == -1);  // above U+10FFFF
  CHECK(utf8_sequence_length("\xC3\x28", 0) == -1);      // bad continuation
}

TEST_CASE("sanitize_utf8 keeps clean text byte for byte") {
  const std::string clean = "NCCL WARN\tcaf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \x7F";
  CHECK(sanitize_utf8(clean) == clean);
  CHECK(sanitize_utf8("") == "");
}

TEST_CASE("sanitize_utf8 replaces each maximal ill-formed subpart with one U+FFFD") {
  CHECK(sanitize_utf8("\xE2\x82") == kFffd);
  CHECK(sanitize_utf8("\xC0\x80") == kFffd + kFffd);
  CHECK(sanitize_utf8("\xED\xA0\x80") == kFffd + kFffd + kFffd);
  CHECK(sanitize_utf8("\xF4\x90\x80\x80") == kFffd + kFffd + kFffd + kFffd);
  CHECK(sanitize_utf8("\xF0\x80\x80\x80") == kFffd + kFffd + kFffd + kFffd);
  CHECK(sanitize_utf8("\xE0\x80\x80") == kFffd + kFffd + kFffd);
  CHECK(sanitize_utf8("a\xF0\x9F\x98" "b") == "a" + kFffd + "b");
  CHECK(sanitize_utf8("\xFF") == kFffd);
  CHECK(sanitize_utf8("\x80\x80") == kFffd + kFffd);
  CHECK(sanitize_utf8("\xE2\x82\xAC\xE2") == "\xE2\x82\xAC" + kFffd);
  CHECK(sanitize_utf8("ok \xC2") == "ok " + kFffd);
  CHECK(is_valid_utf8(sanitize_utf8("\xC3\x28\xA0\xA1\xF8\x88\x80\x80\x80")));
}

TEST_CASE("sanitize_utf8 replaces C0 controls except TAB") {
  CHECK(sanitize_utf8(bytes("a\0b", 3)) == "a" + kFffd + "b");
  CHECK(sanitize_utf8("a\tb") == "a\tb");
  CHECK(sanitize_utf8("a\nb") == "a" + kFffd + "b");
  CHECK(sanitize_utf8("a\rb") == "a" + kFffd + "b");
  CHECK(sanitize_utf8("\x1B[31mred\x1B[0m") == kFffd + "[31mred" + kFffd + "[0m");
  CHECK(sanitize_utf8("\x1F") == kFffd);
  CHECK(sanitize_utf8(" ") == " ");
  // DEL and C1 controls (U+0080..U+009F, well-formed) are kept.
  CHECK(sanitize_utf8("\x7F\xC2\x85") == "\x7F\xC2\x85");
}

TEST_CASE("sanitize_utf8 output is always valid and control-free") {
  uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    for (int k = 0; k < 40; ++k) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      s.push_back(static_cast<char>(x & 0xFF));
    }
    const std::string out = sanitize_utf8(s);
    CAPTURE(s);
    REQUIRE(is_valid_utf8(out));
    for (char c : out) REQUIRE((static_cast<unsigned char>(c) >= 0x20 || c == '\t'));
    // Sanitising is idempotent.
    REQUIRE(sanitize_utf8(out) == out);
  }
}

TEST_CASE("is_clean_text says exactly whether sanitize_utf8 would change the text") {
  // Lines of printable ASCII with one byte of each interesting class (TAB, a
  // control, DEL, a valid 2-, 3- and 4-byte sequence, a cut one, a lone
  // continuation byte) at every position around the 16-byte steps.
  const std::vector<std::string> inserts = {"\t", "\x01", "\x1f", "\x7f", "\xC3\xA9", "\xE2\x82\xAC",
                                            "\xF0\x9F\x98\x80", "\xE2\x82", "\x80", "\xFF", std::string(1, '\0')};
  for (size_t len = 0; len <= 40; ++len) {
    const std::string base(len, 'a');
    CHECK(is_clean_text(base));
    for (const auto& ins : inserts)
      for (size_t at = 0; at <= len; ++at) {
        std::string s = base;
        s.insert(at, ins);
        CAPTURE(s);
        CHECK(is_clean_text(s) == (sanitize_utf8(s) == s));
      }
  }
  // Random bytes, mostly ASCII, at lengths across several 16-byte steps.
  uint64_t x = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < 5000; ++i) {
    std::string s;
    const int n = 1 + i % 70;
    for (int k = 0; k < n; ++k) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      const auto b = static_cast<unsigned char>(x & 0xFF);
      s.push_back(static_cast<char>((x >> 8) % 16 == 0 ? b : 0x20 + b % 0x5F));
    }
    CAPTURE(s);
    CHECK(is_clean_text(s) == (sanitize_utf8(s) == s));
  }
}

TEST_CASE("truncate_utf8") {
  CHECK(truncate_utf8("hello", 5) == "hello");
  CHECK(truncate_utf8("hello", 100) == "hello");
  CHECK(truncate_utf8("", 0) == "");
  CHECK(truncate_utf8("hello world", 8) == "hello" + kEllipsis);
  CHECK(truncate_utf8("hello world", 3) == kEllipsis);
  // Below three bytes the mark does not fit: a plain prefix.
  CHECK(truncate_utf8("hello", 2) == "he");
  CHECK(truncate_utf8("hello", 0) == "");
  // "a€b…": cutting inside the 3-byte euro sign drops it whole.
  const std::string euro = "a\xE2\x82\xAC" "bcdef";  // 9 bytes
  CHECK(truncate_utf8(euro, 5) == "a" + kEllipsis);
  CHECK(truncate_utf8(euro, 6) == "a" + kEllipsis);
  CHECK(truncate_utf8(euro, 7) == "a\xE2\x82\xAC" + kEllipsis);
  CHECK(truncate_utf8(euro, 8) == "a\xE2\x82\xAC" "b" + kEllipsis);
  const std::string emoji = "\xF0\x9F\x98\x80\xF0\x9F\x98\x80";  // two 4-byte sequences
  CHECK(truncate_utf8(emoji, 7) == "\xF0\x9F\x98\x80" + kEllipsis);
  CHECK(truncate_utf8(emoji, 6) == kEllipsis);
  CHECK(truncate_utf8(emoji, 2) == "");
  CHECK(truncate_utf8("\xC3\xA9\xC3\xA9", 1) == "");
  // Every cut of valid text is valid and within the limit.
  const std::string mixed = "x\xC3\xA9y\xE2\x82\xACz\xF0\x9F\x98\x80w";
  for (size_t max = 0; max <= mixed.size() + 1; ++max) {
    const std::string t = truncate_utf8(mixed, max);
    CAPTURE(max);
    CHECK(t.size() <= max);
    CHECK(is_valid_utf8(t));
  }
}

TEST_CASE("split") {
  CHECK(split("a,b,c", ',') == std::vector<std::string_view>{"a", "b", "c"});
  CHECK(split("a,,b", ',') == std::vector<std::string_view>{"a", "", "b"});
  CHECK(split(",a,", ',') == std::vector<std::string_view>{"", "a", ""});
  CHECK(split("", ',') == std::vector<std::string_view>{""});
  CHECK(split("abc", ',') == std::vector<std::string_view>{"abc"});
  CHECK(split("node-01:2231:2260", ':') ==
        std::vector<std::string_view>{"node-01", "2231", "2260"});
  // The pieces are views into the argument.
  const std::string src = "x;y";
  const auto parts = split(src, ';');
  REQUIRE(parts.size() == 2);
  CHECK(parts[1].data() == src.data() + 2);
}

TEST_CASE("trim") {
  CHECK(trim("  a b  ") == "a b");
  CHECK(trim("\t\r\n a\v\f") == "a");
  CHECK(trim("") == "");
  CHECK(trim(" \t\n") == "");
  CHECK(trim("abc") == "abc");
  CHECK(trim("\xC2\xA0x") == "\xC2\xA0x");  // only ASCII whitespace
  const std::string src = "  mid  ";
  CHECK(trim(src).data() == src.data() + 2);
}

TEST_CASE("glob_kind_match") {
  CHECK(glob_kind_match("*", "gpu.xid"));
  CHECK(glob_kind_match("*", ""));
  CHECK(glob_kind_match("nccl.*", "nccl.x"));
  CHECK(glob_kind_match("nccl.*", "nccl.x.y"));
  CHECK_FALSE(glob_kind_match("nccl.*", "nccl"));
  CHECK_FALSE(glob_kind_match("nccl.*", "nccl."));
  CHECK_FALSE(glob_kind_match("nccl.*", "ncclx.y"));
  CHECK_FALSE(glob_kind_match("nccl.*", "gpu.xid"));
  CHECK(glob_kind_match("gpu.xid", "gpu.xid"));
  CHECK_FALSE(glob_kind_match("gpu.xid", "gpu.xidd"));
  CHECK_FALSE(glob_kind_match("gpu.xid", "gpu"));
  CHECK(glob_kind_match("a.b.*", "a.b.c"));
  CHECK_FALSE(glob_kind_match("a.b.*", "a.c.d"));
  // No other wildcard forms.
  CHECK_FALSE(glob_kind_match("nccl*", "nccl.x"));
  CHECK(glob_kind_match("nccl*", "nccl*"));
  CHECK_FALSE(glob_kind_match("*.x", "nccl.x"));
  CHECK_FALSE(glob_kind_match("", "x"));
  CHECK(glob_kind_match("", ""));
}

TEST_CASE("count_newlines counts every '\\n' and spots non-ASCII bytes, at any length and position") {
  using culprit::count_newlines;
  CHECK(count_newlines("") == 0);
  CHECK(count_newlines("\n") == 1);
  CHECK(count_newlines("a\nb\n\nc") == 3);
  // Lengths around the vector widths (16, 32, 64 bytes) and their tails; a
  // newline and a high byte at every position of each.
  for (size_t n = 1; n <= 200; ++n) {
    for (size_t pos = 0; pos < n; pos += (n > 70 ? 7 : 1)) {
      std::string s(n, 'x');
      s[pos] = '\n';
      if (pos + 3 < n) s[pos + 3] = '\n';
      CAPTURE(n);
      CAPTURE(pos);
      bool high = false;
      CHECK(count_newlines(s, &high) == static_cast<size_t>(std::count(s.begin(), s.end(), '\n')));
      CHECK_FALSE(high);
      s[pos] = '\x80';
      high = false;
      CHECK(count_newlines(s, &high) == static_cast<size_t>(std::count(s.begin(), s.end(), '\n')));
      CHECK(high);
    }
  }
  // The flag is only ever raised: a later ASCII call leaves it set.
  bool high = true;
  CHECK(count_newlines("abc\n", &high) == 1);
  CHECK(high);
}

TEST_CASE("count_newlines does not wrap its per-byte counters on long runs of newlines") {
  using culprit::count_newlines;
  // Byte-wide counters hold 255; they must be flushed before that, however
  // dense the newlines.
  for (size_t n : {size_t{255 * 16}, size_t{255 * 64 + 5}, size_t{1 << 20}, size_t{(1 << 20) + 63}}) {
    CAPTURE(n);
    CHECK(count_newlines(std::string(n, '\n')) == n);
    std::string mixed(n, '\n');
    for (size_t i = 0; i < n; i += 3) mixed[i] = 'y';
    CHECK(count_newlines(mixed) == static_cast<size_t>(std::count(mixed.begin(), mixed.end(), '\n')));
  }
}

TEST_CASE("append_utf8: one to four bytes, at each length's bounds") {
  std::string s;
  for (uint32_t cp : {0x0u, 0x41u, 0x7Fu, 0x80u, 0x7FFu, 0x800u, 0xE9u, 0x2026u, 0xFFFFu, 0x10000u, 0x1F600u, 0x10FFFFu})
    culprit::append_utf8(s, cp);
  CHECK(s == std::string("\x00" "A" "\x7F" "\xC2\x80" "\xDF\xBF" "\xE0\xA0\x80" "\xC3\xA9" "\xE2\x80\xA6"
                         "\xEF\xBF\xBF" "\xF0\x90\x80\x80" "\xF0\x9F\x98\x80" "\xF4\x8F\xBF\xBF",
                         1 + 1 + 1 + 2 + 2 + 3 + 2 + 3 + 3 + 4 + 4 + 4));
  CHECK(culprit::is_valid_utf8(s));
}

TEST_CASE("escape_for_terminal makes every control character visible") {
  using culprit::escape_for_terminal;
  // Clean text, backslashes and multi-byte characters included, is unchanged.
  CHECK(escape_for_terminal("") == "");
  CHECK(escape_for_terminal("node-01 caf\xC3\xA9 \xE2\x80\xA6 a\\b") == "node-01 caf\xC3\xA9 \xE2\x80\xA6 a\\b");
  // The repro of issue 38: an OSC title sequence and a forged line in a workload id.
  CHECK(escape_for_terminal("60101\x1b]0;PWNED\x07\nFAKE line") == "60101\\x1b]0;PWNED\\x07\\nFAKE line");
  CHECK(escape_for_terminal("a\tb\rc\nd") == "a\\tb\\rc\\nd");
  CHECK(escape_for_terminal(bytes("\0", 1)) == "\\x00");
  CHECK(escape_for_terminal("\x1f\x7f") == "\\x1f\\x7f");
  CHECK(escape_for_terminal("\x1b[2J\x1b]52;c;SGVsbG8=\x07") == "\\x1b[2J\\x1b]52;c;SGVsbG8=\\x07");
  // C1 controls: encoded in UTF-8 (U+009B is CSI) and as raw 8-bit bytes.
  CHECK(escape_for_terminal("\xC2\x9B" "31m") == "\\u009b31m");
  CHECK(escape_for_terminal("\xC2\x80\xC2\x9F\xC2\xA0") == "\\u0080\\u009f\xC2\xA0");  // U+00A0 is not a control
  CHECK(escape_for_terminal("\x9B" "2J") == "\\x9b2J");
  // Ill-formed UTF-8: each byte of the ill-formed subpart is shown.
  CHECK(escape_for_terminal("a\xFF" "b") == "a\\xffb");
  CHECK(escape_for_terminal("\xE2\x82") == "\\xe2\\x82");
  // Nothing the result holds is a control byte.
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  for (unsigned char c : escape_for_terminal(all)) CHECK((c >= 0x20 && c != 0x7F && !(c >= 0x80 && c <= 0x9F)));
}

TEST_CASE("rank_gaps: the ranks a list leaves out below its largest") {
  CHECK(culprit::rank_gaps("5, 6, 3, 1, 4, 0") == std::optional<std::string>("2"));
  CHECK(culprit::rank_gaps("21, 25, 4, 0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17, 18, 19, 20, 22, 23, 24") ==
        std::optional<std::string>("16"));
  CHECK(culprit::rank_gaps("7") == std::optional<std::string>("0, 1, 2, 3, 4, 5, 6"));
  CHECK(culprit::rank_gaps("0,1,2") == std::optional<std::string>(""));
  CHECK(culprit::rank_gaps("2, 2, 0") == std::optional<std::string>("1"));  // a repeat is one rank
  CHECK_FALSE(culprit::rank_gaps(""));
  CHECK_FALSE(culprit::rank_gaps(" , "));
  CHECK_FALSE(culprit::rank_gaps("1, x"));
  CHECK_FALSE(culprit::rank_gaps("-1, 2"));
  CHECK_FALSE(culprit::rank_gaps("10000001"));  // not a rank: the gaps would be ten million ranks
  CHECK(culprit::rank_gaps("10000000")->size() > 0);
}
