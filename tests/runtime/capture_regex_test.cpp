// CaptureRegex: PCRE2 takes the captures only where it means what RE2 means.
//
// The translation and the eligibility rules on their own; the semantic
// differences they exist for (\s and VT, \v, $ before a final newline,
// unset and empty groups); the match-limit fallback to RE2; and the bundled
// catalog: every extractor's test lines, and many mutations of them, must
// give the same match and the same captures with PCRE2 as with RE2.
#include "runtime/capture_regex.h"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "compiler/catalog_loader.h"

using namespace culprit;

namespace {

RE2::Options latin1(bool caseless = false) {
  RE2::Options o;
  o.set_log_errors(false);
  o.set_encoding(RE2::Options::EncodingLatin1);
  o.set_case_sensitive(!caseless);
  return o;
}

// Matches `text` with both engines; CHECKs that they agree (match and every
// group) and returns whether it matched.
bool agree(const CaptureRegex& c, const RE2& re, const std::string& text, CaptureScratch& scratch) {
  const int n = re.NumberOfCapturingGroups() + 1;
  std::vector<re2::StringPiece> fast(static_cast<size_t>(n)), slow(static_cast<size_t>(n));
  const bool a = c.match(text, scratch, fast.data(), n);
  const bool b = re.Match(re2::StringPiece(text), 0, text.size(), RE2::UNANCHORED, slow.data(), n);
  CAPTURE(re.pattern());
  CAPTURE(text);
  CHECK(a == b);
  if (a && b)
    for (int i = 0; i < n; ++i) {
      CAPTURE(i);
      CHECK((fast[static_cast<size_t>(i)].data() == nullptr) == (slow[static_cast<size_t>(i)].data() == nullptr));
      if (slow[static_cast<size_t>(i)].data()) {
        CHECK(fast[static_cast<size_t>(i)].data() == slow[static_cast<size_t>(i)].data());
        CHECK(fast[static_cast<size_t>(i)].size() == slow[static_cast<size_t>(i)].size());
      }
    }
  return b;
}

}  // namespace

TEST_CASE("CaptureRegex::translate: RE2 spellings whose PCRE2 meaning differs") {
  std::string why;
  CHECK(CaptureRegex::translate("a\\sb", false, why) == "a[\\t\\n\\f\\r ]b");
  CHECK(CaptureRegex::translate("[^\\s<]+", false, why) == "[^\\t\\n\\f\\r <]+");
  CHECK(CaptureRegex::translate("x\\Sy", false, why) == "x[^\\t\\n\\f\\r ]y");
  CHECK(CaptureRegex::translate("\\v", false, why) == "\\x0b");
  CHECK(CaptureRegex::translate("(?P<n>\\d+)\\.\\w\\b", false, why) == "(?P<n>\\d+)\\.\\w\\b");
  CHECK(CaptureRegex::translate("[]\\s]", false, why) == "[]\\t\\n\\f\\r ]");             // ']' first is a literal
  CHECK(CaptureRegex::translate("[[:alpha:]\\s]+", false, why) == "[[:alpha:]\\t\\n\\f\\r ]+");
  CHECK(CaptureRegex::translate("caf\xc3\xa9", false, why) == "caf\xc3\xa9");            // bytes, case-sensitive
  // What stays on RE2, with the reason.
  for (const char* p : {"\\pL", "\\p{Greek}", "\\PN", "\\Qa.b\\E", "[\\S]", "(a)\\1", "\\8", "[a"}) {
    why.clear();
    CAPTURE(p);
    CHECK(CaptureRegex::translate(p, false, why).empty());
    CHECK(!why.empty());
  }
  why.clear();
  CHECK(CaptureRegex::translate("caf\xc3\xa9", true, why).empty());
  CHECK(why == "case-insensitive with non-ASCII bytes");
  why.clear();
  CHECK(CaptureRegex::translate("(?i)caf\xc3\xa9", false, why).empty());
  CHECK(CaptureRegex::translate("(?i)cafe", false, why) == "(?i)cafe");  // ASCII folds the same in both
}

