// Expected instants were computed independently with Python's datetime (UTC) and are
// hard-coded, so these tests do not share arithmetic with the code under test.
#include "base/timestamp.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using culprit::format_duration;
using culprit::format_rfc3339;
using culprit::LineTime;
using culprit::make_year_hint;
using culprit::parse_duration;
using culprit::parse_line_time;
using culprit::parse_rfc3339;
using culprit::YearHint;

namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t k2026_01_01T10 = 1767261600000000000;  // 2026-01-01T10:00:00Z

// A hint with no window: year-less formats get this year.
YearHint year_only(int year) { return make_year_hint(std::nullopt, std::nullopt, year); }

const YearHint kNoHint = year_only(2025);

// Parses from a heap buffer of exactly the line's size, so that a read past the end is caught
// by AddressSanitizer instead of landing on std::string's terminating NUL.
LineTime parse_exact(std::string_view line, const YearHint& hint = kNoHint) {
  std::unique_ptr<char[]> buf(new char[line.size() == 0 ? 1 : line.size()]);
  if (!line.empty()) std::memcpy(buf.get(), line.data(), line.size());
  return parse_line_time(std::string_view(buf.get(), line.size()), hint);
}

int64_t wall(std::string_view line, const YearHint& hint = kNoHint) {
  const LineTime t = parse_exact(line, hint);
  REQUIRE_MESSAGE(t.has_wall, "no wall time in: ", std::string(line));
  return t.wall_ns;
}

bool no_time(std::string_view line, const YearHint& hint = kNoHint) {
  const LineTime t = parse_exact(line, hint);
  return !t.has_wall && !t.has_boot;
}

}  // namespace

TEST_CASE("parse_line_time: RFC 3339 / ISO 8601 at the start of the line") {
  CHECK(wall("2026-01-01T10:00:00Z INFO started") == k2026_01_01T10);
  CHECK(wall("2026-01-01T10:00:00.123456+01:00 x") == 1767258000123456000);
  CHECK(wall("2026-01-01T10:00:00.123456789-05:30 x") == 1767281400123456789);
  CHECK(wall("2026-01-01T10:00:00+0100 journalctl short-iso") == 1767258000000000000);
  CHECK(wall("2026-01-01t10:00:00z") == k2026_01_01T10);
  CHECK(wall("2026-01-01T00:00:00+23:59") == 1767139260000000000);
  // No zone: UTC.
  CHECK(wall("2026-01-01T10:00:00 foo") == k2026_01_01T10);
  CHECK(wall("2026-01-01 10:00:00 foo") == k2026_01_01T10);
  CHECK(wall("2026-01-01 10:00:00") == k2026_01_01T10);
  // Python logging puts milliseconds after a comma.
  CHECK(wall("2026-01-01 10:00:00,123 - torch - INFO - x") == 1767261600123000000);
  CHECK(wall("2026-01-01 10:00:00.123 INFO") == 1767261600123000000);
  // util-linux dmesg --time-format iso.
  CHECK(wall("2026-01-01T10:00:00,123456+01:00 kernel") == 1767258000123456000);
  // Go's time.String(): zone after a space.
  CHECK(wall("2026-01-01 10:00:00.5 +0100 CET m=+0.1") == 1767258000500000000);
  CHECK(wall("2026-01-01 10:00:00 -01:30 x") == 1767267000000000000);
  // A separator that is not followed by a digit is not a fraction.
  CHECK(wall("2026-01-01 10:00:00. done") == k2026_01_01T10);
  // The text after the space is not an offset: the stamp stands, as UTC.
  CHECK(wall("2026-01-01 10:00:00 -1 retries") == k2026_01_01T10);
  CHECK(wall("2026-01-01 10:00:00 +99:99 x") == k2026_01_01T10);
  // Calendar edges.
  CHECK(wall("2024-02-29T12:00:00Z") == 1709208000000000000);
  CHECK(wall("2000-02-29T23:59:59.999999999Z") == 951868799999999999);
  CHECK(wall("2100-02-28T23:59:59Z") == 4107542399000000000);
  CHECK(wall("1969-12-31T23:59:59.999999999Z") == -1);
  CHECK(wall("1970-01-01T00:00:00Z") == 0);
}

TEST_CASE("parse_line_time: fractions of 1 to 9 digits, and longer ones truncated") {
  struct Case {
    const char* line;
    int64_t frac;
  };
  const Case cases[] = {
      {"2026-01-01T10:00:00.1Z", 100000000},
      {"2026-01-01T10:00:00.12Z", 120000000},
      {"2026-01-01T10:00:00.123Z", 123000000},
      {"2026-01-01T10:00:00.1234Z", 123400000},
      {"2026-01-01T10:00:00.12345Z", 123450000},
      {"2026-01-01T10:00:00.123456Z", 123456000},
      {"2026-01-01T10:00:00.1234567Z", 123456700},
      {"2026-01-01T10:00:00.12345678Z", 123456780},
      {"2026-01-01T10:00:00.123456789Z", 123456789},
      {"2026-01-01T10:00:00.1234567891234Z", 123456789},
      {"2026-01-01T10:00:00.000000001Z", 1},
      {"2026-01-01 10:00:00,9 x", 900000000},
  };
  for (const Case& c : cases) {
    CAPTURE(c.line);
    CHECK(wall(c.line) == k2026_01_01T10 + c.frac);
  }
}

