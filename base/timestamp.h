// Time handling for Culprit: recognising the timestamp at the start of a log line, and the
// textual forms of instants and durations used on the command line and in reports.
//
// Conventions shared by everything in this header:
//
//  * An instant is an int64_t count of nanoseconds since 1970-01-01T00:00:00Z (Unix epoch,
//    UTC, no leap seconds). The representable range is therefore about 1677-09-21 to
//    2262-04-11; text outside that range is rejected, never wrapped.
//  * A duration is an int64_t count of nanoseconds.
//  * A log time written without a zone (syslog, dmesg -T, glog, Fabric Manager, Slurm, Python
//    logging, ISO 8601 without offset) is taken as UTC. Hosts in a training cluster normally
//    log in UTC, and guessing a local zone would be worse than being consistently off.
//  * Second 60 (leap second) is rejected, like Unix time itself cannot represent it.
//
// Thread-safety: every function is pure (no global state, no locale, no time zone database),
// so all of them may be called concurrently from any number of threads. No function throws: all
// are noexcept, so an allocation failure in the two formatting functions ends the process
// (std::terminate) rather than surfacing as an exception.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace culprit {

// What the parser knows about the calendar year of the job, used for log formats that do not
// write the year (syslog "Nov 30 01:02:03", glog "E1130 02:07:08"). Build it with
// make_year_hint(); the fields are public so tests and callers can state one directly.
struct YearHint {
  int year_start = 1970;  // year of window_start_ns (or the fallback year without a window)
  int year_end = 1970;    // year of window_end_ns (or the fallback year without a window)
  int64_t window_start_ns = 0;  // the workload window; meaningful only when has_window
  int64_t window_end_ns = 0;
  bool has_window = false;
};

// Builds the hint from the workload window.
//  * Both ends known: the window is [start, end] (the ends are swapped if given reversed).
//  * One end known: the window is the single instant [x, x], so a year-less time is placed in
//    the year that puts it nearest to the one known end. (An open-ended window would put every
//    later year at distance 0 and could not tell "a day before the start" from "a year later".)
//  * Neither: no window, and year_start == year_end == fallback_year.
YearHint make_year_hint(std::optional<int64_t> window_start_ns,
                        std::optional<int64_t> window_end_ns, int fallback_year) noexcept;

// The time information found at the start of one log line.
struct LineTime {
  bool has_wall = false;  // wall_ns holds the wall-clock instant written on the line
  int64_t wall_ns = 0;
  bool has_boot = false;  // boot_ns holds a dmesg seconds-since-boot stamp "[ 1843.308145]"
  int64_t boot_ns = 0;
  // The stamp wrote its zone (ISO 8601 with 'Z' or an offset): zone_offset_sec is it (local time
  // minus UTC). Lets a caller learn a host's zone from its other logs.
  bool has_zone = false;
  int32_t zone_offset_sec = 0;
  // The wall time came from a `dmesg -T` stamp, which the kernel prints in the host's local time
  // (read as UTC here, like every zone-less stamp; a caller that knows the zone corrects it).
  bool dmesg_local = false;
};

// Finds the timestamp at the start of `line` (after optional spaces/tabs and an optional UTF-8
// byte-order mark). Anything that is not exactly one of the formats below yields an empty
// LineTime (both flags false); in particular out-of-range fields (month 13, hour 24, Feb 30,
// Feb 29 of a common year, second 60), truncated stamps, and a stamp directly followed by a
// further digit are rejected rather than partly used. Text after the stamp is not examined,
// except for the syslog kernel tag described below.
//
// Recognised formats (examples are the start of a line):
//
//   ISO 8601 / RFC 3339      2026-01-01T10:00:00Z
//                            2026-01-01T10:00:00.123456+01:00     2026-01-01T10:00:00-0530
//                            2026-01-01 10:00:00                  2026-01-01 10:00:00,123
//                            2026-01-01 10:00:00.123456789 +0000 UTC   (Go time.String)
//       'T', 't' or one space between date and time; fraction after '.' or ',' with any number
//       of digits (digits past the ninth are ignored); zone 'Z', ±HH:MM or ±HHMM, directly
//       attached or after one space; no zone means UTC.
//   in square brackets       [2026-01-01T10:00:00.000] (Slurm)   [2026-01-01T10:00:00.123Z]
//   syslog (no year)         Nov 30 01:02:03 host ...      Nov  3 01:02:03 host ...
//       optional fraction "01:02:03.123". If the host is followed by the tag "kernel:" and
//       then a dmesg boot stamp ("Nov 30 01:02:03 node-02 kernel: [ 1843.308145] NVRM: ..."),
//       has_boot/boot_ns are set as well as the wall time: such a line is what anchors boot
//       time to wall time. The same applies after an unbracketed ISO stamp (rsyslog's ISO
//       format). A line without a host ("Nov 30 01:02:03 kernel: [...]") also qualifies.
//   dmesg -T                 [Sun Feb 23 16:24:18 2025] ...   [Mon Mar  3 01:02:03 2025] ...
//       the weekday must be an English abbreviation but is not checked against the date.
//   dmesg boot stamp         [ 1843.308145] ...   [1843.308145] ...   <4>[ 1843.308145] ...
//       sets has_boot only. A "<N>" printk level prefix (1 to 3 digits) is skipped before any
//       format, not only this one.
//   glog / PyTorch c10d      [E1130 02:07:08.408271257 ProcessGroupNCCL.cpp:1234] ...
//                            [E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] ...
//                            E1130 02:07:08.408271 12345 file.cc:12] ...
//       level letter I, W, E or F; month and day; time with an optional fraction. No year.
//       The month has two digits (glog pads it) or, from PyTorch's c10 logger, one digit for
//       January to September ("E626" is June 26, "W101" January 1); the day always has two.
//   NVIDIA Fabric Manager    [Jul 23 2024 07:53:55] [ERROR] [tid 841] ...
//
// torchrun's per-rank prefixes are skipped (at most two, written directly one after the other):
// "[rank3]:[E1130 02:07:08.408271257 ...]" and "[default0]:[rank3]:[E1130 ...]" carry the glog
// time. The prefix is a bracketed name made of letters then digits, then ':'; what follows it
// is parsed without skipping spaces, so "[rank0]: text" has no timestamp. After them, a logger's
// bracketed tag of letters and one space is skipped when an ISO stamp follows: torchtitan's
// "[rank0]:[titan] 2026-11-30 10:33:40,404 - root - INFO - step: 905 ...", "[INFO] 2026-...".
//
// Year inference (syslog, glog): among the years hint.year_start-1 .. hint.year_end+1, the one
// whose instant is nearest to [window_start_ns, window_end_ns] (distance 0 inside it) is used;
// on a tie the earliest year wins. Years where the date does not exist (Feb 29) are skipped; if
// none remains the line has no wall time. Without a window, hint.year_start is used as is.
//
// Cost: O(1) for nearly every line (dispatch on the first bytes); never allocates, never reads
// outside `line`, whatever its content or length.
LineTime parse_line_time(std::string_view line, const YearHint& hint) noexcept;

