// Scanner tests: real files written to a temporary directory, scanned with a
// Program built from a small catalog. They check what an event records about
// where it came from, how times are assigned to lines (own, inherited,
// back-filled, boot-anchored), what is counted, and that odd bytes and odd
// line shapes neither crash nor lose the lines after them.
#include "runtime/scanner.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <thread>
#include <string>
#include <vector>

#include "base/text_util.h"
#include "base/timestamp.h"
#include "tests/support/test_support.h"

using namespace culprit;
using culprit::testing::program_for;
using culprit::testing::TempDir;

namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kT0 = 1767261600LL * kSec;        // 2026-01-01T10:00:00Z
constexpr int64_t kNov30 = 1796000523LL * kSec;     // 2026-11-30T01:02:03Z (computed with Python's datetime)

const char* const kCatalog = R"(
extractor Hello from app {
  match /hello (?<who>\w+)/
  emit app.hello { who: who }
  test { line "hello bob" expect app.hello { who: "bob" } }
  test { line "bye" expect none }
}
extractor Say from app {
  match /say (?<what>.*)/
  emit app.say { what: what }
  test { line "say it" expect app.say { what: "it" } }
  test { line "hello" expect none }
}
extractor Done from app {
  match /job done$/
  emit app.done
  test { line "the job done" expect app.done }
  test { line "job done later" expect none }
}
extractor Xid from kernel {
  match /NVRM: Xid \(PCI:(?<pci>[0-9a-f:]+)\): (?<xid>\d+)/
  emit gpu.xid { pci: pci, xid: int(xid) }
  test { line "NVRM: Xid (PCI:0000:3b:00): 79, x" expect gpu.xid { xid: 79, pci: "0000:3b:00" } }
  test { line "NVRM: loading" expect none }
}
)";

struct Fixture {
  std::shared_ptr<const Program> program = program_for(kCatalog);
  TempDir dir;

  // Writes logs/<host>/<source>.log and describes it as the bundle loader would.
  LogFile file(const std::string& host, const std::string& source, const std::string& bytes, bool control_plane = false) {
    const std::string rel = "logs/" + host + "/" + source + ".log";
    auto p = dir.write(rel, bytes);
    LogFile f;
    f.host = host;
    f.source = source;
    f.display_path = rel;
    f.path = p.string();
    f.control_plane = control_plane;
    f.size = bytes.size();
    return f;
  }

  ScanResult scan(const LogFile& f, const ScanOptions& opt = ScanOptions{}) {
    Scanner scanner(program);
    return scanner.scan_file(f, opt);
  }

  std::string kind_of(const Event& e) const { return program->catalog().event_kinds[static_cast<size_t>(e.kind)].name; }

  Value field(const Event& e, const std::string& name) const {
    const auto& cat = program->catalog();
    int32_t slot = cat.event_kinds[static_cast<size_t>(e.kind)].slot(cat.field_id(name));
    REQUIRE(slot >= 0);
    return e.fields[static_cast<size_t>(slot)];
  }
};

// The options a diagnose run would use for a window of unknown year: syslog
// and glog lines get 2026.
ScanOptions year_2026() {
  ScanOptions o;
  o.year_hint = make_year_hint(std::nullopt, std::nullopt, 2026);
  return o;
}

std::vector<std::string> who_of(Fixture& fx, const ScanResult& r) {
  std::vector<std::string> out;
  for (const auto& e : r.events)
    if (fx.kind_of(e) == "app.hello") out.push_back(fx.field(e, "who").s);
  return out;
}

}  // namespace

TEST_CASE("scan_file: events carry their provenance") {
  Fixture fx;
  const std::string l1 = "2026-01-01T10:00:00Z start";
  const std::string l2 = "2026-01-01T10:00:05Z hello alice";
  const std::string l3 = "hello bob";
  auto f = fx.file("node-01", "app", l1 + "\n" + l2 + "\n" + l3 + "\n");
  auto r = fx.scan(f);
  CHECK(r.error.empty());
  CHECK(r.host == "node-01");
  CHECK(r.source == "app");
  CHECK(r.file == "logs/node-01/app.log");
  CHECK(r.lines == 3);
  CHECK(r.events_without_time == 0);  // "hello bob" inherits 10:00:05
  CHECK(r.bytes == static_cast<int64_t>(f.size));
  REQUIRE(r.events.size() == 2);

  const Event& a = r.events[0];
  CHECK(fx.kind_of(a) == "app.hello");
  CHECK(a.producer == "Hello");
  CHECK(a.host == "node-01");
  CHECK_FALSE(a.control_plane);
  CHECK(a.derived_from.empty());
  CHECK(a.where.host == "node-01");
  CHECK(a.where.source == "app");
  CHECK(a.where.file == "logs/node-01/app.log");
  CHECK(a.where.line == 2);
  CHECK(a.where.offset == static_cast<int64_t>(l1.size() + 1));
  CHECK(a.where.ts == kT0 + 5 * kSec);
  CHECK(a.where.ts_origin == "line");
  CHECK(a.where.text == l2);
  CHECK(fx.field(a, "who").s == "alice");

  // An untimed line inherits the time of the line before it.
  const Event& b = r.events[1];
  CHECK(b.where.line == 3);
  CHECK(b.where.offset == static_cast<int64_t>(l1.size() + l2.size() + 2));
  CHECK(b.where.ts == kT0 + 5 * kSec);
  CHECK(b.where.ts_origin == "inherited");
  CHECK(b.where.text == "hello bob");
}

TEST_CASE("scan_file: leading untimed lines take the first later time") {
  Fixture fx;
  auto f = fx.file("node-01", "app",
                   "hello early\nhello also\n2026-01-01T10:00:07Z tick\nhello late\n2026-01-01T10:00:09Z hello timed\n");
  auto r = fx.scan(f);
  REQUIRE(r.events.size() == 4);
  CHECK(who_of(fx, r) == std::vector<std::string>{"early", "also", "late", "timed"});
  for (int i : {0, 1}) {
    CAPTURE(i);
    CHECK(r.events[static_cast<size_t>(i)].where.ts == kT0 + 7 * kSec);
    CHECK(r.events[static_cast<size_t>(i)].where.ts_origin == "inherited");
  }
  CHECK(r.events[2].where.ts == kT0 + 7 * kSec);
  CHECK(r.events[2].where.ts_origin == "inherited");
  CHECK(r.events[3].where.ts == kT0 + 9 * kSec);
  CHECK(r.events[3].where.ts_origin == "line");
  CHECK(r.events_without_time == 0);
}

TEST_CASE("scan_file: a file without any time leaves events untimed") {
  Fixture fx;
  auto r = fx.scan(fx.file("node-01", "app", "hello a\nhello b\n"));
  REQUIRE(r.events.size() == 2);
  for (const auto& e : r.events) {
    CHECK_FALSE(e.where.ts.has_value());
    CHECK(e.where.ts_origin.empty());
  }
  CHECK(r.events_without_time == 2);
}

