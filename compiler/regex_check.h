// Regex admission: a pattern is usable only if both engines accept it.
//
// Extractor patterns are scanned by Hyperscan (to find candidate lines in one
// pass) and then matched by RE2 (to take captures), so each must compile in
// both. This module compiles a pattern in each engine, translates the named
// group spelling RE2 needs, and lists the capture names in group order.
// Safe to call from any thread; the only state is the optional verdict cache.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace culprit {

struct RegexCheck {
  bool ok = false;
  // A pattern over a limit (base/limits.h) is refused before either engine
  // sees it: longer than kRegexBytes (E0706), or counted repeats {n,m}
  // whose bounds add up (nested ones multiplied) to more than kRegexRepeat
  // (E0707); Hyperscan's compile time grows with them (a single
  // [a-z]{1,30000} takes minutes). Then RE2 runs first and Hyperscan only if
  // RE2 accepted: RE2 refuses quickly what it cannot handle.
  std::string limit_code;                 // "E0706" / "E0707", empty when within limits
  std::string limit_error;
  std::string hyperscan_error;            // empty if Hyperscan accepted it
  std::string re2_error;                  // empty if RE2 accepted it
  // Where in `pattern` (bytes) the engines point: RE2's offending fragment
  // (its error argument), Hyperscan's "at index N". -1 when not known.
  int64_t re2_error_offset = -1, re2_error_length = 0;
  int64_t hyperscan_error_offset = -1;
  std::string re2_pattern;                // `(?<n>` rewritten as `(?P<n>`
  std::vector<std::string> capture_names; // by group number - 1; "" for unnamed groups
};

// `scanned`: the pattern is also compiled into a Hyperscan database (an
// extractor's `match`), so Hyperscan must accept it too. A `matches` regex
// runs on RE2 only: it is not given to Hyperscan (hyperscan_error stays
// empty), which on a cold start saved a Hyperscan compile per such regex.
RegexCheck check_regex(const std::string& pattern, bool caseless, bool dotall, bool scanned = true);

// Hyperscan's version and the build IDs of the loaded Hyperscan and RE2
// libraries (base/build_id.h): what judges a regex, for the keys of caches
// that keep such judgements (catalog images, self-test records).
std::string regex_engines_identity();

// Asks Hyperscan about patterns ahead of time, for the side effect: the
// acceptances it gives are remembered (in the process, and in the verdict
// cache when set), so that the later check_regex of each answers without
// compiling. Saves time only: every verdict is the same with or without it.
// A cold start's analysis was mostly one Hyperscan compile per regex (a few
// milliseconds each), one after another; a RegexPrecheck makes them on
// other threads while the caller goes on (parsing the next rule file), and
// on every core once the caller has nothing else to do.
struct RegexToCheck {
  std::string pattern;
  bool caseless = false, dotall = false;
  bool scanned = true;  // as check_regex's: false patterns need no Hyperscan compile, so none is made
};

// One thread owns a RegexPrecheck: it adds, finishes or cancels; the
// checks themselves run on the threads the object starts.
class RegexPrecheck {
 public:
  // Up to `threads` threads in all: threads - 1 in the background, started
  // by the first add() that queues a pattern, and the caller's own in finish().
  explicit RegexPrecheck(unsigned threads);
  RegexPrecheck(const RegexPrecheck&) = delete;
  RegexPrecheck& operator=(const RegexPrecheck&) = delete;
  ~RegexPrecheck();  // finish()

  // Queues patterns; those Hyperscan has accepted before are dropped here.
  void add(const std::vector<RegexToCheck>& patterns);
  // Checks what is still queued on this thread too, and returns when every
  // queued pattern has been checked and the background threads have ended.
  void finish();
  // Drops what is still queued (the result is not needed, e.g. the parse
  // failed), then finish().
  void cancel();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The counted repeats of `pattern`: the sum of their bounds ({n} and {n,}
// count n, {n,m} counts m), each multiplied by the bounds of the repeated
// groups around it. Escapes and character classes are skipped.
uint64_t regex_repeat_weight(const std::string& pattern);

// Checking a pattern with Hyperscan means compiling it, a few milliseconds
// each: most of a warm start. With a verdict cache set (by the CLI, once at
// startup), acceptances are remembered in that directory (compiler/jit/cache.h),
// keyed by the Hyperscan version, the host platform, the pattern and its
// flags, and later processes skip the compile for them. Rejections are never
// cached (their messages are recomputed). A missing or corrupt cache only
// means compiling again. "" turns it off (the default). Thread-safe.
void set_regex_verdict_cache(const std::string& dir);

// Hyperscan flags the scanner uses for a pattern, so the check and the scan
// compile the same thing.
unsigned hyperscan_flags(bool caseless, bool dotall);

// Copies regex `p`, offering each position outside escapes and character
// classes to `at(i, out)`: it appends its rewrite of what starts there and
// returns the last index it consumed, or npos to have the character copied as
// is. The walk every rewrite of a pattern's syntax shares (Hyperscan's `$`,
// group names, a table column's alternation), so a `[` or `\(` inside a class
// or an escape is never taken for syntax.
template <typename At>
std::string rewrite_outside_classes(const std::string& p, At at) {
  std::string out;
  out.reserve(p.size() + 8);
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      out += c;
      out += p[++i];
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      out += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal member, not the end.
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
      continue;
    }
    size_t last = at(i, out);
    if (last == std::string::npos) out += c;
    else i = last;
  }
  return out;
}

// The pattern Hyperscan compiles for an extractor regex: every end anchor `$`
// (outside character classes) becomes `\r?$`. Hyperscan scans raw buffers,
// where a CRLF line ends "\r\n" and multiline `$` matches only before the
// '\n'; RE2 sees lines with the '\r' removed, so it keeps the pattern as is.
std::string to_hyperscan_syntax(const std::string& pattern);

// `(?<name>` -> `(?P<name>`; leaves look-behind `(?<=`/`(?<!` untouched (RE2
// rejects those anyway, with its own message).
std::string to_re2_syntax(const std::string& pattern);

// `pattern` with its named groups made plain: `(?<name>` and `(?P<name>`
// (outside character classes) become `(`. Group numbers do not change.
std::string without_group_names(const std::string& pattern);

// One `match` clause of an extractor, as written, with its flags.
struct MatchClauseRegex {
  std::string pattern;
  bool caseless = false, dotall = false;
};
// A regex as written and its flags as written after the slash (`i`, `s`).
MatchClauseRegex clause_regex(const std::string& pattern, const std::string& flags);

// An extractor with several `match` clauses is compiled to one pattern, so
// the scanner, the capture matcher and every executor see one regex per
// extractor. The clauses are alternatives in source order, their groups
// unnamed (names may repeat across clauses; the compiler keeps them by group
// number) and numbered clause after clause. Flags the clauses share stay
// flags; otherwise each clause carries its own inline, `(?i:...)`.
struct MatchUnion {
  // What Hyperscan scans for: `(?:A)|(?:B)`, the lines some clause matches.
  std::string pattern;
  // What RE2 takes captures with: `^(?:(?s:.*?)(?:A)|(?s:.*?)(?:B))`.
  // Anchored at the start, each clause behind its own lazy prefix, so that
  // leftmost-first matching tries A at every position before B at all: the
  // first clause in source order that matches anywhere in the line wins,
  // not the clause that matches leftmost.
  std::string re2_pattern;
  bool caseless = false, dotall = false;
};
MatchUnion match_union(const std::vector<MatchClauseRegex>& clauses);

}  // namespace culprit