// Parses a complete RFC 3339 date-time, e.g. "2026-01-01T10:00:00Z" or
// "2026-01-01T10:00:00.5-05:30". The whole string must match (no surrounding spaces). Strict
// where the format is: the zone ('Z', 'z' or ±HH:MM) is required and the fraction separator is
// '.'. Accepted per RFC 3339 §5.6: 't' or a single space instead of 'T'; any number of fraction
// digits (past the ninth ignored). nullopt if malformed, invalid or outside the int64 range.
std::optional<int64_t> parse_rfc3339(std::string_view s) noexcept;

// Why `s` is not an RFC 3339 time, as a hint for an error message: when it
// is one but for its zone ("2026-05-11T00:00:00"), "it has no zone: add Z
// for UTC (2026-05-11T00:00:00Z) or an offset such as +02:00"; otherwise ""
// (say what the format is). The most common mistake, and the one a reader
// cannot guess: a zone-less time would silently mean a different instant
// on every host.
std::string rfc3339_hint(std::string_view s);

// Formats an instant as RFC 3339 in UTC: "2026-01-01T10:00:00Z", or with the fraction of a
// second trimmed of trailing zeros: "2026-01-01T10:00:00.1234Z". Valid for every int64_t;
// parse_rfc3339(format_rfc3339(x)) == x.
std::string format_rfc3339(int64_t ns) noexcept;

// The same text written to `out`, which has room for kRfc3339MaxBytes; returns its length.
// For writers of many times (a verdict's evidence), which need no string per time.
inline constexpr size_t kRfc3339MaxBytes = 32;
size_t format_rfc3339_to(int64_t ns, char* out) noexcept;

// Parses a duration as written on the command line and in rules: one or more <integer><unit>
// groups, units in strictly decreasing order, no spaces: "30s", "500ms", "3m", "1h", "2d",
// "10us", "5ns", "1m30s", "1h0m5s". Units: d (86400 s), h, m, s, ms, us, ns. An optional
// leading '-' or '+' applies to the whole duration. A unit is required ("0" is rejected), and
// fractions ("1.5h") are not accepted. nullopt on malformed text or int64 overflow.
std::optional<int64_t> parse_duration(std::string_view s) noexcept;

// A duration read from a configuration, a policy or a command-line option: parse_duration's
// syntax, and a magnitude of at most limits::kMaxDurationNs (3650 days) so that an instant
// moved by it stays far inside int64 nanoseconds. `range` is returned for well-formed text
// that is too large, int64 overflow included ("99999999999999999999d"), so that callers can
// say which of the two is wrong; `out` is set only on `ok`.
enum class DurationCheck { ok, syntax, range };
DurationCheck parse_bounded_duration(std::string_view s, int64_t& out) noexcept;
// The message for a DurationCheck that is not `ok`, naming `what` (an option or a key):
// "'lookback' is out of range: at most 3650d" / "'lookback' must be a duration such as 90s,
// 10m or 24h".
std::string duration_error(DurationCheck c, std::string_view what);

// Formats a duration in the compact form parse_duration reads: each non-zero unit from days
// down to nanoseconds, e.g. "30s", "1m30s", "500ms", "1d2h", "-1s500ms"; zero is "0s".
// Valid for every int64_t; parse_duration(format_duration(x)) == x.
std::string format_duration(int64_t ns) noexcept;

}  // namespace culprit