TEST_CASE("scan_file: dmesg boot seconds are anchored by a syslog line carrying both") {
  Fixture fx;
  auto f = fx.file("node-02", "kernel",
                   "[  100.000000] NVRM: Xid (PCI:0000:3b:00): 79, before the anchor\n"
                   "Nov 30 01:02:03 node-02 kernel: [  200.500000] NVRM: Xid (PCI:0000:3b:00): 48, the anchor\n"
                   "[  260.500000] NVRM: Xid (PCI:0000:3b:00): 31, after the anchor\n");
  auto r = fx.scan(f, year_2026());
  REQUIRE(r.events.size() == 3);
  // wall - boot of the anchor line: kNov30 - 200.5 s.
  const int64_t boot_zero = kNov30 - 200 * kSec - kSec / 2;
  CHECK(fx.field(r.events[0], "xid").i == 79);
  CHECK(r.events[0].where.ts == boot_zero + 100 * kSec);
  CHECK(r.events[0].where.ts_origin == "boot-anchored");
  CHECK(fx.field(r.events[1], "xid").i == 48);
  CHECK(r.events[1].where.ts == kNov30);
  CHECK(r.events[1].where.ts_origin == "line");
  CHECK(fx.field(r.events[2], "xid").i == 31);
  CHECK(r.events[2].where.ts == kNov30 + 60 * kSec);
  CHECK(r.events[2].where.ts_origin == "boot-anchored");
  CHECK(fx.field(r.events[2], "pci").s == "0000:3b:00");
  // Boot stamps are timestamps of their own: no line is "without time".
  CHECK(r.events_without_time == 0);
}

TEST_CASE("scan_file: boot seconds that cannot be placed on the wall clock give no time, not an overflow") {
  // The anchor line is a second before the end of int64 nanoseconds (year
  // 2262); the uptimes before and after it reach past that end. Found by
  // fuzz_timestamp (UBSan: signed overflow in anchor + boot seconds).
  Fixture fx;
  auto r = fx.scan(fx.file("node-02", "kernel",
                           "[99999.000000] NVRM: Xid (PCI:0000:3b:00): 79, before the anchor\n"
                           "2262-04-11T23:47:15Z node-02 kernel: [    1.000000] NVRM: Xid (PCI:0000:3b:00): 48, the anchor\n"
                           "[99999.000000] NVRM: Xid (PCI:0000:3b:00): 31, after the anchor\n"));
  REQUIRE(r.events.size() == 3);
  CHECK_FALSE(r.events[0].where.ts.has_value());
  CHECK(r.events[0].where.ts_origin.empty());
  REQUIRE(r.events[1].where.ts.has_value());
  CHECK(r.events[1].where.ts_origin == "line");
  CHECK_FALSE(r.events[2].where.ts.has_value());
  CHECK(r.events[2].where.ts_origin.empty());
}

TEST_CASE("scan_file: boot seconds that are never anchored give no time (order only)") {
  Fixture fx;
  auto r = fx.scan(fx.file("node-02", "kernel",
                           "[  100.000000] NVRM: Xid (PCI:0000:3b:00): 79, x\n"
                           "[  101.000000] NVRM: Xid (PCI:0000:3b:00): 45, y\n"),
                   year_2026());
  REQUIRE(r.events.size() == 2);
  for (const auto& e : r.events) {
    CHECK_FALSE(e.where.ts.has_value());
    CHECK(e.where.ts_origin.empty());
  }
}

TEST_CASE("scan_file: lines and events outside the scope are counted, and only in-scope events kept") {
  Fixture fx;
  ScanOptions opt;
  opt.scope_start = kT0;
  opt.scope_end = kT0 + 600 * kSec;
  auto f = fx.file("node-01", "app",
                   "2026-01-01T09:00:00Z hello early\n"    // out
                   "2026-01-01T10:05:00Z hello inside\n"   // in
                   "hello inherits\n"                      // in (10:05)
                   "2026-01-01T11:00:00Z hello late\n"     // out
                   "hello after\n"                         // out (inherits 11:00)
                   "2026-01-01T12:00:00Z nothing\n");      // out, no event
  auto r = fx.scan(f, opt);
  CHECK(r.lines == 6);
  CHECK(r.lines_out_of_scope == 4);
  CHECK(r.events_out_of_scope == 3);
  CHECK(who_of(fx, r) == std::vector<std::string>{"inside", "inherits"});
  // The bounds are inclusive.
  auto edge = fx.scan(fx.file("node-02", "app", "2026-01-01T10:00:00Z hello start\n2026-01-01T10:10:00Z hello end\n"), opt);
  CHECK(edge.lines_out_of_scope == 0);
  CHECK(who_of(fx, edge) == std::vector<std::string>{"start", "end"});
  // Untimed events are not out of scope: there is nothing to judge them by.
  auto untimed = fx.scan(fx.file("node-03", "app", "hello nobody\n"), opt);
  CHECK(untimed.events.size() == 1);
  CHECK(untimed.events_out_of_scope == 0);
  CHECK(untimed.lines_out_of_scope == 0);
}

TEST_CASE("scan_file: invalid UTF-8 and NUL bytes are sanitized in evidence") {
  Fixture fx;
  const std::string bad = "2026-01-01T10:00:00Z hello bad \xff\xfe tail";
  const std::string nul = std::string("2026-01-01T10:00:01Z hello nul \0 after", 38);
  const std::string cut = "2026-01-01T10:00:02Z say caf\xc3";  // a 2-byte sequence cut short
  auto f = fx.file("node-01", "app", bad + "\n" + nul + "\n" + cut + "\n" + "2026-01-01T10:00:03Z hello fine\n");
  auto r = fx.scan(f);
  CHECK(r.lines == 4);
  CHECK(r.lines_invalid_utf8 == 2);
  REQUIRE(r.events.size() == 4);
  for (const auto& e : r.events) {
    CAPTURE(e.where.text);
    CHECK(is_valid_utf8(e.where.text));
    CHECK(e.where.text.view().find('\0') == std::string_view::npos);
  }
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(r.events[0].where.text == "2026-01-01T10:00:00Z hello bad " + fffd + fffd + " tail");
  CHECK(fx.field(r.events[0], "who").s == "bad");
  CHECK(r.events[1].where.text == "2026-01-01T10:00:01Z hello nul " + fffd + " after");
  // A capture holding the broken bytes is repaired too, so fields are printable.
  CHECK(fx.kind_of(r.events[2]) == "app.say");
  CHECK(fx.field(r.events[2], "what").s == "caf" + fffd);
  CHECK(r.events[3].where.text == "2026-01-01T10:00:03Z hello fine");
  // The time of a line is still read when the rest of it is garbage.
  CHECK(r.events[0].where.ts == kT0);
  CHECK(r.events[0].where.ts_origin == "line");
}

TEST_CASE("scan_file: a line longer than the 4 MiB buffer is cut, counted, and scanning goes on") {
  Fixture fx;
  const std::string first = "2026-01-01T10:00:00Z hello first";
  const std::string giant = "hello giant " + std::string(Scanner::kBufferSize + (1 << 20), 'x');
  const std::string after = "2026-01-01T10:00:02Z hello after";
  auto f = fx.file("node-01", "app", first + "\n" + giant + "\n" + after + "\n" + "hello last\n");
  ScanOptions opt;
  auto r = fx.scan(f, opt);
  CHECK(r.error.empty());
  CHECK(r.lines == 4);
  CHECK(r.lines_truncated == 1);
  CHECK(who_of(fx, r) == std::vector<std::string>{"first", "giant", "after", "last"});
  REQUIRE(r.events.size() == 4);
  const Event& g = r.events[1];
  CHECK(g.where.line == 2);
  CHECK(g.where.offset == static_cast<int64_t>(first.size() + 1));
  CHECK(g.where.text.size() <= opt.max_text);
  CHECK(g.where.text.view().rfind("hello giant xxx", 0) == 0);
  CHECK(g.where.text.view().substr(g.where.text.size() - 3) == "\xE2\x80\xA6");  // "…" marks the cut
  CHECK(is_valid_utf8(g.where.text));
  const Event& a = r.events[2];
  CHECK(a.where.line == 3);
  CHECK(a.where.offset == static_cast<int64_t>(first.size() + giant.size() + 2));
  CHECK(a.where.text == after);
  CHECK(a.where.ts == kT0 + 2 * kSec);
  CHECK(r.events[3].where.line == 4);
  CHECK(r.events[3].where.ts == kT0 + 2 * kSec);
}