TEST_CASE("parse_line_time: bracketed ISO and Slurm") {
  CHECK(wall("[2026-01-01T10:00:00.000] error: Node node-01 not responding") == k2026_01_01T10);
  CHECK(wall("[2026-01-01T10:00:00] slurmstepd: error: *** STEP 12.0 CANCELLED") ==
        k2026_01_01T10);
  CHECK(wall("[2026-01-01T10:00:00.123Z] x") == 1767261600123000000);
  CHECK(wall("[2026-01-01T10:00:00.123456+01:00] x") == 1767258000123456000);
  CHECK(wall("[2026-01-01 10:00:00,250] INFO x") == 1767261600250000000);
  CHECK(no_time("[2026-13-01T10:00:00] x"));
  CHECK(no_time("[2026-01-01T10:00] x"));
}

TEST_CASE("parse_line_time: syslog with the year from the hint") {
  CHECK(wall("Nov 30 01:02:03 node-02 kernel: NVRM: loading") == 1764464523000000000);
  CHECK(wall("Nov  3 01:02:03 node-02 systemd[1]: Started x") == 1762131723000000000);
  CHECK(wall("Nov 3 01:02:03 node-02 x") == 1762131723000000000);
  CHECK(wall("Nov 30 01:02:03.250 node-02 x") == 1764464523250000000);
  // The same line is placed in the fallback year when there is no window.
  CHECK(wall("Nov 30 01:02:03 h x", year_only(2024)) == 1764464523000000000 - 365 * 86400 * kSec);
  // No host or message at all still has a time.
  CHECK(wall("Nov 30 01:02:03") == 1764464523000000000);
  CHECK(no_time("Nov 31 01:02:03 h x"));
  CHECK(no_time("Nov 30 24:00:00 h x"));
  CHECK(no_time("Nov 30 01:60:00 h x"));
  CHECK(no_time("Nov 30 01:02:60 h x"));
  CHECK(no_time("nov 30 01:02:03 h x"));
  CHECK(no_time("November 30 01:02:03 h x"));
  CHECK(no_time("Nov 30 1:02:03 h x"));
  CHECK(no_time("Nov 30 01:02:034 h x"));
  CHECK(no_time("Nov 30 01:02"));
  CHECK(no_time("Nov  0 01:02:03 h x"));
  // Feb 29 of the fallback year must exist.
  CHECK(no_time("Feb 29 00:00:00 h x", year_only(2025)));
  CHECK(wall("Feb 29 00:00:00 h x", year_only(2024)) == 1709164800000000000);
}

TEST_CASE("parse_line_time: syslog kernel line anchors boot time to wall time") {
  const LineTime t =
      parse_exact("Nov 30 01:02:03 node-02 kernel: [ 1843.308145] NVRM: Xid (PCI:0000:3b:00): 79");
  CHECK(t.has_wall);
  CHECK(t.wall_ns == 1764464523000000000);
  CHECK(t.has_boot);
  CHECK(t.boot_ns == 1843308145000);

  const LineTime no_host = parse_exact("Nov 30 01:02:03 kernel: [12.5] x");
  CHECK(no_host.has_wall);
  CHECK(no_host.has_boot);
  CHECK(no_host.boot_ns == 12500000000);

  const LineTime iso =
      parse_exact("2026-01-01T10:00:00.5+00:00 node-02 kernel: [    7.000001] NVRM: x");
  CHECK(iso.has_wall);
  CHECK(iso.wall_ns == 1767261600500000000);
  CHECK(iso.has_boot);
  CHECK(iso.boot_ns == 7000001000);

  // Only the kernel tag carries a boot stamp; other tags, or a stamp later in the message, do
  // not.
  const LineTime other = parse_exact("Nov 30 01:02:03 node-02 sshd[12]: [ 1843.308145] x");
  CHECK(other.has_wall);
  CHECK_FALSE(other.has_boot);
  const LineTime later = parse_exact("Nov 30 01:02:03 node-02 kernel: NVRM: [ 1843.308145] x");
  CHECK(later.has_wall);
  CHECK_FALSE(later.has_boot);
  const LineTime kernelish = parse_exact("Nov 30 01:02:03 node-02 kernel:x [ 1.0] y");
  CHECK(kernelish.has_wall);
  CHECK_FALSE(kernelish.has_boot);
  const LineTime broken = parse_exact("Nov 30 01:02:03 node-02 kernel: [ 1843.308145 x");
  CHECK(broken.has_wall);
  CHECK_FALSE(broken.has_boot);
}

