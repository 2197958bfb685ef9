// The NDJSON observation reader shared by bundles, the service and
// collectors: lines split across chunks, blank lines, CRLF, the context
// line, errors with their line, the line limit; and the file reader's
// refusal of what is not a regular file.
#include "runtime/observation_reader.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace culprit;

namespace {

struct Collected {
  std::vector<Observation> obs;
  std::vector<int64_t> lines;
};

// Feeds `text` in chunks of `chunk` bytes.
bool read_all(const std::string& text, size_t chunk, Collected& out, NdjsonObservationReader::Options opt,
              ObservationReadError* error = nullptr, std::optional<nlohmann::json>* context = nullptr) {
  NdjsonObservationReader r(
      [&](Observation&& o, int64_t line) {
        out.obs.push_back(std::move(o));
        out.lines.push_back(line);
        return true;
      },
      opt);
  bool ok = true;
  for (size_t i = 0; ok && i < text.size(); i += chunk) ok = r.feed(text.data() + i, std::min(chunk, text.size() - i));
  if (ok) ok = r.finish();
  if (error) *error = r.error();
  if (context) *context = r.context();
  return ok;
}

const std::string kTwo =
    "{\"host\":\"node-01\",\"source\":\"app\",\"text\":\"first line\"}\n"
    "\n"
    "{\"host\":\"node-02\",\"source\":\"kernel\",\"text\":\"second\",\"line\":7}\r\n"
    "{\"host\":\"node-02\",\"source\":\"dcgm\",\"ts\":\"2026-01-01T10:00:00Z\",\"metric\":\"M\",\"value\":1}";

}  // namespace

TEST_CASE("observation reader: the same observations whatever the chunk size") {
  for (size_t chunk : {1u, 2u, 7u, 64u, 100000u}) {
    Collected c;
    REQUIRE(read_all(kTwo, chunk, c, {}));
    REQUIRE(c.obs.size() == 3);
    CHECK(c.obs[0].text == "first line");
    CHECK(c.obs[1].text == "second");
    CHECK(c.obs[1].line == 7);       // given: kept
    CHECK(c.obs[0].line == 0);       // not given: no default from the reader
    CHECK(c.obs[0].file.empty());
    CHECK(c.obs[2].is_metric);
    CHECK(c.lines == std::vector<int64_t>{1, 3, 4});  // the blank line counts
  }
}

TEST_CASE("observation reader: errors say what and on which line, and stop the reader") {
  ObservationReadError e;
  Collected c;
  CHECK_FALSE(read_all("{\"host\":\"a\",\"source\":\"app\",\"text\":\"x\"}\n{\"host\":\n", 5, c, {}, &e));
  CHECK(e.kind == ObservationReadError::Kind::InvalidJson);
  CHECK(e.line == 2);
  CHECK(e.message.find("not valid JSON") == 0);
  CHECK(c.obs.size() == 1);

  Collected d;
  CHECK_FALSE(read_all("\n{\"host\":\"a\",\"source\":\"app\",\"txt\":\"x\"}\n", 3, d, {}, &e));
  CHECK(e.kind == ObservationReadError::Kind::Schema);
  CHECK(e.line == 2);
  CHECK(e.message == "unknown key 'txt'");
}

TEST_CASE("observation reader: a line over the limit is refused without buffering it") {
  NdjsonObservationReader::Options opt;
  opt.max_line = 64;
  ObservationReadError e;
  Collected c;
  std::string longline = "{\"host\":\"a\",\"source\":\"app\",\"text\":\"" + std::string(200, 'x') + "\"}\n";
  for (size_t chunk : {1u, 10u, 1000u}) {
    CHECK_FALSE(read_all("{\"host\":\"a\",\"source\":\"app\",\"text\":\"ok\"}\n" + longline, chunk, c, opt, &e));
    CHECK(e.kind == ObservationReadError::Kind::LineTooLong);
    CHECK(e.line == 2);
  }
  // Unterminated at the end: the same.
  CHECK_FALSE(read_all(longline.substr(0, longline.size() - 1), 3, c, opt, &e));
  CHECK(e.kind == ObservationReadError::Kind::LineTooLong);
}

TEST_CASE("observation reader: the context line, and a sink that refuses") {
  NdjsonObservationReader::Options opt;
  opt.first_line_is_context = true;
  Collected c;
  std::optional<nlohmann::json> ctx;
  REQUIRE(read_all("\n{\"workload_id\":\"w\"}\n" + kTwo, 9, c, opt, nullptr, &ctx));
  REQUIRE(ctx);
  CHECK((*ctx)["workload_id"] == "w");
  CHECK(c.obs.size() == 3);

  ObservationReadError e;
  CHECK_FALSE(read_all("[1]\n", 9, c, opt, &e));
  CHECK(e.kind == ObservationReadError::Kind::Schema);

  int n = 0;
  NdjsonObservationReader r([&](Observation&&, int64_t) { return ++n < 2; });
  CHECK_FALSE(r.feed(kTwo.data(), kTwo.size()));
  CHECK(r.error().kind == ObservationReadError::Kind::Refused);
  CHECK(r.error().line == 3);
}

TEST_CASE("observations file: bundle defaults; FIFOs, directories and missing files are errors, not end of file") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("culprit-obs-reader-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "observations.jsonl");
    f << kTwo;
  }
  std::vector<Observation> obs;
  std::string error;
  REQUIRE(read_observations_file((dir / "observations.jsonl").string(), obs, error));
  REQUIRE(obs.size() == 3);
  CHECK(obs[0].file == "observations.jsonl");
  CHECK(obs[0].line == 1);
  CHECK(obs[1].line == 7);

  obs.clear();
  fs::create_directories(dir / "adir.jsonl");
  CHECK_FALSE(read_observations_file((dir / "adir.jsonl").string(), obs, error));
  CHECK(error.find("not a regular file") != std::string::npos);

  REQUIRE(mkfifo((dir / "fifo.jsonl").c_str(), 0600) == 0);
  CHECK_FALSE(read_observations_file((dir / "fifo.jsonl").string(), obs, error));  // returns at once
  CHECK(error.find("not a regular file") != std::string::npos);

  CHECK_FALSE(read_observations_file((dir / "missing.jsonl").string(), obs, error));
  CHECK(error.find("cannot read") != std::string::npos);
  fs::remove_all(dir);
}