TEST_CASE("scan_file: a line between max_line and the buffer size is cut and counted too") {
  Fixture fx;
  ScanOptions opt;
  opt.max_line = 1000;
  const std::string longish = "2026-01-01T10:00:00Z hello long " + std::string(5000, 'y');
  auto r = fx.scan(fx.file("node-01", "app", longish + "\nhello next\n"), opt);
  CHECK(r.lines == 2);
  CHECK(r.lines_truncated == 1);
  CHECK(who_of(fx, r) == std::vector<std::string>{"long", "next"});
  CHECK(r.events[1].where.offset == static_cast<int64_t>(longish.size() + 1));
}

TEST_CASE("scan_file: evidence text is truncated to max_text on a character boundary") {
  Fixture fx;
  ScanOptions opt;
  opt.max_text = 16;
  auto r = fx.scan(fx.file("node-01", "app", "hello x ééééééééééééééééé\n"), opt);
  REQUIRE(r.events.size() == 1);
  const std::string t = r.events[0].where.text.str();
  CHECK(t.size() <= 16);
  CHECK(is_valid_utf8(t));
  CHECK(t.rfind("hello x ", 0) == 0);
  CHECK(t.substr(t.size() - 3) == "\xE2\x80\xA6");
}

TEST_CASE("scan_file: CRLF line endings") {
  Fixture fx;
  const std::string text = "2026-01-01T10:00:00Z hello win\r\nhello two\r\n";
  auto f = fx.file("node-01", "app", text);
  auto r = fx.scan(f);
  CHECK(r.lines == 2);
  CHECK(r.lines_invalid_utf8 == 0);
  REQUIRE(r.events.size() == 2);
  CHECK(r.events[0].where.text == "2026-01-01T10:00:00Z hello win");
  CHECK(r.events[1].where.text == "hello two");
  CHECK(r.events[1].where.offset == 32);
  CHECK(fx.field(r.events[1], "who").s == "two");
  CHECK(r.events[1].where.ts == kT0);
}

// Regression: with CRLF line endings, a regex anchored with `$` never matches. The
// scanner strips the '\r' before RE2 sees the line, but Hyperscan scans the raw
// buffer, where `$` (multiline) matches only before '\n', i.e. after the '\r';
// the line is never flagged, so the extractor never runs (runtime/scanner_stream.cpp
// Stream::chunk). The same line with LF, or through scan_lines, matches.
// Repro: a bundle whose logs/<host>/app.log has "the job done\r\n" and an
// extractor `match /job done$/` yields no event.
TEST_CASE("scan_file: `$`-anchored regexes match CRLF lines") {
  Fixture fx;
  auto lf = fx.scan(fx.file("node-01", "app", "the job done\n"));
  REQUIRE(lf.events.size() == 1);  // control: the extractor works on LF lines
  auto crlf = fx.scan(fx.file("node-02", "app", "the job done\r\n"));
  CHECK(crlf.events.size() == 1);
}

TEST_CASE("scan_file: a file without a trailing newline still has its last line") {
  Fixture fx;
  auto r = fx.scan(fx.file("node-01", "app", "2026-01-01T10:00:00Z hello one\nhello two"));
  CHECK(r.lines == 2);
  CHECK(who_of(fx, r) == std::vector<std::string>{"one", "two"});
  CHECK(r.events[1].where.line == 2);
  CHECK(r.events[1].where.text == "hello two");
  CHECK(r.events[1].where.ts == kT0);
  auto done = fx.scan(fx.file("node-02", "app", "the job done"));
  CHECK(done.events.size() == 1);  // `$` at the very end of the file
}

// Regression: ScanResult::bytes (reported as coverage `bytes_read`) is the sum of
// (line length + 1) over the lines processed, not the bytes read: a last line
// without '\n' adds a byte that is not in the file, and a line cut at max_line
// contributes only its kept head (runtime/scanner_stream.cpp Stream::line).
// Repro: `printf 'hello a\nhello b' > logs/node-01/app.log` (15 bytes) reports
// bytes_read 16 for the app source.
TEST_CASE("scan_file: bytes counts the bytes of the file") {
  Fixture fx;
  auto no_newline = fx.file("node-01", "app", "hello a\nhello b");
  CHECK(fx.scan(no_newline).bytes == 15);
  ScanOptions opt;
  opt.max_line = 100;
  const std::string content = "hello long " + std::string(1000, 'z') + "\nhello b\n";
  auto cut = fx.file("node-02", "app", content);
  CHECK(fx.scan(cut, opt).bytes == static_cast<int64_t>(content.size()));
}

TEST_CASE("scan_file: an empty file and blank lines") {
  Fixture fx;
  auto empty = fx.scan(fx.file("node-01", "app", ""));
  CHECK(empty.error.empty());
  CHECK(empty.lines == 0);
  CHECK(empty.bytes == 0);
  CHECK(empty.events.empty());
  auto blank = fx.scan(fx.file("node-02", "app", "\n\n\nhello x\n"));
  CHECK(blank.lines == 4);
  REQUIRE(blank.events.size() == 1);
  CHECK(blank.events[0].where.line == 4);
  CHECK(blank.events[0].where.offset == 3);
}

TEST_CASE("scan_file: an unreadable file is an error on the result, not a crash") {
  Fixture fx;
  LogFile f;
  f.host = "node-01";
  f.source = "app";
  f.display_path = "logs/node-01/app.log";
  f.path = (fx.dir.path() / "does-not-exist.log").string();
  auto r = fx.scan(f);
  CHECK(r.error.find("logs/node-01/app.log") != std::string::npos);
  CHECK(r.lines == 0);
  CHECK(r.events.empty());
}

TEST_CASE("scan_file: sources without extractors are read and counted, with no events") {
  Fixture fx;
  auto r = fx.scan(fx.file("node-01", "fabricmanager", "[Jul 23 2024 07:53:55] [ERROR] hello fm\nplain\n"));
  CHECK(r.lines == 2);
  CHECK(r.events_without_time == 0);
  CHECK(r.events.empty());
}

TEST_CASE("scan_file: control-plane files mark their events") {
  Fixture fx;
  auto r = fx.scan(fx.file("slurmctl", "app", "hello ctl\n", true));
  REQUIRE(r.events.size() == 1);
  CHECK(r.control_plane);
  CHECK(r.events[0].control_plane);
  CHECK(r.events[0].host == "slurmctl");
}

TEST_CASE("scan_file: one line can feed several extractors, once each") {
  Fixture fx;
  auto r = fx.scan(fx.file("node-01", "app", "say hello there hello again\n"));
  REQUIRE(r.events.size() == 2);
  std::vector<std::string> kinds = {fx.kind_of(r.events[0]), fx.kind_of(r.events[1])};
  std::sort(kinds.begin(), kinds.end());
  CHECK(kinds == std::vector<std::string>{"app.hello", "app.say"});
  for (const auto& e : r.events)
    if (fx.kind_of(e) == "app.hello") CHECK(fx.field(e, "who").s == "there");  // the first match supplies captures
}