TEST_CASE("parse_line_time: year inference across New Year") {
  // Window 2025-12-31T23:00Z .. 2026-01-01T01:00Z.
  const YearHint h = make_year_hint(1767222000000000000, 1767229200000000000, 1999);
  REQUIRE(h.has_window);
  CHECK(h.year_start == 2025);
  CHECK(h.year_end == 2026);
  CHECK(wall("Dec 31 23:30:00 node-01 kernel: x", h) == 1767223800000000000);
  CHECK(wall("Jan  1 00:30:00 node-01 kernel: x", h) == 1767227400000000000);
  CHECK(wall("I0101 00:30:00.000000 1 f.cc:1] x", h) == 1767227400000000000);
  CHECK(wall("I1231 23:30:00.000000 1 f.cc:1] x", h) == 1767223800000000000);
}

TEST_CASE("parse_line_time: year inference picks the nearest year, also outside the window") {
  // Window inside January 2026: "Dec 31" is the day before, in 2025 (year_start - 1).
  const YearHint jan = make_year_hint(1767261600000000000, 1767261600000000000 + 3600 * kSec, 0);
  CHECK(jan.year_start == 2026);
  CHECK(wall("Dec 31 23:30:00 h x", jan) == 1767223800000000000);
  // Window late in December 2025 (2025-12-31T23:00Z..23:30Z): "Jan  1" is in 2026.
  const YearHint dec = make_year_hint(1767222000000000000, 1767223800000000000, 0);
  CHECK(dec.year_end == 2025);
  CHECK(wall("Jan  1 00:30:00 h x", dec) == 1767227400000000000);
  // Mid-year window (2026-06-15T12:00Z ± 0): a date six months away stays in the same year.
  const YearHint mid = make_year_hint(1781524800000000000, std::nullopt, 0);
  CHECK(mid.window_end_ns == 1781524800000000000);
  CHECK(wall("Jan  1 10:00:00 h x", mid) == k2026_01_01T10);
  // A window spanning several years has every year inside it: the earliest wins.
  const YearHint wide = make_year_hint(1749988800000000000 - 365LL * 86400 * kSec,
                                       1781524800000000000 + 180LL * 86400 * kSec, 0);
  CHECK(wide.year_start == 2024);
  CHECK(wide.year_end == 2026);
  CHECK(wall("Jun 15 12:00:00 h x", wide) == 1749988800000000000 - 365LL * 86400 * kSec);
  // Feb 29 only exists in leap years: window in March 2025 -> 2024 (year_start - 1).
  const YearHint mar25 = make_year_hint(1740963723000000000, 1740963723000000000, 0);
  CHECK(wall("Feb 29 00:00:00 h x", mar25) == 1709164800000000000);
  // Window mid-2026: candidates 2025..2027 have no Feb 29.
  CHECK(no_time("Feb 29 00:00:00 h x", mid));
}

TEST_CASE("make_year_hint") {
  const YearHint none = make_year_hint(std::nullopt, std::nullopt, 2031);
  CHECK_FALSE(none.has_window);
  CHECK(none.year_start == 2031);
  CHECK(none.year_end == 2031);

  const YearHint end_only = make_year_hint(std::nullopt, 1767222000000000000, 2031);
  CHECK(end_only.has_window);
  CHECK(end_only.window_start_ns == 1767222000000000000);
  CHECK(end_only.window_end_ns == 1767222000000000000);
  CHECK(end_only.year_start == 2025);
  CHECK(end_only.year_end == 2025);

  const YearHint reversed = make_year_hint(1767229200000000000, 1767222000000000000, 2031);
  CHECK(reversed.window_start_ns == 1767222000000000000);
  CHECK(reversed.window_end_ns == 1767229200000000000);
  CHECK(reversed.year_start == 2025);
  CHECK(reversed.year_end == 2026);

  // Negative instants: 1969-12-31T23:59:59.999999999Z is still 1969.
  const YearHint before_epoch = make_year_hint(-1, 0, 2031);
  CHECK(before_epoch.year_start == 1969);
  CHECK(before_epoch.year_end == 1970);
}

TEST_CASE("parse_line_time: dmesg -T") {
  CHECK(wall("[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:3b:00): 79") == 1740327858000000000);
  CHECK(wall("[Mon Mar  3 01:02:03 2025] x") == 1740963723000000000);
  // The weekday is not checked against the date, only that it is a weekday name.
  CHECK(wall("[Tue Mar  3 01:02:03 2025] x") == 1740963723000000000);
  CHECK(no_time("[Xyz Mar  3 01:02:03 2025] x"));
  CHECK(no_time("[Mon Mar 32 01:02:03 2025] x"));
  CHECK(no_time("[Mon Mar  3 01:02:03 2025 x"));
  CHECK(no_time("[Mon Mar  3 01:02:03] x"));
  CHECK(no_time("[Mon Mar  3 01:02:03 25] x"));
}

