// The files collector: templates, globs over rotations, gzip, and reading
// only the workload's window with the file's own line numbers and offsets.
#include "blueprint/collect/files_collector.h"

#include <doctest/doctest.h>
#include <zlib.h>

#include <fstream>

#include "base/limits.h"
#include "base/timestamp.h"
#include "tests/support/test_support.h"

using namespace culprit;
using namespace culprit::blueprint;

namespace {

int64_t t(const char* s) { return *parse_rfc3339(s); }

// One syslog-style line per `step` seconds from `from`, for `n` lines.
std::string syslog_lines(int64_t from, int n, int step, const std::string& host) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    std::string ts = format_rfc3339(from + static_cast<int64_t>(i) * step * 1000000000LL);
    out += ts + " " + host + " kernel: line " + std::to_string(i) + "\n";
  }
  return out;
}

void write_gzip(const std::filesystem::path& p, const std::string& text) {
  gzFile gz = gzopen(p.c_str(), "wb");
  REQUIRE(gz);
  REQUIRE(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
  gzclose(gz);
}

Attempt attempt(std::vector<std::string> nodes, const char* start, const char* end) {
  Attempt a;
  a.key = "static/test/42";
  a.context.workload_id = a.job_id = "42";
  a.context.nodes = std::move(nodes);
  a.context.start = t(start);
  a.context.end = t(end);
  return a;
}

Collected collect(const FilesCollectorConfig& cfg, const Attempt& a) {
  CollectRequest req;
  req.attempt = &a;
  req.scope_start = *a.context.start;
  req.scope_end = *a.context.end;
  Collected out;
  FilesCollector(cfg).collect(req, out);
  return out;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("files: a day-long ordered log is read only inside the window, with its own line numbers and offsets") {
  culprit::testing::TempDir dir;
  // 86,400 lines, one a second, on 2026-03-14; the window is one hour.
  auto path = dir.write("n1/kern.log", syslog_lines(t("2026-03-14T00:00:00Z"), 86400, 1, "n1"));
  FilesCollectorConfig cfg;
  cfg.sources.push_back({"kernel", (dir.path() / "{node}/kern.log").string(), "", "auto", 1});
  Attempt a = attempt({"n1"}, "2026-03-14T10:00:00Z", "2026-03-14T11:00:00Z");
  Collected c = collect(cfg, a);
  CHECK(c.files.empty());
  REQUIRE(c.observations.size() == 3601);
  std::string whole = slurp(path);
  const Observation& first = c.observations.front();
  CHECK(first.line == 36001);  // 10:00:00 is line 36,001 of the file
  CHECK(first.text.rfind("2026-03-14T10:00:00Z n1 kernel: line 36000\n", 0) == 0);
  CHECK(whole.substr(static_cast<size_t>(first.offset), first.text.size()) == first.text);
  const Observation& last = c.observations.back();
  CHECK(last.line == 39601);
  CHECK(whole.substr(static_cast<size_t>(last.offset), last.text.size()) == last.text);
  CHECK(first.host == "n1");
  CHECK(first.source == "kernel");
  CHECK(first.file == path.string());
  REQUIRE(c.collectors.size() == 1);
  CHECK(c.collectors[0].status == "ok");
  CHECK(c.collectors[0].observations == 3601);
  CHECK(c.collectors[0].nodes_covered == std::vector<std::string>{"n1"});
  // Far fewer bytes than the file: the window, not the day.
  CHECK(c.bytes < static_cast<int64_t>(whole.size()) / 20);
}

TEST_CASE("files: rotations by glob; wholly inside streamed whole, wholly outside skipped, gzip cut to the window") {
  culprit::testing::TempDir dir;
  // kern.log: today 12:00-13:00 (inside); kern.log.1: 08:00-09:00 (outside);
  // kern.log.2.gz: 10:00-12:00, the window starts at 11:30.
  dir.write("n1/kern.log", syslog_lines(t("2026-03-14T12:00:00Z"), 60, 60, "n1"));
  dir.write("n1/kern.log.1", syslog_lines(t("2026-03-14T08:00:00Z"), 60, 60, "n1"));
  write_gzip(dir.path() / "n1/kern.log.2.gz", syslog_lines(t("2026-03-14T10:00:00Z"), 120, 60, "n1"));
  FilesCollectorConfig cfg;
  cfg.sources.push_back({"kernel", (dir.path() / "{node}/kern.log*").string(), "", "auto", 1});
  Attempt a = attempt({"n1", "n2"}, "2026-03-14T11:30:00Z", "2026-03-14T13:30:00Z");
  Collected c = collect(cfg, a);
  REQUIRE(c.files.size() == 1);
  CHECK(c.files[0].path == (dir.path() / "n1/kern.log").string());
  CHECK(c.files_out_of_scope == 1);
  REQUIRE(c.observations.size() == 30);  // 11:30 .. 11:59 from the gzip
  CHECK(c.observations.front().line == 91);
  CHECK(c.observations.front().text.rfind("2026-03-14T11:30:00Z", 0) == 0);
  REQUIRE(c.collectors.size() == 1);
  CHECK(c.collectors[0].status == "partial");  // nothing for n2
  CHECK(c.collectors[0].reason.find("n2") != std::string::npos);
  CHECK(c.collectors[0].nodes_expected == std::vector<std::string>{"n1", "n2"});
  CHECK(c.collectors[0].nodes_covered == std::vector<std::string>{"n1"});
}

TEST_CASE("files: job output without timestamps is streamed whole; {batch_node}, {job_id}, {date}") {
  culprit::testing::TempDir dir;
  dir.write("jobs/42.out", "Traceback (most recent call last):\nRuntimeError: boom\n");
  dir.write("ctl/2026-03-14/slurmctld.log", "[2026-03-14T10:10:00.000] _job_complete: JobId=42 WEXITSTATUS 1\n");
  dir.write("ctl/2026-03-15/slurmctld.log", "[2026-03-15T00:10:00.000] unrelated\n");
  FilesCollectorConfig cfg;
  cfg.sources.push_back({"app", (dir.path() / "jobs/{job_id}.out").string(), "{batch_node}", "auto", 1});
  cfg.sources.push_back({"scheduler", (dir.path() / "ctl/{date}/slurmctld.log").string(), "ctl", "auto", 2});
  Attempt a = attempt({"g1", "g2"}, "2026-03-14T10:00:00Z", "2026-03-14T10:20:00Z");
  Collected c = collect(cfg, a);
  REQUIRE(c.files.size() == 2);
  CHECK(c.files[0].host == "g1");  // the first node
  CHECK(c.files[0].source == "app");
  CHECK(c.files[1].host == "ctl");
  REQUIRE(c.collectors.size() == 2);
  CHECK(c.collectors[0].source == "app");
  CHECK(c.collectors[0].status == "ok");
  CHECK(c.collectors[1].source == "scheduler");
  CHECK(c.collectors[1].status == "ok");
}

TEST_CASE("files: nothing found is 'empty' with the reason; unsafe names never reach the glob") {
  culprit::testing::TempDir dir;
  FilesCollectorConfig cfg;
  cfg.sources.push_back({"kernel", (dir.path() / "{node}/kern.log").string(), "", "auto", 1});
  Attempt a = attempt({"n1"}, "2026-03-14T10:00:00Z", "2026-03-14T11:00:00Z");
  Collected c = collect(cfg, a);
  REQUIRE(c.collectors.size() == 1);
  CHECK(c.collectors[0].status == "empty");
  CHECK(c.collectors[0].reason.find("no file matches") != std::string::npos);

  Attempt evil = attempt({"../../etc"}, "2026-03-14T10:00:00Z", "2026-03-14T11:00:00Z");
  c = collect(cfg, evil);
  REQUIRE(c.collectors.size() == 1);
  CHECK(c.collectors[0].status == "failed");
  CHECK(c.collectors[0].errors.size() == 1);
  PathPattern out;
  std::string why;
  CHECK_FALSE(expand_path_template("/x/{node}", "a/b", "", "k", a, out, why));
  CHECK(why.find("{node} value 'a/b' has '/'") == 0);
  CHECK(expand_path_template("/x/{node}/{source}-{date}", "n1", "2026-03-14", "kernel", a, out, why));
  CHECK(out.text == "/x/n1/kernel-2026-03-14");
  CHECK(out.root == "/x");
}

TEST_CASE("files: sources the catalog does not read are not read") {
  culprit::testing::TempDir dir;
  dir.write("n1/x.log", "hello\n");
  FilesCollectorConfig cfg;
  cfg.sources.push_back({"unread", (dir.path() / "{node}/x.log").string(), "", "auto", 1});
  Attempt a = attempt({"n1"}, "2026-03-14T10:00:00Z", "2026-03-14T11:00:00Z");
  CollectRequest req;
  req.attempt = &a;
  req.wanted_sources = {"kernel", "app"};
  Collected c;
  FilesCollector(cfg).collect(req, c);
  CHECK(c.files.empty());
  REQUIRE(c.collectors.size() == 1);
  CHECK(c.collectors[0].status == "empty");
  CHECK(c.collectors[0].reason.find("no extractor") != std::string::npos);
}

namespace {

bool has_error(const CollectorReport& r, const std::string& needle) {
  for (const auto& e : r.errors)
    if (e.find(needle) != std::string::npos) return true;
  return false;
}

int64_t held_bytes(const Collected& c) {
  int64_t n = 0;
  for (const auto& o : c.observations)
    n += static_cast<int64_t>(sizeof(Observation) + o.text.size() + o.host.size() + o.source.size() + o.file.size());
  return n;
}

}  // namespace

// Issue 38: a 1 MB gzip of repeated lines grew `culprit run` to 2.3 GB, and
// job output without timestamps was kept whole whatever its size.
TEST_CASE("files: a gzip that decompresses to more than one file may hold is cut at file_observation_bytes, reported") {
  culprit::testing::TempDir dir;
  std::string lines;
  for (int i = 0; i < 600000; ++i) lines += "step " + std::to_string(i) + " a job's output line without a timestamp\n";
  std::filesystem::create_directories(dir.path() / "n1");
  write_gzip(dir.path() / "n1/slurm-42.out", lines);
  FilesCollectorConfig cfg;
  cfg.sources.push_back({"app", (dir.path() / "{node}/slurm-{job_id}.out").string(), "", "auto", 1});
  Attempt a = attempt({"n1"}, "2026-03-14T10:00:00Z", "2026-03-14T11:00:00Z");
  Collected c = collect(cfg, a);
  REQUIRE(c.collectors.size() == 1);
  const CollectorReport& r = c.collectors[0];
  CHECK(r.status == "partial");
  CHECK(r.reason.find("cut at a limit") != std::string::npos);
  CHECK(has_error(r, "limit file_observation_bytes exceeded"));
  CHECK(held_bytes(c) <= static_cast<int64_t>(limits::kFileObservationBytes));
  REQUIRE(!c.observations.empty());
  CHECK(c.observations.size() < 600000);
  CHECK(c.observations.front().line == 1);
  CHECK(c.observations.back().line == static_cast<int64_t>(c.observations.size()));  // the first lines, in order
}

TEST_CASE("files: the lines of a plain file's window are cut at file_observation_bytes too") {
  culprit::testing::TempDir dir;
  // 500,000 lines, 100 a second, the window starting after the file's first line.
  std::string text;
  int64_t from = t("2026-03-14T09:00:00Z");
  for (int i = 0; i < 500000; ++i)
    text += format_rfc3339(from + static_cast<int64_t>(i) * 10000000LL) + " n1 kernel: line " + std::to_string(i) + "\n";
  dir.write("n1/kern.log", text);
  FilesCollectorConfig cfg;
  cfg.sources.push_back({"kernel", (dir.path() / "{node}/kern.log").string(), "", "auto", 1});
  Attempt a = attempt({"n1"}, "2026-03-14T09:00:01Z", "2026-03-14T12:00:00Z");
  Collected c = collect(cfg, a);
  REQUIRE(c.collectors.size() == 1);
  CHECK(c.files.empty());
  CHECK(c.collectors[0].status == "partial");
  CHECK(has_error(c.collectors[0], "limit file_observation_bytes exceeded"));
  CHECK(held_bytes(c) <= static_cast<int64_t>(limits::kFileObservationBytes));
  CHECK(c.observations.size() > 100000);
}

TEST_CASE("files: a gzip line without a newline is held cut at log_line, counted") {
  culprit::testing::TempDir dir;
  std::filesystem::create_directories(dir.path() / "n1");
  write_gzip(dir.path() / "n1/slurm-42.out", "first line\n" + std::string(8u << 20, 'x'));
  FilesCollectorConfig cfg;
  cfg.sources.push_back({"app", (dir.path() / "{node}/slurm-{job_id}.out").string(), "", "gzip", 1});
  Attempt a = attempt({"n1"}, "2026-03-14T10:00:00Z", "2026-03-14T11:00:00Z");
  Collected c = collect(cfg, a);
  REQUIRE(c.observations.size() == 2);
  CHECK(c.observations[0].text == "first line\n");
  CHECK(c.observations[1].text.size() == limits::kLogLine);
  CHECK(c.observations[1].offset == 11);
  CHECK(has_error(c.collectors[0], "limit log_line exceeded: 1 line is longer"));
}

TEST_CASE("files: decompression stops at gzip_file_bytes, even when no line is kept") {
  culprit::testing::TempDir dir;
  // 64 MiB of lines before the window, as one gzip member written 17 times
  // (a file of concatenated members decompresses to all of them): 1.06 GiB.
  std::string lines;
  std::string one = "2026-03-13T00:00:00Z n1 kernel: " + std::string(4000, 'a') + "\n";
  while (lines.size() < (64u << 20)) lines += one;
  std::filesystem::create_directories(dir.path() / "n1");
  auto member = dir.path() / "member.gz";
  write_gzip(member, lines);
  std::string bytes = slurp(member);
  {
    std::ofstream f(dir.path() / "n1/kern.log.1.gz", std::ios::binary);
    for (int i = 0; i < 17; ++i) f << bytes;
  }
  FilesCollectorConfig cfg;
  cfg.sources.push_back({"kernel", (dir.path() / "{node}/kern.log*").string(), "", "auto", 1});
  Attempt a = attempt({"n1"}, "2026-03-14T10:00:00Z", "2026-03-14T11:00:00Z");
  Collected c = collect(cfg, a);
  CHECK(c.observations.empty());
  REQUIRE(c.collectors.size() == 1);
  CHECK(c.collectors[0].status == "partial");
  CHECK(has_error(c.collectors[0], "limit gzip_file_bytes exceeded"));
}

TEST_CASE("files: source flight_recorder reads each node's Flight Recorder dumps and renders them as lines") {
  culprit::testing::TempDir dir;
  const std::string src = std::string(CULPRIT_SOURCE_DIR) + "/tests/runtime/data/flight_recorder/";
  dir.write("n1/nccl_trace_rank_0", slurp(src + "nccl_trace_rank_0"));
  dir.write("n1/nccl_trace_rank_1", slurp(src + "nccl_trace_rank_1"));
  dir.write("n2/nccl_trace_rank_2", slurp(src + "nccl_trace_rank_2"));
  dir.write("n2/nccl_trace_rank_x", "no rank in this name");
  dir.write("n2/nccl_trace_rank_3", std::string("\x80\x02" "cbuiltins\neval\n.", 18));  // refused: a GLOBAL
  FilesCollectorConfig cfg;
  cfg.sources.push_back({"flight_recorder", (dir.path() / "{node}/nccl_trace_rank_*").string(), "", "auto", 1});
  Attempt a = attempt({"n1", "n2"}, "2025-11-30T09:00:00Z", "2025-11-30T11:00:00Z");
  a.context.ranks = {{0, 1, "n1"}, {2, 3, "n2"}};
  Collected c = collect(cfg, a);
  REQUIRE(c.collectors.size() == 1);
  const auto& rep = c.collectors[0];
  CHECK(rep.source == "flight_recorder");
  CHECK(rep.nodes_covered == std::vector<std::string>{"n1", "n2"});
  REQUIRE(rep.errors.size() == 2);
  CHECK(rep.errors[0].find("nccl_trace_rank_3: not read: PK003") != std::string::npos);
  CHECK(rep.errors[1].find("nccl_trace_rank_x: not read: no rank at the end of its name") != std::string::npos);
  CHECK(c.files.empty());  // nothing for the scanner to stream: the dumps are lines already
  REQUIRE(c.observations.size() == 5 + 5 + 7);
  CHECK(c.observations[0].host == "n1");
  CHECK(c.observations[0].source == "flight_recorder");
  CHECK(c.observations[0].text == "flight recorder: rank 0 dump version 2.4 (nccl 2.21.5): 3 entries");
  // Rank 3's dump was refused: the group lines say it is missing, placed by the layout.
  CHECK(c.observations[1].text.find("1 rank without a dump: 3 (n2)") != std::string::npos);
  CHECK(c.observations[10].host == "n2");
  CHECK(rep.observations == 17);
}

TEST_CASE("files: source ras reads ncclras's JSON form whole and renders it; its text form stays lines") {
  culprit::testing::TempDir dir;
  dir.write("n1/ras.txt", R"({"nccl_version": "2.28.9", "timestamp": "2025-11-30 10:00:00", "communicators": [
    {"hash": "0x1", "size": 4, "ranks": [], "missing_ranks": [
      {"rank": 3, "host": "10.0.0.2", "pid": 77, "cuda_dev": 1, "nvml_dev": 1, "status": {"unresponsive": true}}]}]})");
  dir.write("n2/ras.txt", "2025-11-30T10:00:00Z Job summary\n");
  dir.write("n3/ras.txt", "{\"communicators\": \"none\"}");
  FilesCollectorConfig cfg;
  cfg.sources.push_back({"ras", (dir.path() / "{node}/ras.txt").string(), "", "auto", 1});
  Attempt a = attempt({"n1", "n2", "n3"}, "2025-11-30T09:00:00Z", "2025-11-30T11:00:00Z");
  a.context.ranks = {{0, 1, "n1"}, {2, 3, "n2"}};
  Collected c = collect(cfg, a);
  REQUIRE(c.collectors.size() == 1);
  const auto& rep = c.collectors[0];
  CHECK(rep.nodes_covered == std::vector<std::string>{"n1", "n2"});
  REQUIRE(rep.errors.size() == 1);
  CHECK(rep.errors[0].find("n3/ras.txt: not read: RS002: communicators is not an array") != std::string::npos);
  std::vector<std::string> texts;
  for (const auto& o : c.observations)
    if (o.host == "n1") texts.push_back(o.text);
  REQUIRE(texts.size() == 3);
  CHECK(texts[2] ==
        "nccl ras report: communicator 0x1 of 4 ranks (all the job's ranks) rank 3 missing: process 77 on node 10.0.0.2 managing GPU 1 "
        "is unresponsive");
  bool text_form = false;  // n2's text form, read as lines (streamed or kept)
  for (const auto& f : c.files) text_form |= f.host == "n2";
  for (const auto& o : c.observations) text_form |= o.host == "n2" && o.text.find("Job summary") != std::string::npos;
  CHECK(text_form);
}
