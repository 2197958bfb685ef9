// The NDJSON writer the service's clients share: what it writes reads back
// through the reader as the same observations, log lines keep their line,
// offset and terminator, chunks hold whole lines, and empty files,
// invalid UTF-8 and unreadable files are reported.
#include "runtime/observation_writer.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/observation_reader.h"

using namespace culprit;

namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char tmpl[] = "/tmp/culprit-writer-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  LogFile file(const std::string& name, const std::string& content, const std::string& host = "node-01") {
    std::ofstream(path / name, std::ios::binary) << content;
    LogFile f;
    f.host = host;
    f.source = "app";
    f.display_path = "logs/" + host + "/" + name;
    f.path = (path / name).string();
    f.size = content.size();
    return f;
  }
};

// Everything the writer produces, in chunks of `target` bytes.
std::vector<std::string> drain(NdjsonObservationWriter& w, size_t target) {
  std::vector<std::string> chunks;
  std::string c;
  while (w.next(c, target)) chunks.push_back(c);
  return chunks;
}

std::vector<Observation> read_back(const std::string& ndjson) {
  std::vector<Observation> out;
  NdjsonObservationReader r([&](Observation&& o, int64_t) {
    out.push_back(std::move(o));
    return true;
  });
  REQUIRE(r.feed(ndjson.data(), ndjson.size()));
  REQUIRE(r.finish());
  return out;
}

}  // namespace

TEST_CASE("log lines keep their file, line, offset and terminator") {
  TempDir d;
  LogFile f = d.file("app.log", "first\nsecond line\nlast without newline");
  NdjsonObservationWriter w({}, {f});
  std::string all;
  for (auto& c : drain(w, 1 << 20)) all += c;
  CHECK(w.error().empty());
  auto obs = read_back(all);
  REQUIRE(obs.size() == 3);
  CHECK(obs[0].text == "first\n");
  CHECK(obs[0].line == 1);
  CHECK(obs[0].offset == 0);
  CHECK(obs[1].text == "second line\n");
  CHECK(obs[1].line == 2);
  CHECK(obs[1].offset == 6);
  CHECK(obs[2].text == "last without newline");
  CHECK(obs[2].offset == 18);
  for (const auto& o : obs) {
    CHECK(o.host == "node-01");
    CHECK(o.source == "app");
    CHECK(o.file == "logs/node-01/app.log");
  }
}

TEST_CASE("given observations round-trip and come before the files") {
  TempDir d;
  Observation text;
  text.host = "node-02";
  text.source = "kernel";
  text.ts = 1773453797123456789;
  text.text = "NVRM: Xid (PCI:0000:61:00): 79, pid=1234, GPU has fallen off the bus.";
  text.file = "observations.jsonl";
  text.line = 7;
  Observation metric;
  metric.host = "node-03";
  metric.source = "metrics";
  metric.is_metric = true;
  metric.metric = "DCGM_FI_DEV_XID_ERRORS";
  metric.value = 79;
  metric.labels = "gpu=3,pci_bus_id=00000000:61:00.0";
  metric.ts = 1773453798000000000;
  metric.file = "observations.jsonl";
  metric.line = 8;
  LogFile f = d.file("app.log", "a line\n");
  NdjsonObservationWriter w({text, metric}, {f});
  std::string all;
  for (auto& c : drain(w, 1 << 20)) all += c;
  auto obs = read_back(all);
  REQUIRE(obs.size() == 3);
  CHECK(obs[0].host == text.host);
  CHECK(obs[0].ts == text.ts);
  CHECK(obs[0].text == text.text);
  CHECK(obs[0].line == 7);
  CHECK(obs[1].is_metric);
  CHECK(obs[1].metric == metric.metric);
  CHECK(obs[1].value == metric.value);
  CHECK(obs[1].labels == metric.labels);
  CHECK(obs[1].ts == metric.ts);
  CHECK(obs[2].text == "a line\n");
  // Over borrowed evidence (a request sent again): the same lines each
  // time, and the evidence is left as it was.
  const std::vector<Observation> keep{text, metric};
  const std::vector<LogFile> files{f};
  for (int round = 0; round < 2; ++round) {
    NdjsonObservationWriter b(NdjsonObservationWriter::Borrow{}, keep, files);
    std::string again;
    for (auto& c : drain(b, 1 << 20)) again += c;
    CHECK(again == all);
  }
  CHECK(keep.size() == 2);
  CHECK(keep[0].text == text.text);
}

TEST_CASE("chunks hold whole lines and reach the target size") {
  TempDir d;
  std::string content;
  for (int i = 0; i < 1000; ++i) content += "line " + std::to_string(i) + " of the log\n";
  NdjsonObservationWriter w({}, {d.file("app.log", content)});
  auto chunks = drain(w, 4096);
  REQUIRE(chunks.size() > 5);
  size_t lines = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    CHECK(chunks[i].back() == '\n');
    if (i + 1 < chunks.size()) CHECK(chunks[i].size() >= 4096);
    lines += read_back(chunks[i]).size();
  }
  CHECK(lines == 1000);
}

TEST_CASE("empty files, invalid UTF-8 and unreadable files are reported") {
  TempDir d;
  LogFile empty = d.file("empty.log", "");
  LogFile bad = d.file("bad.log", "ok\n\xff\xfe broken\n", "node-02");
  NdjsonObservationWriter w({}, {empty, bad});
  std::string all;
  for (auto& c : drain(w, 1 << 20)) all += c;
  CHECK(w.error().empty());
  CHECK(w.empty_files() == std::vector<std::string>{"logs/node-01/empty.log"});
  CHECK(w.invalid_utf8_lines() == 1);
  auto obs = read_back(all);
  REQUIRE(obs.size() == 2);
  CHECK(obs[1].text.find("broken") != std::string::npos);

  LogFile gone = d.file("gone.log", "x\n");
  std::filesystem::remove(gone.path);
  NdjsonObservationWriter w2({}, {gone});
  std::string c;
  CHECK_FALSE(w2.next(c, 1024));
  CHECK(w2.error().find("cannot read") != std::string::npos);
  CHECK(w2.error().find("gone.log") != std::string::npos);
  CHECK_FALSE(w2.next(c, 1024));
}