TEST_CASE("parse_line_time: dmesg seconds since boot") {
  const LineTime a = parse_exact("[ 1843.308145] NVRM: Xid (PCI:0000:3b:00): 79");
  CHECK_FALSE(a.has_wall);
  CHECK(a.has_boot);
  CHECK(a.boot_ns == 1843308145000);
  const LineTime b = parse_exact("[1843.308145] x");
  CHECK(b.has_boot);
  CHECK(b.boot_ns == 1843308145000);
  const LineTime c = parse_exact("<4>[ 1843.308145] x");
  CHECK(c.has_boot);
  CHECK(c.boot_ns == 1843308145000);
  const LineTime zero = parse_exact("[    0.000000] Linux version 6.1.0");
  CHECK(zero.has_boot);
  CHECK(zero.boot_ns == 0);
  const LineTime fine = parse_exact("[5.123456789] x");
  CHECK(fine.boot_ns == 5123456789);
  CHECK(no_time("[1843] x"));
  CHECK(no_time("[1843.] x"));
  CHECK(no_time("[1843.308145 x"));
  CHECK(no_time("[ .308145] x"));
  CHECK(no_time("[12345678901.0] x"));  // more than ten integer digits
  CHECK(no_time("<4444>[ 1.0] x"));
  CHECK(no_time("<>[ 1.0] x"));
}

TEST_CASE("parse_line_time: glog and PyTorch c10d") {
  CHECK(wall("[E1130 02:07:08.408271257 ProcessGroupNCCL.cpp:1234] [Rank 3] Watchdog") ==
        1764468428408271257);
  CHECK(wall("E1130 02:07:08.408271 12345 file.cc:12] x") == 1764468428408271000);
  CHECK(wall("I1130 02:07:08 12345 file.cc:12] x") == 1764468428000000000);
  CHECK(wall("W1130 02:07:08.4 1 f.cc:1] x") == 1764468428400000000);
  CHECK(wall("F1130 02:07:08.408271257 1 f.cc:1] x") == 1764468428408271257);
  CHECK(no_time("D1130 02:07:08.408271 1 f.cc:1] x"));
  CHECK(no_time("E1330 02:07:08.408271 1 f.cc:1] x"));
  CHECK(no_time("E1131 02:07:08.408271 1 f.cc:1] x"));
  CHECK(no_time("E1130 25:07:08.408271 1 f.cc:1] x"));
  CHECK(no_time("E1130 02:07"));
  CHECK(no_time("E13 02:07:08 x"));
  CHECK(no_time("E11300 02:07:08 x"));
}

// c10/util/Logging.cpp prints (tm_mon + 1) * 100 + tm_mday: no zero before a one-digit month.
TEST_CASE("parse_line_time: c10 prefixes of every month") {
  CHECK(wall("[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught") ==
        1750919084903881913);
  CHECK(wall("[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] x") ==
        1750919084903881913);
  CHECK(wall("[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:1785] x") == 1765046652715298746);
  CHECK(wall("[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:1785] x") ==
        1765046652715298746);
  CHECK(wall("[W101 00:00:01.000000001 ProcessGroupNCCL.cpp:4718] x") == 1735689601000000001);
  CHECK(wall("[rank7]:[W101 00:00:01.000000001 ProcessGroupNCCL.cpp:4718] x") ==
        1735689601000000001);
  CHECK(wall("[default0]:[rank7]:[W101 00:00:01.000000001 x.cpp:1] y") == 1735689601000000001);
  CHECK(wall("[I930 23:59:59.0 x.cpp:1] y") == 1759276799000000000);
  // glog pads the month: the same instant either way.
  CHECK(wall("W0101 00:00:01.000000001 1 f.cc:1] x") == 1735689601000000001);
  CHECK(wall("[E0626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] x") == 1750919084903881913);
  CHECK(no_time("[E631 06:24:44.9 x.cpp:1] June has 30 days"));
  CHECK(no_time("[E001 06:24:44.9 x.cpp:1] month 0"));
  CHECK(no_time("[E1301 06:24:44.9 x.cpp:1] month 13"));
  CHECK(no_time("[E62 06:24:44.9 x.cpp:1] two digits"));
  CHECK(no_time("[rank1]: [E626 06:24:44.903881913 x.cpp:1] space after the prefix"));
  // The year comes from the window: January 1 right after a window that starts on New Year's Eve.
  const YearHint nye = make_year_hint(1767222000000000000, 1767229200000000000, 1970);
  CHECK(parse_exact("[rank0]:[W101 00:30:00.000000000 x.cpp:1] y", nye).wall_ns == 1767227400000000000);
}

