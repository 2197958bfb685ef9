// libFuzzer: timestamps and log lines. Every line-time format with a year
// hint taken from the input; RFC 3339 and durations round-trip through
// their formatters; then the input's lines are scanned as one stream by
// the scanner (atoms, RE2 captures, time inheritance, scope) with a small
// catalog.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/timestamp.h"
#include "runtime/scanner.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 9) return 0;
  int64_t start;
  std::memcpy(&start, data, 8);
  start %= 4102444800LL * 1000000000LL;  // before 2100
  std::string_view text(reinterpret_cast<const char*>(data + 8), size - 8);
  auto hint = culprit::make_year_hint(start, start + 3600LL * 1000000000LL, 2026);
  culprit::parse_line_time(text, hint);
  culprit::parse_line_time(text, culprit::make_year_hint(std::nullopt, std::nullopt, 2026));
  if (auto t = culprit::parse_rfc3339(text)) FUZZ_CHECK(culprit::parse_rfc3339(culprit::format_rfc3339(*t)) == t);
  if (auto d = culprit::parse_duration(text)) FUZZ_CHECK(culprit::parse_duration(culprit::format_duration(*d)) == d);
  FUZZ_CHECK(culprit::parse_rfc3339(culprit::format_rfc3339(start)) == start);

  std::vector<std::string> lines;
  std::vector<int64_t> numbers;
  std::vector<std::optional<int64_t>> times;
  size_t pos = 0;
  while (pos < text.size() && lines.size() < 4096) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.emplace_back(text.substr(pos, end - pos));
    numbers.push_back(static_cast<int64_t>(lines.size()));
    times.push_back(std::nullopt);
    pos = end;
  }
  static culprit::Scanner scanner(culprit::fuzz::small_program());
  culprit::ScanOptions opt;
  opt.scope_start = start - 600LL * 1000000000LL;
  opt.scope_end = start + 7200LL * 1000000000LL;
  opt.year_hint = hint;
  for (const char* source : {"kernel", "app"}) {
    auto r = scanner.scan_lines("node-01", source, "fuzz.log", false, lines, numbers, times, opt);
    FUZZ_CHECK(r.lines <= static_cast<int64_t>(lines.size()));
    for (const auto& e : r.events) FUZZ_CHECK(e.where.text.size() <= opt.max_text);
  }
  return 0;
}
