#include "base/timestamp.h"

#include "base/limits.h"

#include <climits>

namespace culprit {
namespace {

constexpr int64_t kNsPerSec = 1'000'000'000;
constexpr int64_t kSecPerDay = 86'400;

// The parser walks raw pointers over the line: every read is guarded by `p < e` (or a length
// check), which is what keeps binary data and truncated stamps safe.
struct Cur {
  const char* p;
  const char* e;

  bool at_end() const noexcept { return p >= e; }
  size_t left() const noexcept { return static_cast<size_t>(e - p); }
  char peek() const noexcept { return p < e ? *p : '\0'; }
  bool eat(char c) noexcept {
    if (p < e && *p == c) {
      ++p;
      return true;
    }
    return false;
  }
};

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr bool is_upper(char c) noexcept { return c >= 'A' && c <= 'Z'; }
constexpr bool is_lower(char c) noexcept { return c >= 'a' && c <= 'z'; }
constexpr bool is_alpha(char c) noexcept { return is_upper(c) || is_lower(c); }

bool read_fixed(Cur& c, int n, int& out) noexcept {
  if (c.left() < static_cast<size_t>(n)) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    const char ch = c.p[i];
    if (!is_digit(ch)) return false;
    v = v * 10 + (ch - '0');
  }
  c.p += n;
  out = v;
  return true;
}

// All digits are consumed so that a long fraction cannot leave digits behind that would look
// like the start of something else; only the first nine carry information at ns resolution.
bool read_fraction(Cur& c, int64_t& ns) noexcept {
  if (!is_digit(c.peek())) return false;
  int64_t v = 0;
  int n = 0;
  while (c.p < c.e && is_digit(*c.p)) {
    if (n < 9) {
      v = v * 10 + (*c.p - '0');
      ++n;
    }
    ++c.p;
  }
  for (; n < 9; ++n) v *= 10;
  ns = v;
  return true;
}

constexpr bool is_leap(int64_t y) noexcept {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

constexpr int days_in_month(int64_t y, int m) noexcept {
  constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

// Proleptic Gregorian calendar <-> days since 1970-01-01. Counting in 400-year eras starting
// on March 1st puts the leap day at the end of each year, so month lengths become a linear
// formula (153 days per 5 months) and no table or loop is needed.
constexpr int64_t days_from_civil(int64_t y, int m, int d) noexcept {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;                                  // [0, 399]
  const int64_t mp = m > 2 ? m - 3 : m + 9;                           // March = 0
  const int64_t doy = (153 * mp + 2) / 5 + d - 1;                     // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;          // [0, 146096]
  return era * 146097 + doe - 719468;                                 // 719468: 0000-03-01..1970
}

struct Civil {
  int64_t year;
  int month, day;
};

constexpr Civil civil_from_days(int64_t z) noexcept {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return Civil{yoe + era * 400 + (m <= 2 ? 1 : 0), m, d};
}

static_assert(days_from_civil(1970, 1, 1) == 0);
static_assert(days_from_civil(2000, 3, 1) == 11017);
static_assert(civil_from_days(11017).year == 2000 && civil_from_days(11017).month == 3);

// Fields as read from the text, before validation.
struct Fields {
  int64_t year = 0;
  int month = 0, day = 0, hour = 0, minute = 0, second = 0;
  int64_t frac_ns = 0;
  int offset_sec = 0;  // local time minus UTC
};

bool valid_time_of_day(const Fields& f) noexcept {
  return f.hour <= 23 && f.minute <= 59 && f.second <= 59;
}

bool valid_date(int64_t y, int m, int d) noexcept {
  return m >= 1 && m <= 12 && d >= 1 && d <= days_in_month(y, m);
}

// Converts validated-or-not fields to an instant; rejects anything invalid or outside int64.
bool to_instant(const Fields& f, int64_t& out) noexcept {
  if (f.year < 0 || f.year > 9999) return false;
  if (!valid_date(f.year, f.month, f.day) || !valid_time_of_day(f)) return false;
  const int64_t secs = days_from_civil(f.year, f.month, f.day) * kSecPerDay + f.hour * 3600 +
                       f.minute * 60 + f.second - f.offset_sec;
  // In the most negative second, secs * 1e9 alone is below INT64_MIN although the sum with
  // the fraction is not; borrowing one second keeps the intermediate in range.
  int64_t whole = secs, frac = f.frac_ns;
  if (whole < 0 && frac > 0) {
    whole += 1;
    frac -= kNsPerSec;
  }
  int64_t ns;
  if (__builtin_mul_overflow(whole, kNsPerSec, &ns)) return false;
  if (__builtin_add_overflow(ns, frac, &ns)) return false;
  out = ns;
  return true;
}

int year_of(int64_t ns) noexcept {
  int64_t secs = ns / kNsPerSec;
  if (ns % kNsPerSec < 0) --secs;
  int64_t days = secs / kSecPerDay;
  if (secs % kSecPerDay < 0) --days;
  return static_cast<int>(civil_from_days(days).year);
}

// Picks the year for a year-less stamp (see the header). Instants grow with the year, so once
// a candidate is at or past the window start no later year can be nearer: the loop stops there
// after at most a few iterations whatever the hint says.
bool resolve_year(Fields f, const YearHint& hint, int64_t& out) noexcept {
  if (!hint.has_window) {
    f.year = hint.year_start;
    return to_instant(f, out);
  }
  const int64_t ws = hint.window_start_ns < hint.window_end_ns ? hint.window_start_ns
                                                               : hint.window_end_ns;
  const int64_t we = hint.window_start_ns < hint.window_end_ns ? hint.window_end_ns
                                                               : hint.window_start_ns;
  int64_t lo = (hint.year_start < hint.year_end ? hint.year_start : hint.year_end) - 1LL;
  int64_t hi = (hint.year_start < hint.year_end ? hint.year_end : hint.year_start) + 1LL;
  // Beyond these years no instant is representable; clamping bounds the loop for odd hints.
  if (lo < 1677) lo = 1677;
  if (hi > 2262) hi = 2262;
  bool found = false;
  uint64_t best_dist = 0;
  int64_t best = 0;
  for (int64_t y = lo; y <= hi; ++y) {
    f.year = y;
    int64_t t;
    if (!to_instant(f, t)) continue;
    uint64_t dist = 0;
    if (t < ws) dist = static_cast<uint64_t>(ws) - static_cast<uint64_t>(t);
    else if (t > we) dist = static_cast<uint64_t>(t) - static_cast<uint64_t>(we);
    if (!found || dist < best_dist) {
      found = true;
      best_dist = dist;
      best = t;
    }
    if (t >= ws) break;
  }
  if (found) out = best;
  return found;
}

// Reads "HH:MM:SS" with an optional fraction after '.' (and after ',' if allow_comma).
bool read_clock(Cur& c, Fields& f, bool allow_comma) noexcept {
  if (!read_fixed(c, 2, f.hour) || !c.eat(':') || !read_fixed(c, 2, f.minute) || !c.eat(':') ||
      !read_fixed(c, 2, f.second))
    return false;
  const char sep = c.peek();
  if ((sep == '.' || (allow_comma && sep == ',')) && c.left() >= 2 && is_digit(c.p[1])) {
    ++c.p;
    read_fraction(c, f.frac_ns);
  }
  return true;
}

// Reads "HH:MM" (or "HHMM" if allow_basic) after the sign. RFC 3339 limits the hour to 23.
bool read_offset_body(Cur& c, int sign, bool allow_basic, int& offset_sec) noexcept {
  int h, m;
  if (!read_fixed(c, 2, h)) return false;
  if (!c.eat(':') && !allow_basic) return false;
  if (!read_fixed(c, 2, m)) return false;
  if (h > 23 || m > 59) return false;
  offset_sec = sign * (h * 3600 + m * 60);
  return true;
}

constexpr int kMonthNone = 0;

// "Jan".."Dec" (English, as every format here writes them), or kMonthNone.
int month_from_abbr(const char* p) noexcept {
  constexpr const char kNames[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
  for (int i = 0; i < 12; ++i) {
    if (p[0] == kNames[3 * i] && p[1] == kNames[3 * i + 1] && p[2] == kNames[3 * i + 2])
      return i + 1;
  }
  return kMonthNone;
}

bool is_weekday_abbr(const char* p) noexcept {
  constexpr const char kNames[] = "MonTueWedThuFriSatSun";
  for (int i = 0; i < 7; ++i) {
    if (p[0] == kNames[3 * i] && p[1] == kNames[3 * i + 1] && p[2] == kNames[3 * i + 2])
      return true;
  }
  return false;
}

bool read_month(Cur& c, int& month) noexcept {
  if (c.left() < 3) return false;
  month = month_from_abbr(c.p);
  if (month == kMonthNone) return false;
  c.p += 3;
  return true;
}

// A day of month as written by C's %e (" 3") or %d ("03"), or bare ("3"). The caller checks
// the separator after it.
bool read_day(Cur& c, int& day) noexcept {
  if (c.eat(' ')) {
    if (!is_digit(c.peek())) return false;
    day = *c.p++ - '0';
    return true;
  }
  if (!is_digit(c.peek())) return false;
  day = *c.p++ - '0';
  if (is_digit(c.peek())) day = day * 10 + (*c.p++ - '0');
  return true;
}

// A stamp must not run straight into another digit: "10:00:001" is not 10:00:00 followed by
// text, it is garbage.
bool ends_cleanly(const Cur& c) noexcept { return !is_digit(c.peek()); }

// "[ 1843.308145]": kernel printk pads the seconds to five columns, so any number of spaces is
// allowed before them. Ten integer digits is already three centuries of uptime.
bool read_boot_stamp(Cur& c, int64_t& boot_ns) noexcept {
  if (!c.eat('[')) return false;
  while (c.eat(' ')) {
  }
  int64_t secs = 0;
  int n = 0;
  while (is_digit(c.peek())) {
    if (++n > 10) return false;
    secs = secs * 10 + (*c.p++ - '0');
  }
  if (n == 0 || !c.eat('.')) return false;
  int64_t frac;
  if (!read_fraction(c, frac) || !c.eat(']')) return false;
  int64_t ns;
  if (__builtin_mul_overflow(secs, kNsPerSec, &ns) || __builtin_add_overflow(ns, frac, &ns))
    return false;
  boot_ns = ns;
  return true;
}

// After a syslog-style stamp: " host kernel: [ 1843.308145]" or " kernel: [ 1843.308145]".
// The host token is bounded by the longest DNS name so that a huge line costs nothing extra.
void read_kernel_boot(Cur c, LineTime& out) noexcept {
  constexpr std::string_view kTag = "kernel:";
  auto token_is_tag = [&](Cur& t) noexcept {
    if (t.left() >= kTag.size() && std::string_view(t.p, kTag.size()) == kTag &&
        (t.left() == kTag.size() || t.p[kTag.size()] == ' ')) {
      t.p += kTag.size();
      return true;
    }
    return false;
  };
  if (!c.eat(' ')) return;
  while (c.eat(' ')) {
  }
  if (!token_is_tag(c)) {
    size_t n = 0;
    while (!c.at_end() && *c.p != ' ') {
      if (++n > 255) return;
      ++c.p;
    }
    if (!c.eat(' ')) return;
    while (c.eat(' ')) {
    }
    if (!token_is_tag(c)) return;
  }
  while (c.eat(' ')) {
  }
  int64_t boot;
  if (read_boot_stamp(c, boot)) {
    out.has_boot = true;
    out.boot_ns = boot;
  }
}

enum class IsoMode {
  kStrict,  // parse_rfc3339: zone required, '.' only, whole input
  kLine,    // log lines: zone optional, ',' allowed, ±HHMM and " ±HH:MM" allowed
};

bool read_iso(Cur& c, IsoMode mode, int64_t& out, bool* zoned = nullptr, int32_t* offset = nullptr) noexcept {
  Fields f;
  int year;
  if (!read_fixed(c, 4, year) || !c.eat('-') || !read_fixed(c, 2, f.month) || !c.eat('-') ||
      !read_fixed(c, 2, f.day))
    return false;
  f.year = year;
  const char sep = c.peek();
  if (sep != 'T' && sep != 't' && sep != ' ') return false;
  ++c.p;
  const bool line = mode == IsoMode::kLine;
  if (!read_clock(c, f, line)) return false;

  bool has_zone = false;
  const char z = c.peek();
  if (z == 'Z' || z == 'z') {
    ++c.p;
    has_zone = true;
  } else if ((z == '+' || z == '-') && c.left() >= 2 && is_digit(c.p[1])) {
    ++c.p;
    // A sign and digits right after the clock can only be an offset; if it is malformed the
    // instant would be off by hours, so the whole stamp is rejected instead.
    if (!read_offset_body(c, z == '+' ? 1 : -1, line, f.offset_sec)) return false;
    has_zone = true;
  } else if (line && z == ' ' && c.left() >= 3 && (c.p[1] == '+' || c.p[1] == '-') &&
             is_digit(c.p[2])) {
    // Go's time.String() and similar write "10:00:00 +0000". A failed parse here only means the
    // text after the space was something else, so the stamp stands without a zone.
    Cur t{c.p + 2, c.e};
    int off;
    if (read_offset_body(t, c.p[1] == '+' ? 1 : -1, true, off) && ends_cleanly(t)) {
      f.offset_sec = off;
      c = t;
      has_zone = true;
    }
  }
  if (mode == IsoMode::kStrict && (!has_zone || !c.at_end())) return false;
  if (!ends_cleanly(c)) return false;
  if (!to_instant(f, out)) return false;
  if (zoned) *zoned = has_zone;
  if (offset) *offset = f.offset_sec;
  return true;
}

// "Nov 30 01:02:03" after the month has been recognised at c.
bool read_syslog(Cur& c, const YearHint& hint, int64_t& out) noexcept {
  Fields f;
  if (!read_month(c, f.month) || !c.eat(' ') || !read_day(c, f.day) || !c.eat(' ') ||
      !read_clock(c, f, false) || !ends_cleanly(c))
    return false;
  return resolve_year(f, hint, out);
}

// glog: "E1130 02:07:08.408271257" (level letter already checked by the caller). Google glog
// pads the month ("I0101"); PyTorch's c10 logger prints (tm_mon + 1) * 100 + tm_mday as a plain
// integer (c10/util/Logging.cpp), so from January to September the month has one digit
// ("E626" is June 26, "W101" January 1). Three digits are M DD, four are MM DD; both readings
// agree wherever both are possible.
bool read_glog(Cur& c, const YearHint& hint, int64_t& out) noexcept {
  Fields f;
  ++c.p;  // level letter
  size_t digits = 0;
  while (digits < c.left() && is_digit(c.p[digits])) ++digits;
  if (digits != 3 && digits != 4) return false;
  if (!read_fixed(c, static_cast<int>(digits) - 2, f.month) || !read_fixed(c, 2, f.day) ||
      !c.eat(' ') || !read_clock(c, f, false) || !ends_cleanly(c))
    return false;
  return resolve_year(f, hint, out);
}

bool is_glog_level(char c) noexcept { return c == 'I' || c == 'W' || c == 'E' || c == 'F'; }

// "[Sun Feb 23 16:24:18 2025]" (dmesg -T, c after '[').
bool read_dmesg_t(Cur& c, int64_t& out) noexcept {
  Fields f;
  if (c.left() < 4 || !is_weekday_abbr(c.p) || c.p[3] != ' ') return false;
  c.p += 4;
  int year;
  if (!read_month(c, f.month) || !c.eat(' ') || !read_day(c, f.day) || !c.eat(' ') ||
      !read_clock(c, f, false) || !c.eat(' ') || !read_fixed(c, 4, year) || !c.eat(']'))
    return false;
  f.year = year;
  return to_instant(f, out);
}

// "[Jul 23 2024 07:53:55]" (Fabric Manager, c after '[').
bool read_fabric_manager(Cur& c, int64_t& out) noexcept {
  Fields f;
  int year;
  if (!read_month(c, f.month) || !c.eat(' ') || !read_day(c, f.day) || !c.eat(' ') ||
      !read_fixed(c, 4, year) || !c.eat(' ') || !read_clock(c, f, false) || !c.eat(']'))
    return false;
  f.year = year;
  return to_instant(f, out);
}

bool four_digits_then_dash(const Cur& c) noexcept {
  return c.left() >= 5 && is_digit(c.p[0]) && is_digit(c.p[1]) && is_digit(c.p[2]) &&
         is_digit(c.p[3]) && c.p[4] == '-';
}

// torchrun prefix "[rank3]:" / "[default0]:": letters, then digits, then "]:".
bool skip_rank_prefix(Cur& c) noexcept {
  Cur t = c;
  if (!t.eat('[')) return false;
  size_t letters = 0, digits = 0;
  while (is_alpha(t.peek()) && letters < 32) {
    ++t.p;
    ++letters;
  }
  while (is_digit(t.peek()) && digits < 9) {
    ++t.p;
    ++digits;
  }
  if (letters == 0 || digits == 0 || !t.eat(']') || !t.eat(':')) return false;
  c = t;
  return true;
}

// A logger's bracketed tag before an ISO stamp: "[titan] 2026-11-30 10:33:40,404 - root -
// INFO - ..." (torchtitan's format, "[titan] %(asctime)s - ..."), "[INFO] 2026-...". Letters
// only, then "] ", and skipped only when an ISO date follows, so "[titan] step 5" stays
// without a time and a Slurm "[2026-...]" stamp is never taken for a tag.
bool skip_tag_before_iso(Cur& c) noexcept {
  Cur t = c;
  if (!t.eat('[')) return false;
  size_t letters = 0;
  while (is_alpha(t.peek()) && letters < 32) {
    ++t.p;
    ++letters;
  }
  if (letters == 0 || !t.eat(']') || !t.eat(' ') || !four_digits_then_dash(t)) return false;
  c = t;
  return true;
}

void parse_at(Cur c, const YearHint& hint, LineTime& out) noexcept {
  if (c.at_end()) return;
  const char first = *c.p;
  int64_t t;

  if (is_digit(first)) {
    if (!four_digits_then_dash(c)) return;
    bool zoned = false;
    int32_t offset = 0;
    if (read_iso(c, IsoMode::kLine, t, &zoned, &offset)) {
      out.has_wall = true;
      out.wall_ns = t;
      out.has_zone = zoned;
      out.zone_offset_sec = offset;
      read_kernel_boot(c, out);
    }
    return;
  }

  if (is_upper(first)) {
    if (c.left() >= 2 && is_glog_level(first) && is_digit(c.p[1])) {
      if (read_glog(c, hint, t)) {
        out.has_wall = true;
        out.wall_ns = t;
      }
      return;
    }
    if (read_syslog(c, hint, t)) {
      out.has_wall = true;
      out.wall_ns = t;
      read_kernel_boot(c, out);
    }
    return;
  }

  if (first != '[' || c.left() < 2) return;
  const char second = c.p[1];
  if (second == ' ' || is_digit(second)) {
    Cur inner{c.p + 1, c.e};
    if (four_digits_then_dash(inner)) {
      bool zoned = false;
      int32_t offset = 0;
      if (read_iso(inner, IsoMode::kLine, t, &zoned, &offset)) {
        out.has_wall = true;
        out.wall_ns = t;
        out.has_zone = zoned;
        out.zone_offset_sec = offset;
      }
      return;
    }
    int64_t boot;
    if (read_boot_stamp(c, boot)) {
      out.has_boot = true;
      out.boot_ns = boot;
    }
    return;
  }
  if (!is_upper(second)) return;
  Cur inner{c.p + 1, c.e};
  bool ok = false;
  if (inner.left() >= 2 && is_glog_level(second) && is_digit(inner.p[1])) {
    ok = read_glog(inner, hint, t);  // the rest of the bracket is "file:line]", not checked
  } else if (inner.left() >= 3 && is_weekday_abbr(inner.p)) {
    ok = read_dmesg_t(inner, t);
    out.dmesg_local = ok;
  } else {
    ok = read_fabric_manager(inner, t);
  }
  if (ok) {
    out.has_wall = true;
    out.wall_ns = t;
  }
}

}  // namespace

YearHint make_year_hint(std::optional<int64_t> window_start_ns,
                        std::optional<int64_t> window_end_ns, int fallback_year) noexcept {
  YearHint h;
  if (!window_start_ns && !window_end_ns) {
    h.year_start = h.year_end = fallback_year;
    return h;
  }
  int64_t ws = window_start_ns ? *window_start_ns : *window_end_ns;
  int64_t we = window_end_ns ? *window_end_ns : *window_start_ns;
  if (we < ws) {
    const int64_t tmp = ws;
    ws = we;
    we = tmp;
  }
  h.window_start_ns = ws;
  h.window_end_ns = we;
  h.year_start = year_of(ws);
  h.year_end = year_of(we);
  h.has_window = true;
  return h;
}

LineTime parse_line_time(std::string_view line, const YearHint& hint) noexcept {
  LineTime out;
  Cur c{line.data(), line.data() + line.size()};
  if (c.left() >= 3 && static_cast<unsigned char>(c.p[0]) == 0xEF &&
      static_cast<unsigned char>(c.p[1]) == 0xBB && static_cast<unsigned char>(c.p[2]) == 0xBF)
    c.p += 3;
  while (c.peek() == ' ' || c.peek() == '\t') ++c.p;
  if (c.peek() == '<') {  // printk / syslog priority "<4>"
    Cur t{c.p + 1, c.e};
    int n = 0;
    while (is_digit(t.peek()) && n < 4) {
      ++t.p;
      ++n;
    }
    if (n >= 1 && n <= 3 && t.eat('>')) c = t;
  }
  for (int i = 0; i < 2 && skip_rank_prefix(c); ++i) {
  }
  skip_tag_before_iso(c);
  parse_at(c, hint, out);
  return out;
}

std::optional<int64_t> parse_rfc3339(std::string_view s) noexcept {
  Cur c{s.data(), s.data() + s.size()};
  if (!four_digits_then_dash(c)) return std::nullopt;
  int64_t t;
  if (!read_iso(c, IsoMode::kStrict, t)) return std::nullopt;
  return t;
}

size_t format_rfc3339_to(int64_t ns, char* out) noexcept {
  int64_t secs = ns / kNsPerSec;
  int64_t frac = ns % kNsPerSec;
  if (frac < 0) {
    frac += kNsPerSec;
    --secs;
  }
  int64_t days = secs / kSecPerDay;
  int64_t sod = secs % kSecPerDay;
  if (sod < 0) {
    sod += kSecPerDay;
    --days;
  }
  const Civil d = civil_from_days(days);
  // int64 nanoseconds span years 1677..2262, so four year digits always suffice.
  char* p = out;
  auto put = [&p](int64_t v, int width) {
    for (int i = width - 1; i >= 0; --i) {
      p[i] = static_cast<char>('0' + v % 10);
      v /= 10;
    }
    p += width;
  };
  put(d.year, 4);
  *p++ = '-';
  put(d.month, 2);
  *p++ = '-';
  put(d.day, 2);
  *p++ = 'T';
  put(sod / 3600, 2);
  *p++ = ':';
  put(sod / 60 % 60, 2);
  *p++ = ':';
  put(sod % 60, 2);
  if (frac != 0) {
    int width = 9;
    while (frac % 10 == 0) {
      frac /= 10;
      --width;
    }
    *p++ = '.';
    put(frac, width);
  }
  *p++ = 'Z';
  return static_cast<size_t>(p - out);
}

std::string format_rfc3339(int64_t ns) noexcept {
  char buf[kRfc3339MaxBytes];
  return std::string(buf, format_rfc3339_to(ns, buf));
}

namespace {

struct DurationUnit {
  std::string_view name;
  uint64_t ns;
};

// Longest names first where one is a prefix of another ("ms" before "m").
constexpr DurationUnit kUnits[] = {
    {"d", 86'400'000'000'000ULL}, {"h", 3'600'000'000'000ULL}, {"ms", 1'000'000ULL},
    {"m", 60'000'000'000ULL},     {"s", 1'000'000'000ULL},     {"us", 1'000ULL},
    {"ns", 1ULL},
};

}  // namespace

namespace {

// parse_duration, saying why it failed: `range` when the text is well formed but
// its magnitude overflows int64 (or the digits alone overflow uint64).
DurationCheck parse_duration_checked(std::string_view s, int64_t& out) noexcept {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return DurationCheck::syntax;
  // The magnitude is accumulated unsigned so that INT64_MIN ("-106751d...808ns") round-trips.
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  uint64_t total = 0;
  uint64_t prev_unit = UINT64_MAX;
  bool overflow = false;  // reported once the whole text is known to be well formed
  size_t i = 0;
  while (i < s.size()) {
    if (!is_digit(s[i])) return DurationCheck::syntax;
    uint64_t n = 0;
    while (i < s.size() && is_digit(s[i])) {
      if (__builtin_mul_overflow(n, 10u, &n) ||
          __builtin_add_overflow(n, static_cast<uint64_t>(s[i] - '0'), &n))
        overflow = true;
      ++i;
    }
    const DurationUnit* unit = nullptr;
    for (const DurationUnit& u : kUnits) {
      if (s.substr(i, u.name.size()) == u.name) {
        unit = &u;
        break;
      }
    }
    if (unit == nullptr || unit->ns >= prev_unit) return DurationCheck::syntax;
    prev_unit = unit->ns;
    i += unit->name.size();
    uint64_t part;
    if (overflow || __builtin_mul_overflow(n, unit->ns, &part) || __builtin_add_overflow(total, part, &total) ||
        total > limit)
      overflow = true;
  }
  if (overflow) return DurationCheck::range;
  out = negative ? static_cast<int64_t>(0 - total) : static_cast<int64_t>(total);  // two's complement; exact for 2^63
  return DurationCheck::ok;
}

}  // namespace

std::optional<int64_t> parse_duration(std::string_view s) noexcept {
  int64_t v = 0;
  if (parse_duration_checked(s, v) != DurationCheck::ok) return std::nullopt;
  return v;
}

DurationCheck parse_bounded_duration(std::string_view s, int64_t& out) noexcept {
  int64_t v = 0;
  DurationCheck c = parse_duration_checked(s, v);
  if (c != DurationCheck::ok) return c;
  if (v > limits::kMaxDurationNs || v < -limits::kMaxDurationNs) return DurationCheck::range;
  out = v;
  return DurationCheck::ok;
}

std::string duration_error(DurationCheck c, std::string_view what) {
  if (c == DurationCheck::range)
    return "'" + std::string(what) + "' is out of range: at most " + std::to_string(limits::kDurationDays) +
           "d (limit duration)";
  return "'" + std::string(what) + "' must be a duration such as 90s, 10m or 24h";
}

std::string format_duration(int64_t ns) noexcept {
  if (ns == 0) return "0s";
  std::string out;
  uint64_t mag = static_cast<uint64_t>(ns);
  if (ns < 0) {
    out.push_back('-');
    mag = 0 - mag;
  }
  // Units in decreasing order, as parse_duration requires.
  constexpr DurationUnit kOrder[] = {
      {"d", 86'400'000'000'000ULL}, {"h", 3'600'000'000'000ULL}, {"m", 60'000'000'000ULL},
      {"s", 1'000'000'000ULL},      {"ms", 1'000'000ULL},        {"us", 1'000ULL},
      {"ns", 1ULL},
  };
  for (const DurationUnit& u : kOrder) {
    const uint64_t n = mag / u.ns;
    mag %= u.ns;
    if (n != 0) {
      out += std::to_string(n);
      out += u.name;
    }
  }
  return out;
}

std::string rfc3339_hint(std::string_view s) {
  if (s.empty() || s.size() > 64 || parse_rfc3339(s)) return "";
  std::string with_zone = std::string(s) + "Z";
  if (!parse_rfc3339(with_zone)) return "";
  return "it has no zone: add Z for UTC (" + with_zone + ") or an offset such as +02:00";
}

}  // namespace culprit