TEST_CASE("parse_line_time: torchrun rank prefixes") {
  CHECK(wall("[rank3]:[E1130 02:07:08.408271257 ProcessGroupNCCL.cpp:616] [Rank 3] x") ==
        1764468428408271257);
  CHECK(wall("[default0]:[rank3]:[W1130 02:07:08.408271257 x.cpp:1] y") == 1764468428408271257);
  CHECK(wall("[rank0]:2026-01-01 10:00:00,123 INFO x") == 1767261600123000000);
  CHECK(no_time("[rank0]: Traceback (most recent call last):"));
  CHECK(no_time("[rank0]: [E1130 02:07:08.408271257 x.cpp:1] y"));
  CHECK(no_time("[a0]:[b1]:[c2]:[E1130 02:07:08.408271257 x.cpp:1] y"));
  CHECK(no_time("[rank]:[E1130 02:07:08.408271257 x.cpp:1] y"));
}

TEST_CASE("parse_line_time: a logger's bracketed tag before an ISO stamp (torchtitan)") {
  CHECK(wall("[rank0]:[titan] 2026-01-01 10:00:00,123 - root - INFO - step: 905  loss:  2.8712") == 1767261600123000000);
  CHECK(wall("[titan] 2026-01-01 10:00:00,123 - root - INFO - Training starts at step 1") == 1767261600123000000);
  CHECK(wall("[INFO] 2026-01-01T10:00:00Z x") == 1767261600000000000);
  CHECK(no_time("[titan] step: 905 loss: 2.8712"));
  CHECK(no_time("[titan]  2026-01-01 10:00:00,123 two spaces"));
  CHECK(no_time("[titan2] 2026-01-01 10:00:00,123 a digit in the tag"));
  CHECK(no_time("[titan] [titan] 2026-01-01 10:00:00,123 two tags"));
  CHECK(no_time("[titan] 2026-13-01 10:00:00,123 month 13"));
}

TEST_CASE("parse_line_time: NVIDIA Fabric Manager") {
  CHECK(wall("[Jul 23 2024 07:53:55] [ERROR] [tid 841] Connection lost") == 1721721235000000000);
  CHECK(wall("[Jul 23 2024 07:53:55] [INFO]", year_only(1990)) == 1721721235000000000);
  CHECK(no_time("[Jul 32 2024 07:53:55] [ERROR]"));
  CHECK(no_time("[Jul 23 2024 07:53] [ERROR]"));
  CHECK(no_time("[Jul 23 2024 07:53:55 [ERROR]"));
  CHECK(no_time("[Foo 23 2024 07:53:55] [ERROR]"));
}

TEST_CASE("parse_line_time: leading whitespace and byte-order mark") {
  CHECK(wall("   2026-01-01T10:00:00Z x") == k2026_01_01T10);
  CHECK(wall("\t\t[2026-01-01T10:00:00] x") == k2026_01_01T10);
  CHECK(wall("\xEF\xBB\xBF" "2026-01-01T10:00:00Z x") == k2026_01_01T10);
  CHECK(wall(" Nov 30 01:02:03 h x") == 1764464523000000000);
}

TEST_CASE("parse_line_time: invalid values are rejected whole") {
  const char* bad[] = {
      "2026-13-01T10:00:00Z x",  "2026-00-01T10:00:00Z x",   "2026-02-30T10:00:00Z x",
      "2025-02-29T10:00:00Z x",  "2100-02-29T10:00:00Z x",   "2026-04-31 10:00:00 x",
      "2026-01-00 10:00:00 x",   "2026-01-01T25:00:00Z x",   "2026-01-01T24:00:00Z x",
      "2026-01-01T10:60:00Z x",  "2026-01-01T10:00:60Z x",   "2026-01-01T10:00:00+24:00 x",
      "2026-01-01T10:00:00+01:60 x", "2026-01-01T10:00:00+01:0",  "2026-01-01T10:00:00+1",
      "2026-01-01T10:00:00+01:000", "2026-01-01T10:00:001 x", "2026-01-01X10:00:00 x",
      "2026-01-01T10:00 x",      "2026-1-01T10:00:00 x",     "20260-01-01T10:00:00 x",
      "2026/01/01 10:00:00 x",   "2026-01-01T1a:00:00 x",    "2026-01-01  10:00:00 x",
      "9999-12-31T23:59:59Z x",  "1600-01-01T00:00:00Z x",   "2262-04-11T23:47:16.854775808Z",
  };
  for (const char* line : bad) {
    CAPTURE(line);
    CHECK(no_time(line));
  }
}