TEST_CASE("CaptureRegex: the semantics the translation keeps") {
  CaptureScratch scratch;
  struct Case {
    const char* pattern;
    std::vector<std::string> texts;
  };
  const std::vector<Case> cases = {
      {"a\\sb", {"a b", "a\tb", std::string("a\x0b") + "b", "a\rb", "ab"}},       // VT is not \s in RE2
      {"a\\Sb", {"a b", std::string("a\x0b") + "b", "axb"}},
      {"x\\vy", {std::string("x\x0b") + "y", "x\ny", "x y"}},
      {"end$", {"the end", "the end\n", "endless"}},                              // $: end of text only
      {"^(?P<a>x)?(?P<b>)y", {"y", "xy", "zy"}},                                   // unset vs empty group
      {"(?P<k>[a-z]+)=(?P<v>\\d*)", {"k=", "key=42 x=1", "=1"}},
      {"(?i)nccl warn (?P<w>\\w+)", {"NCCL WARN Cuda", "nccl warn x", "NCCL  WARN x"}},
      {"(?:foo|foobar)(?P<rest>.*)", {"foobarbaz"}},                                // leftmost-first, not longest
      {"(?P<d>\\d+?)(?P<e>\\d*)", {"12345"}},                                      // lazy
      {"\\bword\\b", {"a word.", "swordfish", std::string("caf\xe9word")}},        // \b: ASCII word chars only
      {"[^\\x00-\\x7f]+", {std::string("ab\xe9\xff"), "ascii"}},                   // bytes above 0x7f
  };
  for (const auto& c : cases) {
    RE2 re(c.pattern, latin1());
    REQUIRE(re.ok());
    CaptureRegex cr(re, c.pattern, false, false);
    CAPTURE(c.pattern);
    CHECK(cr.fast());
    for (const auto& t : c.texts) agree(cr, re, t, scratch);
  }
  CHECK(scratch.fallbacks == 0);
}

TEST_CASE("CaptureRegex: a line that makes PCRE2 backtrack too long is decided by RE2") {
  // Nested quantifiers: exponential backtracking for PCRE2 on a line of
  // x's that does not end where the pattern must, linear for RE2.
  const char* pattern = "(?P<g>(?:x+x+)+)$";
  RE2 re(pattern, latin1());
  REQUIRE(re.ok());
  CaptureRegex cr(re, pattern, false, false);
  REQUIRE(cr.fast());
  CaptureScratch scratch;
  const std::string hostile = std::string(40, 'x') + "!";
  CHECK_FALSE(agree(cr, re, hostile, scratch));
  CHECK(scratch.fallbacks == 1);
  CHECK(agree(cr, re, std::string(20, 'x'), scratch));  // an ordinary line still goes the fast way
  CHECK(scratch.fallbacks == 1);
}

TEST_CASE("CaptureRegex: with verify, both engines run and agree on a line where \\s and VT differ") {
  const char* pattern = "(?P<a>\\w+)\\s(?P<b>\\w+)";
  RE2 re(pattern, latin1());
  CaptureRegex cr(re, pattern, false, false);
  CaptureScratch scratch;
  scratch.verify = true;
  std::vector<re2::StringPiece> g(3);
  const std::string line = "left\x0bright left right";
  CHECK(cr.match(line, scratch, g.data(), 3));
  CHECK(std::string(g[1].data(), g[1].size()) == "right");  // VT is not \s: the match starts later
  CHECK(scratch.mismatches == 0);
  CHECK(scratch.fast_matches == 1);
}

TEST_CASE("CaptureRegex: the bundled catalog's extractors agree with RE2 on their test lines and mutations of them") {
  auto loaded = load_catalog({CULPRIT_STDLIB_FOR_TESTS});
  INFO(loaded.diagnostics.render());
  REQUIRE(loaded.ok());
  const auto& cat = *loaded.catalog;
  std::mt19937 rng(11);
  CaptureScratch scratch;
  size_t fast = 0, lines = 0, matched = 0;
  const std::string alphabet = "0123456789abcdefxyzXYZ :,.()[]<>=/_-\t\x0b\xe9";
  for (const auto& x : cat.extractors) {
    RE2 re(x.re2_pattern, latin1(x.caseless));
    REQUIRE(re.ok());
    CaptureRegex cr(re, x.re2_pattern, x.caseless, x.dotall);
    fast += cr.fast();
    for (const auto& t : x.tests) {
      std::vector<std::string> variants = {t.line, t.line + " ", " " + t.line, t.line + t.line};
      for (int k = 0; k < 40; ++k) {
        std::string v = t.line;
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits && !v.empty(); ++e) {
          const size_t at = rng() % v.size();
          switch (rng() % 4) {
            case 0: v[at] = alphabet[rng() % alphabet.size()]; break;   // substitute
            case 1: v.erase(at, 1 + rng() % 8); break;                    // delete a run
            case 2: v.insert(at, v.substr(at, 1 + rng() % 12)); break;    // repeat a run
            default: v.insert(at, 1, alphabet[rng() % alphabet.size()]);  // insert
          }
        }
        variants.push_back(v);
      }
      for (const auto& v : variants) {
        ++lines;
        matched += agree(cr, re, v, scratch);
      }
    }
  }
  MESSAGE(fast << " of " << cat.extractors.size() << " extractors take captures with PCRE2; " << lines << " lines, " << matched
                << " matched");
  CHECK(fast * 10 >= cat.extractors.size() * 9);  // nearly all: a regression here is a slow scan
  CHECK(matched * 4 >= lines);                    // the mutations keep many lines matching
  CHECK(scratch.fallbacks == 0);
}