TEST_CASE("scan_file: the per-file event cap counts what it drops") {
  Fixture fx;
  ScanOptions opt;
  opt.max_events_per_file = 3;
  std::string text;
  for (int i = 0; i < 10; ++i) text += "hello n" + std::to_string(i) + "\n";
  auto r = fx.scan(fx.file("node-01", "app", text), opt);
  CHECK(r.events.size() == 3);
  CHECK(r.events_over_cap == 7);
  CHECK(who_of(fx, r) == std::vector<std::string>{"n0", "n1", "n2"});
}

TEST_CASE("scan_file: many lines across buffer refills keep numbers and offsets exact") {
  Fixture fx;
  // About 9 MiB of lines, so the 4 MiB buffer is refilled and lines straddle its edge.
  std::string text;
  std::vector<int64_t> offsets;
  const std::string pad(200, '.');
  int n = 0;
  while (text.size() < 9u * 1024 * 1024) {
    offsets.push_back(static_cast<int64_t>(text.size()));
    text += (n % 1000 == 0 ? "hello m" + std::to_string(n) + " " : "noise ") + pad + "\n";
    ++n;
  }
  auto r = fx.scan(fx.file("node-01", "app", text));
  CHECK(r.lines == n);
  CHECK(r.lines_truncated == 0);
  size_t expected_events = static_cast<size_t>((n + 999) / 1000);
  REQUIRE(r.events.size() == expected_events);
  for (size_t i = 0; i < r.events.size(); ++i) {
    const int64_t line_index = static_cast<int64_t>(i) * 1000;
    CAPTURE(line_index);
    CHECK(r.events[i].where.line == line_index + 1);
    CHECK(r.events[i].where.offset == offsets[static_cast<size_t>(line_index)]);
    CHECK(fx.field(r.events[i], "who").s == "m" + std::to_string(line_index));
  }
}

TEST_CASE("scan_lines: in-memory lines with given numbers and times") {
  Fixture fx;
  Scanner scanner(fx.program);
  auto r = scanner.scan_lines("node-03", "app", "observations.jsonl", false,
                              {"hello one", "2026-01-01T10:00:00Z hello two", "hello three\nwith newline"},
                              {10, 20, 30}, {kT0 + 60 * kSec, std::nullopt, std::nullopt}, ScanOptions{});
  REQUIRE(r.events.size() == 3);
  CHECK(r.events[0].where.line == 10);
  CHECK(r.events[0].where.file == "observations.jsonl");
  // A given time wins over the line and is marked as coming from the observation.
  CHECK(r.events[0].where.ts == kT0 + 60 * kSec);
  CHECK(r.events[0].where.ts_origin == "observation");
  CHECK(r.events[1].where.ts == kT0);
  CHECK(r.events[1].where.ts_origin == "line");
  CHECK(r.events[2].where.ts == kT0);
  CHECK(r.events[2].where.ts_origin == "inherited");
  // An embedded newline cannot split an observation into two lines.
  CHECK(r.events[2].where.text == "hello three with newline");
  CHECK(r.lines == 3);
}

TEST_CASE("scan_single_line: what one extractor emits for one line") {
  Fixture fx;
  Scanner scanner(fx.program);
  const auto& cat = fx.program->catalog();
  int32_t hello = -1, say = -1;
  for (size_t i = 0; i < cat.extractors.size(); ++i) {
    if (cat.extractors[i].name == "Hello") hello = static_cast<int32_t>(i);
    if (cat.extractors[i].name == "Say") say = static_cast<int32_t>(i);
  }
  auto only_hello = scanner.scan_single_line("app", "say hello you", hello);
  REQUIRE(only_hello.size() == 1);
  CHECK(only_hello[0].producer == "Hello");
  auto only_say = scanner.scan_single_line("app", "say hello you", say);
  REQUIRE(only_say.size() == 1);
  CHECK(fx.field(only_say[0], "what").s == "hello you");
  CHECK(scanner.scan_single_line("app", "say hello you", -1).size() == 2);
  CHECK(scanner.scan_single_line("kernel", "hello you", -1).empty());
}

namespace {

// Everything a scan reports about a file, as one comparable string.
std::string summary(Fixture& fx, const ScanResult& r) {
  std::string s = "lines=" + std::to_string(r.lines) + " bytes=" + std::to_string(r.bytes) +
                  " out=" + std::to_string(r.lines_out_of_scope) + " utf8=" + std::to_string(r.lines_invalid_utf8) +
                  " cut=" + std::to_string(r.lines_truncated) + " untimed=" + std::to_string(r.events_without_time) +
                  " ev_out=" + std::to_string(r.events_out_of_scope) + " err=" + r.error + "\n";
  for (const auto& e : r.events) {
    s += fx.kind_of(e) + " line=" + std::to_string(e.where.line) + " off=" + std::to_string(e.where.offset) +
         " ts=" + (e.where.ts ? std::to_string(*e.where.ts) : "-") + " " + std::string(e.where.ts_origin) + " [" + e.where.text + "]";
    for (const auto& f : e.fields) s += " " + (f.type == Type::String ? f.s : std::to_string(f.i));
    s += "\n";
  }
  return s;
}

std::string stamp(int64_t second) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "2026-01-01T%02d:%02d:%02dZ", static_cast<int>(10 + second / 3600),
                static_cast<int>(second / 60 % 60), static_cast<int>(second % 60));
  return buf;
}

}  // namespace

TEST_CASE("scan_file: mapped and read windows give the same result, at every window edge") {
  Fixture fx;
  // About 13 MiB: stamped and unstamped lines, events spread so some lines
  // straddle the 4 MiB windows, a line between max_line and the buffer size,
  // a line longer than the buffer, invalid UTF-8, and no final newline.
  std::string text;
  const std::string pad(150, '.');
  int n = 0;
  while (text.size() < 13u * 1024 * 1024) {
    if (n % 997 == 0) text += stamp(n / 1000) + " hello w" + std::to_string(n) + " " + pad + "\n";
    else if (n % 1499 == 0) text += "say untimed " + std::to_string(n) + "\n";
    else if (n % 3 == 0) text += stamp(n / 1000) + " noise " + pad + "\n";
    else text += "noise " + pad + "\n";
    if (n == 20000) text += "hello long " + std::string(200000, 'l') + "\n";
    if (n == 40000) text += "hello giant " + std::string(Scanner::kBufferSize + 12345, 'g') + " hello tail\n";
    if (n == 50000) text += "say caf\xC3 broken\n";
    ++n;
  }
  text += stamp(7000) + " hello last";
  auto f = fx.file("node-01", "app", text);
  for (bool scoped : {false, true}) {
    CAPTURE(scoped);
    ScanOptions mapped;
    mapped.map_min_bytes = 0;
    mapped.max_line = 100000;
    if (scoped) {  // the scope starts and ends inside the file
      mapped.scope_start = kT0 + 10 * kSec;
      mapped.scope_end = kT0 + 40 * kSec;
    }
    ScanOptions read = mapped;
    read.map_files = false;
    auto a = fx.scan(f, mapped), b = fx.scan(f, read);
    CHECK(a.bytes == static_cast<int64_t>(text.size()));
    CHECK(a.lines_truncated == 2);
    CHECK(a.lines_invalid_utf8 == 1);
    CHECK(a.events.size() > 50);
    CHECK(summary(fx, a) == summary(fx, b));
  }
}

