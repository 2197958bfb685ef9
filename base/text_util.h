// Small text helpers shared by the runtime: UTF-8 validation and repair for evidence text that
// ends up in reports and JSON, splitting/trimming, and matching of event-kind patterns.
//
// Ownership: functions returning std::string_view (or vectors of them) return views into the
// argument; they stay valid only as long as the caller's storage does. Functions returning
// std::string return an independent copy.
// Thread-safety: all functions are pure and may be called concurrently.
// Errors: no function throws. All are noexcept; for those that allocate, an allocation failure
// ends the process (std::terminate) instead of surfacing as an exception.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace culprit {

// True if `s` is well-formed UTF-8 (Unicode §3.9): overlong forms, UTF-16 surrogates
// (U+D800..U+DFFF), code points above U+10FFFF and truncated sequences are rejected. Control
// characters, including NUL, are well-formed.
bool is_valid_utf8(std::string_view s) noexcept;

// Length of the well-formed UTF-8 sequence starting at s[i] (1 to 4; 1 for an ASCII byte),
// or minus the length of its maximal ill-formed subpart (at least one byte). i < s.size().
int utf8_sequence_length(std::string_view s, size_t i) noexcept;

// Length of the longest prefix of `s` made of ASCII bytes (< 0x80); equal to
// s.size() for pure ASCII text. Word-at-a-time: cheap enough for every buffer.
size_t ascii_prefix_length(std::string_view s) noexcept;

// Number of '\n' bytes in `s`. When `non_ascii` is given, *non_ascii is set to true if `s`
// holds a byte >= 0x80 (and left as it was otherwise), so one pass over a buffer gives both
// its line count and whether it needs a UTF-8 check. Vectorized (AVX2 where the CPU has it,
// else SSE2): this runs over every byte of every log.
size_t count_newlines(std::string_view s, bool* non_ascii = nullptr) noexcept;

// A copy of `s` that is valid UTF-8 and free of control characters, so it can be printed and
// put in a JSON string as is:
//  * each maximal ill-formed subsequence becomes one U+FFFD (the Unicode "maximal subpart"
//    practice, the same as Python's bytes.decode("utf-8", "replace")): "\xE2\x82" (a cut
//    3-byte sequence) gives one U+FFFD, "\xC0\x80" (overlong) gives two;
//  * every C0 control (U+0000..U+001F) except TAB becomes U+FFFD — that includes LF and CR,
//    so callers strip line terminators first. DEL and C1 controls are kept.
// When `s` needs no change the result equals `s` byte for byte.
std::string sanitize_utf8(std::string_view s) noexcept;

// Whether sanitize_utf8(s) would return `s` unchanged: valid UTF-8 without C0 controls other
// than TAB. Sixteen bytes per step where SSE2 is available; the scanner asks it of every
// matched line, so that a clean line (nearly all) is copied once, not twice.
bool is_clean_text(std::string_view s) noexcept;

// A copy of `s` that is safe to print on a terminal: every C0 control (U+0000..U+001F), DEL
// (U+007F) and C1 control (U+0080..U+009F) becomes a visible escape, so text taken from evidence
// (a workload id, a log line, a node or file name) can neither move the cursor, set the window
// title, write the clipboard (OSC 52) nor forge a line of its own:
//  * TAB, LF and CR become "\t", "\n" and "\r";
//  * other C0 controls and DEL become "\x" and two lowercase hex digits ("\x1b", "\x7f");
//  * C1 controls, well-formed (two UTF-8 bytes) or not, become "\u0080".."\u009f";
//  * each byte of ill-formed UTF-8 becomes "\x" and its two hex digits ("\xff"), so a
//    terminal in an 8-bit mode never sees a raw 0x9B (CSI) either.
// Well-formed UTF-8 text without controls, backslashes included, is returned byte for byte.
// Only text from input goes through it: the colour escapes the program writes itself are
// added around the escaped text. JSON output has its own escaping and does not use it.
std::string escape_for_terminal(std::string_view s) noexcept;

// Appends code point `cp` (at most U+10FFFF; the caller has checked it) encoded as UTF-8:
// one to four bytes.
void append_utf8(std::string& out, uint32_t cp);

// `s` cut to at most `max_bytes` bytes in total. If `s` fits it is returned unchanged.
// Otherwise the longest prefix that ends on a UTF-8 sequence boundary and leaves room for
// "…" (U+2026, 3 bytes) is kept and "…" appended, so the result is never longer than
// max_bytes. If max_bytes < 3 there is no room for the mark: the longest whole-sequence prefix
// of at most max_bytes is returned without it. Ill-formed input is cut byte-wise where no
// sequence boundary can be found; the result is then as ill-formed as the input.
std::string truncate_utf8(std::string_view s, size_t max_bytes) noexcept;

// The fields of `s` between occurrences of `sep`: n separators give n+1 fields, empty ones
// included ("a,,b" -> {"a", "", "b"}; "" -> {""}). Views into `s`.
std::vector<std::string_view> split(std::string_view s, char sep) noexcept;

// Whether `needle` occurs in `hay` (an empty needle always does): the same
// answer as hay.find(needle) != npos, by glibc's memmem, which stays fast
// on long texts with frequent first characters ("," in a node list).
bool contains_text(std::string_view hay, std::string_view needle) noexcept;

// `s` without leading and trailing ASCII whitespace (space, \t, \n, \v, \f, \r). View into `s`.
std::string_view trim(std::string_view s) noexcept;

// The ranks a list of ranks leaves out below its largest: for "5, 6, 3, 1,
// 4, 0" (a comma-separated list of non-negative integers, spaces allowed)
// "2"; "" when it leaves none out; nullopt when `list` holds no integer or
// anything but integers, commas and spaces, or a rank over 10^7 (the gaps
// would not be a list of ranks). Ranks are numbered from 0, so every gap is a
// rank that is not in the list (the language's gaps(), docs/language.md).
std::optional<std::string> rank_gaps(std::string_view list);

// Matches an event/symptom kind against a kind pattern of the rule language:
//  * "*" matches every kind;
//  * "family.*" matches every kind strictly under "family." ("nccl.*" matches "nccl.x" and
//    "nccl.x.y", not "nccl", "nccl." or "ncclx.y");
//  * anything else matches only the identical kind (no other wildcard is interpreted).
bool glob_kind_match(std::string_view pattern, std::string_view kind) noexcept;

}  // namespace culprit