TEST_CASE("parse_line_time: lines without a timestamp") {
  const char* lines[] = {
      "",
      "   ",
      "\t",
      "12345 some text",
      "[rank0]: RuntimeError: NCCL error",
      "node-01:2231:2260 [3] NCCL WARN Net/IB : Got completion with error 12",
      "[3] NCCL INFO x",
      "[] x",
      "[",
      "<",
      "<4>",
      "Traceback (most recent call last):",
      "INFO 2026-01-01T10:00:00Z later in the line",
      "torch.distributed.DistBackendError: 2026-01-01 10:00:00",
      "10:00:00 time without a date",
      "2026-01-01 date without a time",
      "Mon Feb 23 16:24:18 2025 (ctime without brackets)",
      "Error: something",
      "[ERROR] something",
      "[E] x",
      "E",
      "Nov",
      "Nov 30",
  };
  for (const char* line : lines) {
    CAPTURE(line);
    CHECK(no_time(line));
  }
}

TEST_CASE("parse_line_time: binary data and NUL bytes") {
  const std::string nul_inside("2026-01-01T10:00:00Z\0rest", 25);
  CHECK(wall(nul_inside) == k2026_01_01T10);
  const std::string nul_in_stamp("2026-01-01T10:00\0:00Z", 21);
  CHECK(no_time(nul_in_stamp));
  CHECK(no_time(std::string("\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 20)));
  CHECK(no_time("\xff\xfe\x00\x01\x80\x90[\x7f"));
  CHECK(no_time("\x80" "2026-01-01T10:00:00Z"));
}

TEST_CASE("parse_line_time: every truncation of a stamp is safe and only complete ones count") {
  struct Case {
    const char* line;
    size_t stamp_len;  // shortest prefix that is a complete stamp
  };
  const Case cases[] = {
      {"2026-01-01T10:00:00.123456+01:00 x", 19},
      {"Nov 30 01:02:03 node-02 kernel: [ 1843.308145] NVRM: x", 15},
      {"[Sun Feb 23 16:24:18 2025] x", 26},
      {"[ 1843.308145] x", 14},
      {"[E1130 02:07:08.408271257 ProcessGroupNCCL.cpp:1234] x", 15},
      {"E1130 02:07:08.408271 12345 file.cc:12] x", 14},
      {"[Jul 23 2024 07:53:55] [ERROR] x", 22},
      {"[2026-01-01T10:00:00.000] x", 20},
      {"<4>[ 1843.308145] x", 17},
  };
  for (const Case& c : cases) {
    const std::string full = c.line;
    for (size_t n = 0; n <= full.size(); ++n) {
      const std::string_view prefix(full.data(), n);
      CAPTURE(prefix);
      const LineTime t = parse_exact(prefix);
      if (n < c.stamp_len) CHECK((!t.has_wall && !t.has_boot));
      if (n == full.size()) CHECK((t.has_wall || t.has_boot));
    }
  }
}

TEST_CASE("parse_line_time: mutated lines never crash and respect the dispatch") {
  const char* seeds[] = {
      "2026-01-01T10:00:00.123456+01:00 x",
      "Nov 30 01:02:03 node-02 kernel: [ 1843.308145] NVRM: x",
      "[Sun Feb 23 16:24:18 2025] x",
      "[E1130 02:07:08.408271257 ProcessGroupNCCL.cpp:1234] x",
      "[Jul 23 2024 07:53:55] [ERROR] x",
      "[rank3]:[E1130 02:07:08.4 x.cpp:1] y",
  };
  const unsigned char replacements[] = {0x00, ' ', '0', '9', ':', '[', ']', '-', '+', 'Z', 0xFF};
  size_t with_time = 0;
  for (const char* seed : seeds) {
    const std::string base = seed;
    for (size_t i = 0; i < base.size(); ++i) {
      for (unsigned char r : replacements) {
        std::string m = base;
        m[i] = static_cast<char>(r);
        const LineTime t = parse_exact(m);
        if (t.has_wall || t.has_boot) {
          ++with_time;
          // Every recognised format starts with one of these bytes (after the skipped prefixes).
          const char first = m[m.find_first_not_of(" \t")];
          CAPTURE(m);
          CHECK((first == '[' || first == '<' || (first >= '0' && first <= '9') ||
                 (first >= 'A' && first <= 'Z')));
        }
      }
    }
  }
  CHECK(with_time > 0);
}

TEST_CASE("parse_line_time: one-megabyte lines") {
  const std::string mb(1 << 20, 'x');
  CHECK(wall("2026-01-01T10:00:00Z " + mb) == k2026_01_01T10);
  CHECK(no_time(mb));
  CHECK(no_time(std::string(1 << 20, '9')));
  CHECK(no_time("[" + std::string(1 << 20, ' ')));
  CHECK(no_time("[" + std::string(1 << 20, '1')));
  CHECK(no_time(std::string(1 << 20, '[')));
  // A huge fraction is consumed, its first nine digits used.
  CHECK(wall("2026-01-01T10:00:00." + std::string(1 << 20, '1') + "Z") ==
        k2026_01_01T10 + 111111111);
  // A host token far longer than any host name: wall time only, no scan for "kernel:".
  const LineTime t = parse_exact("Nov 30 01:02:03 " + mb + " kernel: [ 1.0] x");
  CHECK(t.has_wall);
  CHECK_FALSE(t.has_boot);
}

TEST_CASE("parse_rfc3339: strict whole-string parsing") {
  CHECK(parse_rfc3339("2026-01-01T10:00:00Z") == k2026_01_01T10);
  CHECK(parse_rfc3339("2026-01-01t10:00:00z") == k2026_01_01T10);
  CHECK(parse_rfc3339("2026-01-01 10:00:00Z") == k2026_01_01T10);
  CHECK(parse_rfc3339("2026-01-01T10:00:00.123456+01:00") == 1767258000123456000);
  CHECK(parse_rfc3339("2026-01-01T10:00:00.123456789-05:30") == 1767281400123456789);
  CHECK(parse_rfc3339("2026-01-01T10:00:00.1234567891Z") == 1767261600123456789);
  CHECK(parse_rfc3339("2262-04-11T23:47:16.854775807Z") == std::numeric_limits<int64_t>::max());
  CHECK(parse_rfc3339("1677-09-21T00:12:43.145224192Z") == std::numeric_limits<int64_t>::min());
  CHECK(parse_rfc3339("1969-12-31T23:59:59.999999999Z") == -1);

  const char* bad[] = {
      "",
      "2026-01-01T10:00:00",          // zone required
      "2026-01-01T10:00:00+0100",     // RFC 3339 needs the colon
      "2026-01-01T10:00:00,123Z",     // comma is not RFC 3339
      "2026-01-01T10:00:00Z ",        // trailing text
      " 2026-01-01T10:00:00Z",        // leading text
      "2026-01-01T10:00:00Zx",
      "2026-01-01T10:00:00.Z",
      "2026-01-01T10:00Z",
      "2026-02-29T10:00:00Z",
      "2026-01-01T10:00:60Z",
      "2026-01-01T10:00:00+24:00",
      "2262-04-11T23:47:16.854775808Z",  // one past INT64_MAX
      "1677-09-21T00:12:43.145224191Z",  // one before INT64_MIN
      "0000-01-01T00:00:00Z",
      "9999-12-31T23:59:59Z",
      "[2026-01-01T10:00:00Z]",
      "Nov 30 01:02:03",
  };
  for (const char* s : bad) {
    CAPTURE(s);
    CHECK_FALSE(parse_rfc3339(s).has_value());
  }
}

TEST_CASE("format_rfc3339") {
  CHECK(format_rfc3339(0) == "1970-01-01T00:00:00Z");
  CHECK(format_rfc3339(k2026_01_01T10) == "2026-01-01T10:00:00Z");
  CHECK(format_rfc3339(1767261600123400000) == "2026-01-01T10:00:00.1234Z");
  CHECK(format_rfc3339(1767261600100000000) == "2026-01-01T10:00:00.1Z");
  CHECK(format_rfc3339(1767261600000000001) == "2026-01-01T10:00:00.000000001Z");
  CHECK(format_rfc3339(-1) == "1969-12-31T23:59:59.999999999Z");
  CHECK(format_rfc3339(1234567890123456789) == "2009-02-13T23:31:30.123456789Z");
  CHECK(format_rfc3339(-1234567890123456789) == "1930-11-18T00:28:29.876543211Z");
  CHECK(format_rfc3339(951868799999999999) == "2000-02-29T23:59:59.999999999Z");
  CHECK(format_rfc3339(std::numeric_limits<int64_t>::max()) == "2262-04-11T23:47:16.854775807Z");
  CHECK(format_rfc3339(std::numeric_limits<int64_t>::min()) == "1677-09-21T00:12:43.145224192Z");
}

TEST_CASE("format_rfc3339_to writes format_rfc3339's text, within kRfc3339MaxBytes") {
  for (int64_t ns : {int64_t{0}, int64_t{-1}, int64_t{1767261600123400000}, int64_t{1234567890123456789},
                     std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}) {
    CAPTURE(ns);
    char buf[culprit::kRfc3339MaxBytes];
    const size_t n = culprit::format_rfc3339_to(ns, buf);
    CHECK(n <= culprit::kRfc3339MaxBytes);
    CHECK(std::string(buf, n) == format_rfc3339(ns));
  }
}

TEST_CASE("format_rfc3339 and parse_rfc3339 round-trip over the whole int64 range") {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // The extremes and the seconds around the epoch are where sign and overflow handling break.
  std::vector<int64_t> values = {kMin, kMin + 1, kMin + kSec, kMax, kMax - 1, kMax - kSec,
                                 -kSec - 1, -kSec, -kSec + 1, -1, 0, 1, kSec};
  uint64_t x = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < 20000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    int64_t v = static_cast<int64_t>(x);
    if (i % 4 == 1) v -= v % kSec;       // whole seconds: no fraction printed
    if (i % 4 == 2) v -= v % 1'000'000;  // milliseconds
    values.push_back(v);
  }
  for (int64_t v : values) {
    const std::string s = format_rfc3339(v);
    CAPTURE(s);
    REQUIRE(parse_rfc3339(s) == v);
    // The line parser reads the same text to the same instant.
    REQUIRE(parse_line_time(s, kNoHint).wall_ns == v);
  }
}

TEST_CASE("parse_duration") {
  CHECK(parse_duration("30s") == 30 * kSec);
  CHECK(parse_duration("500ms") == 500'000'000);
  CHECK(parse_duration("3m") == 180 * kSec);
  CHECK(parse_duration("1h") == 3600 * kSec);
  CHECK(parse_duration("2d") == 172800 * kSec);
  CHECK(parse_duration("10us") == 10'000);
  CHECK(parse_duration("5ns") == 5);
  CHECK(parse_duration("1m30s") == 90 * kSec);
  CHECK(parse_duration("1h0m5s") == 3605 * kSec);
  CHECK(parse_duration("1d2h3m4s5ms6us7ns") == 93784005006007);
  CHECK(parse_duration("0s") == 0);
  CHECK(parse_duration("-5s") == -5 * kSec);
  CHECK(parse_duration("+5s") == 5 * kSec);
  CHECK(parse_duration("007s") == 7 * kSec);
  CHECK(parse_duration("106751d23h47m16s854ms775us807ns") == std::numeric_limits<int64_t>::max());
  CHECK(parse_duration("-106751d23h47m16s854ms775us808ns") ==
        std::numeric_limits<int64_t>::min());
  CHECK(parse_duration("9223372036854775807ns") == std::numeric_limits<int64_t>::max());

  const char* bad[] = {
      "",      "s",     "5",        "0",         "-",       "+",        "1.5h",    "30s1m",
      "1s1s",  "1ms1s", "5x",       " 5s",       "5s ",     "1m30",     "5S",      "5 s",
      "--5s",  "5sec",  "1h-5m",    "5µs",
      "9223372036854775808ns",  // INT64_MAX + 1
      "106751d23h47m16s854ms775us808ns",
      "106752d",
      "99999999999999999999s",  // overflows the digit accumulator
  };
  for (const char* s : bad) {
    CAPTURE(s);
    CHECK_FALSE(parse_duration(s).has_value());
  }
}

TEST_CASE("format_duration") {
  CHECK(format_duration(0) == "0s");
  CHECK(format_duration(30 * kSec) == "30s");
  CHECK(format_duration(90 * kSec) == "1m30s");
  CHECK(format_duration(500'000'000) == "500ms");
  CHECK(format_duration(1'500'000'000) == "1s500ms");
  CHECK(format_duration(3600 * kSec) == "1h");
  CHECK(format_duration(93600 * kSec) == "1d2h");
  CHECK(format_duration(93784005006007) == "1d2h3m4s5ms6us7ns");
  CHECK(format_duration(1) == "1ns");
  CHECK(format_duration(-1'500'000'000) == "-1s500ms");
  CHECK(format_duration(std::numeric_limits<int64_t>::max()) ==
        "106751d23h47m16s854ms775us807ns");
  CHECK(format_duration(std::numeric_limits<int64_t>::min()) ==
        "-106751d23h47m16s854ms775us808ns");
}

TEST_CASE("format_duration and parse_duration round-trip") {
  std::vector<int64_t> values = {0, 1, -1, 999, 1000, 60 * kSec, 86400 * kSec - 1,
                                 std::numeric_limits<int64_t>::max(),
                                 std::numeric_limits<int64_t>::min()};
  uint64_t x = 12345;
  for (int i = 0; i < 5000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    values.push_back(static_cast<int64_t>(x) >> (i % 64));
  }
  for (int64_t v : values) {
    const std::string s = format_duration(v);
    CAPTURE(s);
    REQUIRE(parse_duration(s) == v);
  }
}

TEST_CASE("rfc3339_hint: a time that lacks only its zone is told to add one; anything else gets no hint") {
  CHECK(culprit::rfc3339_hint("2026-05-11T00:00:00") ==
        "it has no zone: add Z for UTC (2026-05-11T00:00:00Z) or an offset such as +02:00");
  CHECK(culprit::rfc3339_hint("2026-05-11 00:00:00.5") ==
        "it has no zone: add Z for UTC (2026-05-11 00:00:00.5Z) or an offset such as +02:00");
  CHECK(culprit::rfc3339_hint("2026-05-11T00:00:00Z").empty());  // already valid
  CHECK(culprit::rfc3339_hint("2026-05-11").empty());            // a date is more than a missing zone
  CHECK(culprit::rfc3339_hint("yesterday").empty());
  CHECK(culprit::rfc3339_hint("2026-13-11T00:00:00").empty());   // month 13 stays invalid with a zone
  CHECK(culprit::rfc3339_hint("").empty());
}