TEST_CASE("scan_file: a line longer than the read window is read whole, up to the buffer size") {
  // The read window (Scanner::kReadWindow) grows only for a line it cannot
  // hold: a 300 KB line and a 900 KB one stay whole (under max_line), a 2 MB
  // one is cut at max_line, one longer than kBufferSize has its head kept;
  // each is one line, counted once, and the lines after them keep their
  // numbers. Reading and mapping agree.
  Fixture fx;
  std::string text;
  int64_t lines = 0;
  std::vector<int64_t> hello_lines;
  auto add = [&](const std::string& line) {
    if (line.rfind("hello ", 0) == 0) hello_lines.push_back(lines + 1);
    text += line + "\n";
    ++lines;
  };
  for (int i = 0; i < 3000; ++i) add("noise " + std::to_string(i));
  add("hello w300k " + std::string(300 * 1024, 'a'));
  add("hello after300k");
  add("hello w900k " + std::string(900 * 1024, 'b'));
  for (int i = 0; i < 2000; ++i) add("noise " + std::to_string(i));
  add("hello w2m " + std::string(2 * 1024 * 1024, 'c'));
  add("hello after2m");
  add("hello giant " + std::string(Scanner::kBufferSize + 4096, 'd'));
  add("hello aftergiant");
  for (int i = 0; i < 2000; ++i) add("noise " + std::to_string(i));
  add("hello last");
  auto f = fx.file("node-01", "app", text);
  ScanOptions read;
  read.map_files = false;
  ScanOptions mapped = read;
  mapped.map_files = true;
  mapped.map_min_bytes = 0;
  auto a = fx.scan(f, read), b = fx.scan(f, mapped);
  CHECK(a.lines == lines);
  CHECK(a.bytes == static_cast<int64_t>(text.size()));
  CHECK(a.lines_truncated == 2);  // the 2 MB line (over max_line) and the giant
  REQUIRE(a.events.size() == hello_lines.size());
  for (size_t i = 0; i < a.events.size(); ++i) CHECK(a.events[i].where.line == hello_lines[i]);
  CHECK(fx.field(a.events[0], "who").s == "w300k");
  CHECK(fx.field(a.events[2], "who").s == "w900k");
  CHECK(fx.field(a.events.back(), "who").s == "last");
  CHECK(summary(fx, a) == summary(fx, b));
}

TEST_CASE("scan_file: files ending at, just before and just after a window edge") {
  Fixture fx;
  for (size_t size : {Scanner::kBufferSize - 1, Scanner::kBufferSize, Scanner::kBufferSize + 1, 2 * Scanner::kBufferSize}) {
    for (bool newline_at_end : {true, false}) {
      // Lines of 100 bytes (99 + '\n'), then a last line that fills up to `size`.
      std::string text;
      int64_t lines = 0;
      while (text.size() + 100 + 200 <= size) {
        std::string line = (lines % 5000 == 0 ? "hello n" + std::to_string(lines) + " " : std::string("x ")) + std::string(99, 'p');
        line.resize(99);
        text += line + "\n";
        ++lines;
      }
      const size_t last_offset = text.size();
      text += "hello end " + std::string(size - text.size() - 10 - (newline_at_end ? 1 : 0), 'e');
      if (newline_at_end) text += "\n";
      ++lines;
      REQUIRE(text.size() == size);
      CAPTURE(size);
      CAPTURE(newline_at_end);
      for (bool map : {true, false}) {
        CAPTURE(map);
        ScanOptions opt;
        opt.map_files = map;
        opt.map_min_bytes = 0;
        auto r = fx.scan(fx.file("node-01", "app", text), opt);
        CHECK(r.bytes == static_cast<int64_t>(size));
        CHECK(r.lines == lines);
        REQUIRE(!r.events.empty());
        CHECK(r.events.back().where.line == r.lines);
        CHECK(r.events.back().where.offset == static_cast<int64_t>(last_offset));
        CHECK(fx.field(r.events.back(), "who").s == "end");
        CHECK(fx.field(r.events.front(), "who").s == "n0");
      }
    }
  }
}

TEST_CASE("scan_file: the read path handles an empty file, a missing file and a directory") {
  Fixture fx;
  ScanOptions opt;
  opt.map_files = false;
  auto empty = fx.scan(fx.file("node-01", "app", ""), opt);
  CHECK(empty.error.empty());
  CHECK(empty.lines == 0);
  CHECK(empty.bytes == 0);
  for (bool map : {true, false}) {
    opt.map_files = map;
    opt.map_min_bytes = 0;
    LogFile dir;
    dir.host = "node-01";
    dir.source = "app";
    dir.display_path = "logs/node-01";
    dir.path = (fx.dir.path() / "logs" / "node-01").string();
    auto r = fx.scan(dir, opt);
    CHECK_FALSE(r.error.empty());
    CHECK(r.events.empty());
  }
}

TEST_CASE("scan_file: atoms taken as present never lose a line a regex matches") {
  // Each regex needs a frequent word ("step ", "loss ", "error") next to a
  // rarer literal; the database scans only the atoms it needs (Program
  // chooses, the scanner takes the rest as present). Every line the regexes
  // match must still give its event, and nothing else may.
  auto program = program_for(R"(
extractor Oom from app {
  match /[Ss]tep (?<n>\d+) exceeded memory limit/
  emit app.oom { n: int(n) }
  test { line "step 12 exceeded memory limit" expect app.oom { n: 12 } }
  test { line "step 12" expect none }
}
extractor Loss from app {
  match /loss (?:is|became) (?<v>nan|inf)\b/
  emit app.loss { v: v }
  test { line "loss became nan" expect app.loss { v: "nan" } }
  test { line "loss 2.0" expect none }
}
extractor Err from app {
  match /(?<w>\w+(?:Error|Exit)): (?<m>.*)/
  emit app.err { w: w, m: m }
  test { line "ValueError: bad" expect app.err { w: "ValueError", m: "bad" } }
  test { line "error rate" expect none }
}
)");
  // The choice itself: the frequent word is taken as present, the long literal scanned.
  const auto* db = program->database_for("app");
  REQUIRE(db != nullptr);
  std::vector<std::string> implied, scanned;
  for (int a : db->implied_atoms) implied.push_back(db->atoms[static_cast<size_t>(a)]);
  for (int a : db->atom_index) scanned.push_back(db->atoms[static_cast<size_t>(a)]);
  CHECK(std::find(implied.begin(), implied.end(), "step ") != implied.end());
  CHECK(std::find(scanned.begin(), scanned.end(), " exceeded memory limit") != scanned.end());
  CHECK(scanned.size() + implied.size() == db->atoms.size());
  CHECK(static_cast<int32_t>(scanned.size()) == db->atom_count);
  TempDir dir;
  std::string text;
  std::vector<std::string> expected;
  for (int i = 0; i < 3000; ++i) {
    text += "step " + std::to_string(i) + " loss 2." + std::to_string(i % 10) + " error rate 0\n";
    if (i % 500 == 7) {
      text += "Step " + std::to_string(i) + " exceeded memory limit (1 > 0), being killed\n";
      expected.push_back("app.oom " + std::to_string(i));
    }
    if (i % 700 == 3) {
      text += "at step " + std::to_string(i) + " loss is inf, skipping\n";
      expected.push_back("app.loss inf");
    }
    if (i % 900 == 1) {
      text += "SystemExit: code " + std::to_string(i) + "\n";
      expected.push_back("app.err SystemExit");
    }
    if (i % 800 == 5) text += "STEP 1 EXCEEDED MEMORY LIMIT; loss is NaNa; error: none\n";  // no regex matches
  }
  auto p = dir.write("logs/node-01/app.log", text);
  LogFile f;
  f.host = "node-01";
  f.source = "app";
  f.display_path = "logs/node-01/app.log";
  f.path = p.string();
  Scanner scanner(program);
  auto r = scanner.scan_file(f, ScanOptions{});
  const auto& cat = program->catalog();
  std::vector<std::string> got;
  for (const auto& e : r.events) {
    const auto& kind = cat.event_kinds[static_cast<size_t>(e.kind)];
    std::string s = kind.name + " ";
    const auto& v = e.fields[static_cast<size_t>(kind.slot(cat.field_id(kind.name == "app.oom" ? "n" : kind.name == "app.loss" ? "v" : "w")))];
    s += v.type == Type::String ? v.s : std::to_string(v.i);
    got.push_back(s);
  }
  CHECK(got == expected);
  // The same lines one at a time (the in-memory path) agree.
  std::vector<std::string> lines;
  for (auto line : split(text, '\n')) lines.emplace_back(line);
  lines.pop_back();  // after the final '\n'

  auto m = scanner.scan_lines("node-01", "app", "mem", false, lines, {}, {}, ScanOptions{});
  CHECK(m.events.size() == r.events.size());
}

