// CaptureRegex: the captures of one extractor's regex, taken fast.
//
// RE2 is the reference for what an extractor's regex means (the compiler
// checks every regex with it, `matches` expressions run on it), and it takes
// captures in linear time whatever the line. But capturing is its slow path:
// after its DFA finds the match it runs a backtracker with a fresh bitmap
// over the match, 1-4 us on a 250-byte NCCL or XID line, a quarter of all
// the CPU of a diagnosis with a million events. PCRE2's JIT takes the same
// captures in 50-300 ns.
//
// So a CaptureRegex runs PCRE2 where the regex means the same to both:
//  * the pattern is translated where the two syntaxes differ in meaning
//    (`\s` is [\t\n\f\r ] in RE2 and also VT in PCRE2; `\v` is the VT
//    character in RE2 and a class in PCRE2; `$` is the end of the text);
//  * patterns with constructs whose meaning differs and cannot be
//    translated (`\p` classes, `\Q`, `\S` inside a class, a digit escape,
//    case-insensitive matching of non-ASCII bytes) stay on RE2;
//  * both are leftmost-first ("Perl") engines, so for the regular patterns
//    RE2 accepts they report the same match and the same captures (corner
//    cases such as a group inside a loop that can match empty may still
//    differ: that is what the verify mode below is for);
//  * PCRE2 runs under a match limit: a line that makes it backtrack too
//    much (or any PCRE2 error) is decided by RE2, so the time per line stays
//    bounded on hostile input, and the same line always takes the same path
//    (the verdict stays deterministic).
// Which engine serves each extractor is fixed when the Program is built.
// `culprit test` and `culprit eval --verify-captures` run both on every
// candidate line and fail on any difference (CaptureScratch::verify).
//
// PCRE2 is used nowhere else; this file and its .cpp are its fence.
//
// Thread-safety: a CaptureRegex is immutable and shared by all threads; each
// thread matches with its own CaptureScratch.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>

namespace culprit {

class CaptureScratch;

class CaptureRegex {
 public:
  // `re2` is the extractor's compiled RE2 (it must outlive this object);
  // `pattern`, `caseless` and `dotall` are what it was compiled from.
  // Never fails: a pattern PCRE2 cannot take is matched with RE2.
  CaptureRegex(const re2::RE2& re2, const std::string& pattern, bool caseless, bool dotall);
  ~CaptureRegex();
  CaptureRegex(const CaptureRegex&) = delete;
  CaptureRegex& operator=(const CaptureRegex&) = delete;

  // Whether PCRE2 serves this regex; if not, why (for `check --explain`).
  bool fast() const { return code_ != nullptr; }
  const std::string& why_not_fast() const { return why_not_; }
  int groups() const { return groups_; }

  // Searches `text` (unanchored) as RE2::Match does: on a match, sets
  // `out[0]` to the whole match and `out[i]` to group i (a null data()
  // for a group that did not take part), for i < n (n <= groups() + 1).
  bool match(std::string_view text, CaptureScratch& scratch, re2::StringPiece* out, int n) const;

  // The translated PCRE2 pattern, or "" when PCRE2 does not serve it (tests).
  static std::string translate(std::string_view re2_pattern, bool caseless, std::string& why_not);

 private:
  friend class CaptureScratch;
  const re2::RE2& re2_;
  void* code_ = nullptr;  // pcre2_code_8*, JIT-compiled
  int groups_ = 0;
  std::string why_not_;
};

// Per-thread match state: PCRE2 match data and JIT stack, and counts.
class CaptureScratch {
 public:
  CaptureScratch();
  ~CaptureScratch();
  CaptureScratch(const CaptureScratch&) = delete;
  CaptureScratch& operator=(const CaptureScratch&) = delete;

  // When set, every match also runs RE2 and compares; a difference is
  // counted in `mismatches` (with the first few described in `notes`) and
  // RE2's answer is returned.
  bool verify = false;
  int64_t fast_matches = 0;    // lines decided by PCRE2
  int64_t fallbacks = 0;       // lines PCRE2 gave up on (limit, error): decided by RE2
  int64_t mismatches = 0;      // with `verify`: lines where the two differed
  std::vector<std::string> notes;

 private:
  friend class CaptureRegex;
  void* data_for(const CaptureRegex& re);  // pcre2_match_data_8* big enough for re
  void* data_ = nullptr;
  int data_pairs_ = 0;
  void* context_ = nullptr;    // pcre2_match_context_8*
  void* jit_stack_ = nullptr;  // pcre2_jit_stack_8*
  std::vector<re2::StringPiece> check_;
};

// PCRE2's version ("10.42"), for the verdict's engine block and --version.
std::string pcre2_version();

// Its version and the build ID of the loaded library (base/build_id.h), for
// cache keys.
std::string pcre2_identity();

}  // namespace culprit