namespace {

// Scans `f` with the file split across `helpers` threads besides the owner.
ScanResult scan_split(Fixture& fx, const LogFile& f, const ScanOptions& opt, int helpers) {
  ScanHelpers shared(1);
  std::vector<std::thread> pool;
  std::vector<std::unique_ptr<Scanner>> scanners;
  for (int i = 0; i < helpers; ++i) scanners.push_back(std::make_unique<Scanner>(fx.program));
  for (int i = 0; i < helpers; ++i) pool.emplace_back([&, i] { shared.help(*scanners[static_cast<size_t>(i)]); });
  Scanner owner(fx.program);
  ScanResult r = owner.scan_file(f, opt, &shared);
  for (auto& t : pool) t.join();
  return r;
}

}  // namespace

TEST_CASE("scan_file split across threads: the same result as one thread, whatever depends on earlier lines") {
  Fixture fx;
  // About 30 MiB of kernel and app lines in many windows: leading untimed
  // lines, dmesg boot seconds anchored only later (by a syslog line with
  // both) and re-anchored, unstamped lines inheriting across window edges,
  // the scope starting and ending inside the file, CRLF, invalid UTF-8, a
  // line longer than the window, and no final newline.
  std::string text;
  const std::string pad(120, '.');
  text += "hello before any time\nsay nothing yet\n";
  int n = 0;
  while (text.size() < 30u * 1024 * 1024) {
    int64_t sec = n / 700;
    if (n < 30000 && n % 101 == 0) text += "[ " + std::to_string(1000 + n) + ".250000] NVRM: Xid (PCI:0000:3b:00): 13, boot-only\n";
    else if (n == 30000) text += "Jan  1 10:00:30 node-01 kernel: [ 31000.000000] NVRM: Xid (PCI:0000:3b:00): 79, anchors\n";
    else if (n % 211 == 0) text += "[ " + std::to_string(31000 + n / 10) + ".5] NVRM: Xid (PCI:0000:3b:00): 45, anchored\n";
    else if (n % 97 == 0) text += stamp(sec) + " hello w" + std::to_string(n) + " " + pad + "\r\n";
    else if (n % 89 == 0) text += "say untimed " + std::to_string(n) + "\n";
    else if (n % 5 == 0) text += stamp(sec) + " noise " + pad + "\n";
    else text += "noise " + pad + "\n";
    if (n == 70000) text += "hello giant " + std::string(Scanner::kBufferSize + 777, 'g') + " hello tail\n";
    if (n == 90000) text += "say caf\xC3 broken\n";
    if (n == 120000) text += "Jan  1 10:03:00 node-01 kernel: [ 50000.000000] NVRM: Xid (PCI:0000:3b:00): 48, re-anchors\n";
    ++n;
  }
  text += stamp(n / 700) + " hello last";
  for (std::string source : {"app", "kernel"}) {
    auto f = fx.file("node-01", source, text);
    for (bool scoped : {false, true}) {
      CAPTURE(source);
      CAPTURE(scoped);
      ScanOptions opt = year_2026();
      opt.max_line = 100000;
      if (scoped) {
        opt.scope_start = kT0 + 40 * kSec;
        opt.scope_end = kT0 + 150 * kSec;
      }
      const ScanResult sequential = fx.scan(f, opt);
      const std::string one = summary(fx, sequential);
      CHECK(sequential.events.size() > 5);
      for (int helpers : {1, 2, 3}) {
        CAPTURE(helpers);
        CHECK(summary(fx, scan_split(fx, f, opt, helpers)) == one);
      }
      ScanOptions read = opt;
      read.map_files = false;
      CHECK(summary(fx, scan_split(fx, f, read, 1)) == one);
    }
  }
}

TEST_CASE("scan_file split across threads: helpers return once every split file is done, also a missing one") {
  Fixture fx;
  ScanHelpers shared(2);
  Scanner helper_scanner(fx.program);
  std::thread helper([&] { shared.help(helper_scanner); });
  Scanner owner(fx.program);
  LogFile missing;
  missing.host = "node-01";
  missing.source = "app";
  missing.display_path = "logs/node-01/app.log";
  missing.path = (fx.dir.path() / "nope.log").string();
  auto r = owner.scan_file(missing, ScanOptions{}, &shared);
  CHECK_FALSE(r.error.empty());
  auto small = fx.file("node-02", "app", stamp(1) + " hello a\n");
  auto s = owner.scan_file(small, ScanOptions{}, &shared);
  CHECK(s.events.size() == 1);
  helper.join();  // would hang if a finished file were not counted
}

// ------------------------------------------------------------- keep last N

namespace {

const char* const kKeepLastCatalog = R"(
extractor Step from app keep last 2 {
  match /step (?<n>\d+)/
  emit app.step { n: int(n) }
  test { line "step 4" expect app.step { n: 4 } }
  test { line "stop" expect none }
}
extractor Fail from app {
  match /fail (?<what>\w+)/
  emit app.fail { what: what }
  test { line "fail disk" expect app.fail { what: "disk" } }
  test { line "ok" expect none }
}
)";

std::vector<int64_t> steps_of(const std::shared_ptr<const Program>& program, const ScanResult& r) {
  const auto& cat = program->catalog();
  std::vector<int64_t> out;
  for (const auto& e : r.events)
    if (cat.event_kinds[static_cast<size_t>(e.kind)].name == "app.step")
      out.push_back(e.fields[static_cast<size_t>(cat.event_kinds[static_cast<size_t>(e.kind)].slot(cat.field_id("n")))].i);
  return out;
}

}  // namespace

TEST_CASE("scan_file: keep last N keeps the last N of the extractor, in file order, and counts the rest") {
  Fixture fx;
  auto program = program_for(kKeepLastCatalog);
  std::string text;
  for (int i = 1; i <= 10; ++i) text += "step " + std::to_string(i) + "\n";
  text += "fail disk\n";
  text += "step 11\n";
  Scanner scanner(program);
  auto r = scanner.scan_file(fx.file("node-01", "app", text), ScanOptions{});
  CHECK(steps_of(program, r) == std::vector<int64_t>{10, 11});
  CHECK(r.events_superseded == 9);
  REQUIRE(r.events.size() == 3);
  CHECK(r.events[0].where.line == 10);  // step 10, then the failure, then step 11
  CHECK(r.events[1].where.line == 11);
  CHECK(r.events[2].where.line == 12);
}

TEST_CASE("scan_file: keep last N is not crowded out by the event cap, nor crowds the failure out") {
  // 300,000 step lines and a failure at the end, under a cap of 1,000 events:
  // the failure is kept, memory holds two steps, and compaction moved the
  // pending and kept indices correctly (the leading untimed steps).
  Fixture fx;
  auto program = program_for(kKeepLastCatalog);
  std::string text;
  text.reserve(300000 * 12);
  for (int i = 1; i <= 300000; ++i) text += "step " + std::to_string(i) + "\n";
  text += "2026-01-01T10:00:00Z fail disk\n";
  ScanOptions opt;
  opt.max_events_per_file = 1000;
  Scanner scanner(program);
  auto r = scanner.scan_file(fx.file("node-01", "app", text), opt);
  CHECK(r.events_over_cap == 0);
  CHECK(r.events_superseded == 299998);
  CHECK(steps_of(program, r) == std::vector<int64_t>{299999, 300000});
  REQUIRE(r.events.size() == 3);
  CHECK(r.events[2].where.line == 300001);
  // The untimed steps before the file's first stamp take it (inherited from after).
  REQUIRE(r.events[0].where.ts.has_value());
  CHECK(*r.events[0].where.ts == kT0);
}

TEST_CASE("scan_file: keep last N counts only events in scope: later lines out of the window do not replace them") {
  Fixture fx;
  auto program = program_for(kKeepLastCatalog);
  std::string text = "2026-01-01T10:00:00Z step 1\n2026-01-01T10:01:00Z step 2\n2026-01-01T10:02:00Z step 3\n"
                     "2026-01-01T13:00:00Z step 90\n2026-01-01T13:01:00Z step 91\n2026-01-01T13:02:00Z step 92\n";
  ScanOptions opt;
  opt.scope_start = kT0 - 60 * kSec;
  opt.scope_end = kT0 + 3600 * kSec;
  Scanner scanner(program);
  auto r = scanner.scan_file(fx.file("node-01", "app", text), opt);
  CHECK(steps_of(program, r) == std::vector<int64_t>{2, 3});
  CHECK(r.events_superseded == 1);
  CHECK(r.events_out_of_scope == 3);
}

// ------------------------------------------------ lines relayed for a host

TEST_CASE("scan_file: a line a launcher relays for another workload node is that node's") {
  Fixture fx;
  ScanOptions opt;
  opt.workload_nodes = {"gpu-q-10", "gpu-q-13", "ip-10-0-0-9", "node-7"};
  opt.node_aliases = {{"10.0.0.6", "node-7"}};
  std::string text =
      "gpu-q-13: hello pdsh\n"                                  // pdsh, by name
      "10.0.0.6: hello alias\n"                                 // by an alias the context gives
      "gpu-q-13.cluster.example: hello fqdn\n"                  // by its short name
      "10.0.0.9: hello cloud\n"                                 // a cloud host named after its address
      "(RayWorkerWrapper pid=92234, ip=10.0.0.9) hello ray\n"   // Ray's forwarding
      "gpu-q-10: hello own\n"                                   // the file's own host
      "gpu-q-99: hello stranger\n"                              // not a workload node
      "  gpu-q-13: hello indented\n"                            // pdsh writes no indent
      "srun: hello srun\n";
  auto r = fx.scan(fx.file("gpu-q-10", "app", text), opt);
  std::vector<std::string> hosts;
  for (const auto& e : r.events) hosts.emplace_back(e.host.view());
  CHECK(hosts == std::vector<std::string>{"gpu-q-13", "node-7", "gpu-q-13", "ip-10-0-0-9", "ip-10-0-0-9", "gpu-q-10",
                                          "gpu-q-10", "gpu-q-10", "gpu-q-10"});
  for (const auto& e : r.events) CHECK(e.where.host == "gpu-q-10");  // the evidence still says where it was read
}

// The host each "hello" event of a scan was given, in file order.
std::vector<std::string> hello_hosts(const Fixture& fx, const ScanResult& r) {
  std::vector<std::string> hosts;
  for (const auto& e : r.events)
    if (fx.kind_of(e) == "app.hello") hosts.emplace_back(e.host.view());
  return hosts;
}

// Whether each "hello" event of a scan is marked unplaced, in file order.
std::vector<bool> hello_unplaced(const Fixture& fx, const ScanResult& r) {
  std::vector<bool> marks;
  for (const auto& e : r.events)
    if (fx.kind_of(e) == "app.hello") marks.push_back(e.unplaced);
  return marks;
}

// srun's task report, as the bundled catalog's slurm.attr reads it: the
// placement of srun --label's task tags.
const char* const kSrunTaskExtractor = R"(
extractor SrunTask from app {
  match /srun: error: (?<host>[\w.\-]+): tasks? [\d,\-]+: /
  emit app.srun_task { task_host: host }
  test { line "srun: error: n1: task 2: Exited with exit code 1" expect app.srun_task { task_host: "n1" } }
  test { line "srun: error: Node failure on n1" expect none }
}
)";

TEST_CASE("scan_file: a line srun --label tags with a task is the node srun says ran that task") {
  // srun's report lines are read where an extractor takes them (the bundled
  // catalog's task-exit extractor), as here.
  Fixture fx;
  fx.program = program_for(std::string(kCatalog) + kSrunTaskExtractor);
  ScanOptions opt;
  opt.workload_nodes = {"hkn0601", "hkn0606", "nid05"};
  std::string text =
      "22: hello pyxis\n"                                   // task 22: placed on hkn0606 below
      "3: hello other\n"                                    // task 3: one of tasks 0-3 on nid05
      "7: hello unplaced\n"                                 // no srun line names task 7
      "hello batch\n"                                       // no label
      "srun: error: hkn0606: task 22: Exited with exit code 1\n"
      "srun: error: nid05: tasks 0-3,9: Terminated\n";
  auto r = fx.scan(fx.file("hkn0601", "app", text), opt);
  const std::vector<std::string> hosts = hello_hosts(fx, r);
  CHECK(hosts == std::vector<std::string>{"hkn0606", "nid05", "hkn0601", "hkn0601"});
  // The file holds other nodes' tasks: a tag nothing places is some node's,
  // while the unlabelled line beside --label's is the batch script's own.
  CHECK(r.combined_output);
  CHECK(hello_unplaced(fx, r) == std::vector<bool>{false, false, true, false});
  CHECK(r.events_unplaced == 1);
}

TEST_CASE("scan_file: srun's collected output of other nodes' tasks, without --label, says no line's node") {
  Fixture fx;
  fx.program = program_for(std::string(kCatalog) + kSrunTaskExtractor);
  ScanOptions opt;
  opt.workload_nodes = {"ib1", "ib2", "ib3"};
  std::string text =
      "hello OutOfMemoryError on some task\n"
      "srun: error: ib2: task 4: Exited with exit code 1\n"
      "srun: error: ib1: tasks 0-1: Exited with exit code 1\n";
  std::vector<ScanResult> results;
  results.push_back(fx.scan(fx.file("ib1", "app", text), opt));
  const ScanResult& r = results[0];
  CHECK_FALSE(r.combined_output);  // not yet: ib2 may have written its own log
  CHECK(r.srun_reported_nodes == std::vector<std::string>{"ib2"});
  CHECK(hello_hosts(fx, r) == std::vector<std::string>{"ib1"});  // kept where it was collected
  CHECK(hello_unplaced(fx, r) == std::vector<bool>{true});       // provisionally not said to be written there
  CHECK(r.events_unplaced == 1);
  for (const auto& e : r.events)  // srun's reports name their node in their text
    if (fx.kind_of(e) == "app.srun_task") CHECK_FALSE(e.unplaced);

  SUBCASE("ib2 wrote no application log: the file is srun's collected output") {
    results.push_back(fx.scan(fx.file("ib3", "app", "hello ib3's own\n"), opt));  // not a node srun reported
    settle_srun_collected_output(results);
    CHECK(results[0].combined_output);
    CHECK(hello_unplaced(fx, results[0]) == std::vector<bool>{true});
    CHECK(results[0].events_unplaced == 1);
    CHECK(hello_unplaced(fx, results[1]) == std::vector<bool>{false});
  }
  SUBCASE("ib2 wrote its own: the file's lines are its host's") {
    results.push_back(fx.scan(fx.file("ib2", "app", "hello ib2's own\n"), opt));
    settle_srun_collected_output(results);
    CHECK_FALSE(results[0].combined_output);
    CHECK(hello_unplaced(fx, results[0]) == std::vector<bool>{false});
    CHECK(results[0].events_unplaced == 0);
  }
  SUBCASE("srun reporting only the file's own node's tasks: the file is that node's") {
    auto own = fx.scan(fx.file("ib1", "app", "hello OutOfMemoryError\nsrun: error: ib1: task 0: Exited with exit code 1\n"), opt);
    CHECK(own.srun_reported_nodes.empty());
    CHECK(hello_unplaced(fx, own) == std::vector<bool>{false});
    CHECK(own.events_unplaced == 0);
  }
  SUBCASE("a host that is not the workload's is no other node") {
    auto stray = fx.scan(fx.file("ib1", "app", "hello x\nsrun: error: login3: task 0: Exited with exit code 1\n"), opt);
    CHECK(stray.srun_reported_nodes.empty());
    CHECK(stray.events_unplaced == 0);
  }
}

TEST_CASE("scan_file: Open MPI and PyTorch rank tags go to the node the file's placements give the rank") {
  // Placement lines are read where an extractor takes them (the bundled
  // catalog's launchers.attr), as here. Each numbering stays in its own space:
  // srun's task 1 is not PyTorch's rank 1.
  Fixture fx;
  fx.program = program_for(std::string(kCatalog) + R"(
extractor Placed from app {
  match /MCW rank \d+ (?:is )?(?:not )?bound|^\s*host\s+: \S+\s*$|^\s*rank\s+: \d+ \(local_rank|srun: error: \S+: task/
  emit app.placed { }
  test { line "  host      : n2" expect app.placed }
  test { line "  time      : 2024-01-01_00:00:00" expect none }
}
)");
  ScanOptions opt;
  opt.workload_nodes = {"n1", "n2", "n3"};
  std::string text =
      "[n3:4711] MCW rank 5 bound to socket 0[core 5[hwt 0]]: [../BB]\n"
      "2019-06-02T16:13:44.884Z: [1,5]<stderr>:hello stamped mpi\n"  // rank 5: n3
      "[1,6]<stdout>:hello unplaced mpi\n"                             // no binding line for rank 6
      "[rank9]: hello torch\n"                                         // rank 9: n2 (failure record below)
      "[rank1]: hello torch rank 1\n"                                  // srun's task 1 is not torch rank 1
      "1: hello task 1\n"                                              // srun task 1: n3
      "x[rank9]: hello glued\n"                                        // not a tag
      "Root Cause (first observed failure):\n"
      "[0]:\n"
      "  host      : n2.cluster.local\n"
      "  rank      : 9 (local_rank: 1)\n"
      "  host      : n1\n"
      "  time      : 2024-01-01_00:00:00\n"
      "  rank      : 4 (local_rank: 0)\n"                              // not right after its host row
      "srun: error: n3: task 1: Exited with exit code 1\n";
  auto r = fx.scan(fx.file("n1", "app", text), opt);
  const std::vector<std::string> hosts = hello_hosts(fx, r);
  CHECK(hosts == std::vector<std::string>{"n3", "n1", "n2", "n1", "n3", "n1"});
  CHECK(r.events_rank_unplaced == 2);  // [1,6] and [rank1]
  CHECK(r.events_unplaced == 2);       // and in this combined output they name no node
}

TEST_CASE("scan_file: DeepSpeed's global_rank_mapping places PyTorch ranks, by FQDN too") {
  Fixture fx;
  fx.program = program_for(std::string(kCatalog) + R"attr(
extractor Mapping from app {
  match /global_rank_mapping=/
  emit app.placed { }
  test { line "global_rank_mapping=defaultdict(<class 'list'>, {'a': [0]})" expect app.placed }
  test { line "WORLD INFO DICT: {'a': [0]}" expect none }
}
)attr");
  ScanOptions opt;
  opt.workload_nodes = {"x1", "x2"};
  std::string text =
      "[rank5]: hello before the mapping\n"  // placed: the mapping is read once the file ends
      "[2022-12-02 21:47:16,624] [INFO] [launch.py:161:main] global_rank_mapping=defaultdict(<class 'list'>, "
      "{'x1.hsn.example.org': [0, 1, 2, 3], 'x2.hsn.example.org': [4, 5, 6, 7]})\n"
      "[rank2]: hello rank 2\n"
      "[rank8]: hello outside the mapping\n";
  auto r = fx.scan(fx.file("x1", "app", text), opt);
  const std::vector<std::string> hosts = hello_hosts(fx, r);
  CHECK(hosts == std::vector<std::string>{"x2", "x1", "x1"});
  CHECK(r.events_rank_unplaced == 1);
}

TEST_CASE("scan_file: the context's layout places what the file does not; the file's own placement wins") {
  Fixture fx;
  fx.program = program_for(std::string(kCatalog) + kSrunTaskExtractor);
  ScanOptions opt;
  opt.workload_nodes = {"n1", "n2", "n3"};
  opt.context_ranks = {{0, 7, "n1"}, {8, 15, "n2"}, {16, 23, "n3"}};
  opt.context_tasks = {{0, 0, "n1"}, {1, 1, "n2"}, {2, 2, "n3"}};
  std::string text =
      "[rank9]: hello torch 9\n"        // ranks 8-15: n2
      "[1,20]<stderr>:hello mpi 20\n"   // the same numbering: n3
      "2: hello task 2\n"               // srun task 2: n3
      "1: hello task 1\n"               // the file says n1 below, the context n2: the file wins
      "[rank30]: hello outside\n"       // no one places rank 30
      "srun: error: n1: task 1: Exited with exit code 1\n";
  auto r = fx.scan(fx.file("n1", "app", text), opt);
  const std::vector<std::string> hosts = hello_hosts(fx, r);
  CHECK(hosts == std::vector<std::string>{"n2", "n3", "n3", "n1", "n1"});
  CHECK(r.events_rank_unplaced == 1);
}
