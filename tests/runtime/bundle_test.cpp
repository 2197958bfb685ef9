// Bundle tests: the context document (parse_context_json), the bundle layout
// on disk (load_bundle: which files are logs, which hosts are control plane,
// what is ignored), and normalized observations (parse_observation and the
// observations.jsonl carrier read by diagnose).
#include "runtime/bundle.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "runtime/diagnose.h"
#include "runtime/observation.h"
#include "tests/support/test_support.h"

using namespace culprit;
using culprit::testing::program_for;
using culprit::testing::TempDir;

namespace {

constexpr int64_t kSec = 1'000'000'000;

const char* const kDocumented = R"({
  "workload_id": "48213",
  "scheduler": "slurm",
  "start": "2026-03-14T01:00:02Z",
  "end": "2026-03-14T02:03:34Z",
  "nodes": ["node-03", "node-01", "node-02", "node-01"],
  "terminal": {"state": "failed", "exit_code": 1}
})";

// parse_context_json must fail, with a message containing `needle`.
void rejects(const std::string& json, const std::string& needle) {
  CAPTURE(json);
  WorkloadContext c;
  std::string error;
  CHECK_FALSE(parse_context_json(json, c, error));
  CAPTURE(error);
  CHECK(error.find(needle) != std::string::npos);
}

// A context document with one key replaced (or added) by raw JSON text.
std::string context_with(const std::string& key, const std::string& value) {
  nlohmann::json j = nlohmann::json::parse(kDocumented);
  j[key] = nlohmann::json::parse(value);
  return j.dump();
}

bool observation(const std::string& json, Observation& out, std::string& error) {
  return parse_observation(nlohmann::json::parse(json), out, error);
}

// parse_observation must fail, naming the problem.
void rejects_observation(const std::string& json, const std::string& needle) {
  CAPTURE(json);
  Observation o;
  std::string error;
  CHECK_FALSE(observation(json, o, error));
  CAPTURE(error);
  CHECK(error.find(needle) != std::string::npos);
}

}  // namespace

// ------------------------------------------------------------------ context

TEST_CASE("parse_context_json: the documented shape") {
  WorkloadContext c;
  std::string error;
  REQUIRE(parse_context_json(kDocumented, c, error));
  CHECK(error.empty());
  CHECK(c.workload_id == "48213");
  CHECK(c.scheduler == "slurm");
  CHECK(c.start == 1773450002LL * kSec);  // 2026-03-14T01:00:02Z
  CHECK(c.end == 1773453814LL * kSec);    // 2026-03-14T02:03:34Z
  // Sorted and de-duplicated.
  CHECK(c.nodes == std::vector<std::string>{"node-01", "node-02", "node-03"});
  // Terminal states are compared upper-case.
  CHECK(c.terminal.state == "FAILED");
  CHECK(c.terminal.exit_code == 1);
}

TEST_CASE("parse_context_json: optional keys") {
  WorkloadContext c;
  std::string error;
  REQUIRE(parse_context_json(R"({"workload_id": "x", "nodes": []})", c, error));
  CHECK(c.scheduler == "static");
  CHECK_FALSE(c.start.has_value());
  CHECK_FALSE(c.end.has_value());
  CHECK(c.nodes.empty());
  CHECK(c.terminal.state.empty());
  CHECK_FALSE(c.terminal.exit_code.has_value());

  REQUIRE(parse_context_json(R"({"workload_id": "x", "scheduler": "kubernetes", "nodes": ["a.b_c-1"],
                                 "start": "2026-01-01T10:00:00+01:00", "terminal": {"exit_code": null}})",
                             c, error));
  CHECK(c.scheduler == "kubernetes");
  CHECK(c.start == 1767258000LL * kSec);
  CHECK_FALSE(c.end.has_value());
  CHECK(c.nodes == std::vector<std::string>{"a.b_c-1"});
  CHECK_FALSE(c.terminal.exit_code.has_value());
  // A window of zero length is fine.
  REQUIRE(parse_context_json(R"({"workload_id": "x", "nodes": [], "start": "2026-01-01T10:00:00Z",
                                 "end": "2026-01-01T10:00:00Z"})",
                             c, error));
  CHECK(c.start == c.end);
}

TEST_CASE("parse_context_json: not JSON, not an object") {
  rejects("", "not valid JSON");
  rejects("{\"workload_id\": \"x\", ", "not valid JSON");
  rejects("{'workload_id': 'x'}", "not valid JSON");
  rejects("[]", "must be a JSON object");
  rejects("\"context\"", "must be a JSON object");
}

TEST_CASE("parse_context_json: unknown keys are rejected by name") {
  rejects(context_with("node", "[\"node-01\"]"), "unknown key 'node'");
  rejects(context_with("Nodes", "[\"node-01\"]"), "unknown key 'Nodes'");
  rejects(context_with("terminal", R"({"state": "FAILED", "exitcode": 1})"), "unknown key 'terminal.exitcode'");
}

TEST_CASE("parse_context_json: bad times and an end before the start") {
  rejects(context_with("start", "\"2026-03-14 01:00\""), "'start' is not an RFC 3339 time");
  rejects(context_with("end", "\"2026-03-14T02:03:34\""), "'end' is not an RFC 3339 time");  // zone required
  rejects(context_with("end", "\"2026-03-14T02:03:34\""), "it has no zone: add Z for UTC (2026-03-14T02:03:34Z)");
  rejects(context_with("start", "\"2026-02-30T00:00:00Z\""), "'start'");
  rejects(context_with("start", "\"yesterday\""), "yesterday");
  rejects(context_with("start", "1773450002"), "'start' must be a string");
  rejects(context_with("end", "\"2026-03-14T01:00:01Z\""), "'end' is before 'start'");
}

TEST_CASE("parse_context_json: bad node names") {
  for (const char* bad : {R"(["node 01"])", R"([""])", R"(["-node"])", R"([".node"])", R"(["a/b"])",
                          R"(["node-01", "nöde"])", R"([42])", R"([null])"}) {
    rejects(context_with("nodes", bad), "invalid node name");
  }
  // The offending name is quoted in the message.
  rejects(context_with("nodes", R"(["ok", "has space"])"), "\"has space\"");
}

TEST_CASE("parse_context_json: wrong types and missing required keys") {
  rejects(R"({"nodes": []})", "missing 'workload_id'");
  rejects(R"({"workload_id": "", "nodes": []})", "'workload_id' must not be empty");
  rejects(context_with("workload_id", "48213"), "'workload_id' must be a string");
  rejects(R"({"workload_id": "x"})", "'nodes' must be an array");
  rejects(context_with("nodes", "\"node-01\""), "'nodes' must be an array");
  rejects(context_with("scheduler", "\"pbs\""), "'scheduler' must be slurm, kubernetes or static");
  rejects(context_with("scheduler", "1"), "'scheduler' must be a string");
  rejects(context_with("terminal", "\"FAILED\""), "'terminal' must be an object");
  rejects(context_with("terminal", R"({"state": 1})"), "'terminal.state' must be a string");
  rejects(context_with("terminal", R"({"state": "FAILED", "exit_code": "1"})"), "'terminal.exit_code' must be an integer");
  rejects(context_with("terminal", R"({"state": "FAILED", "exit_code": 1.5})"), "'terminal.exit_code' must be an integer");
}

TEST_CASE("parse_context_json: on failure the output is left untouched") {
  WorkloadContext c;
  c.workload_id = "keep";
  std::string error;
  CHECK_FALSE(parse_context_json(context_with("end", "\"2020-01-01T00:00:00Z\""), c, error));
  CHECK(c.workload_id == "keep");
}

TEST_CASE("valid_host_name and valid_source_name") {
  for (const char* ok : {"node-01", "gpu-a100-017.cluster.local", "n_1", "NODE01", "1node"}) {
    CAPTURE(ok);
    CHECK(valid_host_name(ok));
  }
  for (const char* bad : {"", "-node", ".node", "node 01", "a/b", "a:b", "nöde"}) {
    CAPTURE(bad);
    CHECK_FALSE(valid_host_name(bad));
  }
  CHECK_FALSE(valid_host_name(std::string(254, 'a')));
  CHECK(valid_host_name(std::string(253, 'a')));
  for (const char* ok : {"app", "kernel", "fabric_manager", "dcgm-exporter", "net2"}) {
    CAPTURE(ok);
    CHECK(valid_source_name(ok));
  }
  for (const char* bad : {"", "App", "a b", "a.b", "a/b"}) {
    CAPTURE(bad);
    CHECK_FALSE(valid_source_name(bad));
  }
  CHECK_FALSE(valid_source_name(std::string(65, 'a')));
}

// ------------------------------------------------------------------ bundles

TEST_CASE("load_bundle: log files, control-plane hosts and ignored files") {
  TempDir dir;
  dir.write("context.json", R"({"workload_id": "j", "nodes": ["node-01", "node-02"]})");
  dir.write("logs/node-02/app.log", "b\n");
  dir.write("logs/node-01/kernel.log", "kk\n");
  dir.write("logs/node-01/app.log", "a\n");
  dir.write("logs/slurmctl/scheduler.log", "s\n");          // a host outside the job: control plane
  dir.write("logs/node-01/notes.txt", "x");                 // not .log
  dir.write("logs/node-01/App.log", "x");                   // not a source name
  dir.write("logs/node-01/rotated/app.log", "x");           // nested deeper than logs/<host>/
  dir.write("logs/stray.log", "x");                         // not inside a host directory
  dir.write("logs/bad host/app.log", "x");                  // not a host name
  dir.write("extra.txt", "x");
  dir.write("README.md", "about this bundle");              // documentation, not evidence
  dir.write("SOURCE.md", "where this incident came from");  // documentation, not evidence
  dir.write("expected-verdict.json", "{}");
  dir.write("observations.jsonl", "");
  Bundle b;
  std::string error;
  REQUIRE(load_bundle(dir.path().string(), b, error));
  CHECK(b.context.workload_id == "j");
  CHECK(b.root == dir.path().string());
  std::vector<std::string> listed;
  for (const auto& f : b.files) listed.push_back(f.host + "/" + f.source);
  CHECK(listed == std::vector<std::string>{"node-01/app", "node-01/kernel", "node-02/app", "slurmctl/scheduler"});
  CHECK(b.files[0].display_path == "logs/node-01/app.log");
  CHECK(b.files[0].path == (dir.path() / "logs/node-01/app.log").string());
  CHECK(b.files[1].size == 3);
  CHECK_FALSE(b.files[0].control_plane);
  CHECK_FALSE(b.files[2].control_plane);
  CHECK(b.files[3].control_plane);
  CHECK(b.observations_path == (dir.path() / "observations.jsonl").string());
  CHECK(b.ignored_files == std::vector<std::string>{"extra.txt", "logs/bad host", "logs/node-01/App.log",
                                                    "logs/node-01/notes.txt", "logs/node-01/rotated/app.log",
                                                    "logs/stray.log"});
  // request_from_bundle carries everything over.
  DiagnoseRequest req = request_from_bundle(b);
  CHECK(req.files.size() == 4);
  CHECK(req.ignored_files == b.ignored_files);
  CHECK(req.observations_path == b.observations_path);
  CHECK(req.context.nodes == b.context.nodes);
}

TEST_CASE("load_bundle: a bundle without logs/ is valid (observations only, or no evidence at all)") {
  TempDir dir;
  dir.write("context.json", R"({"workload_id": "j", "nodes": ["node-01"]})");
  Bundle b;
  std::string error;
  REQUIRE(load_bundle(dir.path().string(), b, error));
  CHECK(b.files.empty());
  CHECK(b.ignored_files.empty());
  CHECK(b.observations_path.empty());
}

TEST_CASE("load_bundle: errors name the problem") {
  TempDir dir;
  Bundle b;
  std::string error;
  SUBCASE("not a directory") {
    auto file = dir.write("file", "x");
    CHECK_FALSE(load_bundle(file.string(), b, error));
    CHECK(error.find("is not a directory") != std::string::npos);
    CHECK_FALSE(load_bundle((dir.path() / "missing").string(), b, error));
    CHECK(error.find("missing") != std::string::npos);
  }
  SUBCASE("no context.json") {
    dir.write("logs/node-01/app.log", "x\n");
    CHECK_FALSE(load_bundle(dir.path().string(), b, error));
    CHECK(error.find("context.json") != std::string::npos);
  }
  SUBCASE("an invalid context names the file and the problem") {
    dir.write("context.json", R"({"workload_id": "j"})");
    CHECK_FALSE(load_bundle(dir.path().string(), b, error));
    CHECK(error.find("context.json") != std::string::npos);
    CHECK(error.find("'nodes'") != std::string::npos);
  }
}

TEST_CASE("load_bundle + diagnose: control-plane hosts and ignored files reach the coverage") {
  TempDir dir;
  dir.write("context.json", R"({"workload_id": "j", "nodes": ["node-01", "node-02"],
                                "start": "2026-01-01T10:00:00Z", "end": "2026-01-01T11:00:00Z",
                                "terminal": {"state": "FAILED", "exit_code": 1}})");
  dir.write("logs/node-01/app.log", "2026-01-01T10:00:00Z ERR 1\n");
  dir.write("logs/slurmctl/app.log", "2026-01-01T10:00:01Z ERR 2\n");
  dir.write("notes.txt", "x");
  Bundle b;
  std::string error;
  REQUIRE(load_bundle(dir.path().string(), b, error));
  auto program = program_for(R"(
extractor Err from app {
  match /ERR (?<code>\d+)/
  emit app.err { code: int(code) }
  test { line "ERR 1" expect app.err { code: 1 } }
  test { line "OK" expect none }
}
rule S stage symptoms {
  for e: event app.err
  symptom app.err { code: e.code }
}
)");
  DiagnoseOptions opt;
  opt.threads = 2;
  Verdict v;
  REQUIRE(diagnose(program, request_from_bundle(b), opt, v, error));
  CHECK(v.coverage.control_plane_hosts == std::vector<std::string>{"slurmctl"});
  CHECK(v.coverage.ignored_files == std::vector<std::string>{"notes.txt"});
  CHECK(v.coverage.nodes_without_logs == std::vector<std::string>{"node-02"});
  const auto& app = v.coverage.sources.at("app");
  CHECK(app.files == 2);
  CHECK(app.control_plane_hosts == std::vector<std::string>{"slurmctl"});
  CHECK(app.nodes_with_data == std::vector<std::string>{"node-01"});
  CHECK(app.lines_read == 2);
  bool ignored_warning = false;
  for (const auto& w : v.coverage.warnings) ignored_warning = ignored_warning || w.find("notes.txt") != std::string::npos;
  CHECK(ignored_warning);
  REQUIRE(v.symptoms.size() == 2);
  CHECK(v.symptoms[0].id == "app.err@node-01");
  CHECK_FALSE(v.symptoms[0].control_plane);
  CHECK(v.symptoms[1].id == "app.err@slurmctl");
  CHECK(v.symptoms[1].control_plane);
  CHECK(v.affected_nodes == std::vector<std::string>{"node-01"});
}

// ------------------------------------------------------------ observations

TEST_CASE("parse_observation: a text observation") {
  Observation o;
  std::string error;
  REQUIRE(observation(R"({"host": "node-02", "source": "kernel", "ts": "2026-11-30T02:05:01Z", "text": "NVRM: Xid x"})", o,
                      error));
  CHECK(o.host == "node-02");
  CHECK(o.source == "kernel");
  CHECK(o.ts == 1796004301LL * kSec);
  CHECK_FALSE(o.is_metric);
  CHECK(o.text == "NVRM: Xid x");
  CHECK(o.file.empty());
  CHECK(o.line == 0);
  // ts is optional for text (the line's own stamp is used), and may be null.
  REQUIRE(observation(R"({"host": "node-02", "source": "app", "text": "x", "ts": null})", o, error));
  CHECK_FALSE(o.ts.has_value());
  REQUIRE(observation(R"({"host": "n", "source": "app", "text": "", "file": "logs/n/app.log", "line": 17})", o, error));
  CHECK(o.file == "logs/n/app.log");
  CHECK(o.line == 17);
  CHECK(o.text.empty());
}

TEST_CASE("parse_observation: a metric observation") {
  Observation o;
  std::string error;
  REQUIRE(observation(R"({"host": "node-02", "source": "dcgm", "ts": "2026-11-30T02:05:01Z",
                          "metric": "DCGM_FI_DEV_XID_ERRORS", "value": 79, "labels": {"uuid": "GPU-1", "gpu": "3"}})",
                      o, error));
  CHECK(o.is_metric);
  CHECK(o.metric == "DCGM_FI_DEV_XID_ERRORS");
  CHECK(o.value == doctest::Approx(79.0));
  // Canonical labels: sorted by key.
  CHECK(o.labels == "gpu=3,uuid=GPU-1");
  CHECK(o.text.empty());
  REQUIRE(observation(R"({"host": "n", "source": "dcgm", "ts": "2026-11-30T02:05:01Z", "metric": "m", "value": -0.5})",
                      o, error));
  CHECK(o.value == doctest::Approx(-0.5));
  CHECK(o.labels.empty());
}

TEST_CASE("parse_observation: malformed observations are rejected with the key at fault") {
  const std::string ts = R"("ts": "2026-11-30T02:05:01Z")";
  rejects_observation("[]", "must be a JSON object");
  rejects_observation(R"({"host": "n", "source": "app", "text": "x", "level": "warn"})", "unknown key 'level'");
  rejects_observation(R"({"source": "app", "text": "x"})", "'host' must be a string");
  rejects_observation(R"({"host": 1, "source": "app", "text": "x"})", "'host' must be a string");
  rejects_observation(R"({"host": "n", "text": "x"})", "'source' must be a string");
  rejects_observation(R"({"host": "bad host", "source": "app", "text": "x"})", "invalid host name 'bad host'");
  rejects_observation(R"({"host": "n", "source": "Kernel", "text": "x"})", "invalid source name 'Kernel'");
  rejects_observation(R"({"host": "n", "source": "app", "text": "x", "ts": 12})", "'ts'");
  rejects_observation(R"({"host": "n", "source": "app", "text": "x", "ts": "2026-11-30 02:05"})", "'ts'");
  rejects_observation(R"({"host": "n", "source": "app"})", "exactly one of 'text'");
  rejects_observation(R"({"host": "n", "source": "app", "text": "x", "metric": "m", "value": 1, )" + ts + "}",
                      "exactly one of 'text'");
  rejects_observation(R"({"host": "n", "source": "app", "text": 5})", "'text' must be a string");
  rejects_observation(R"({"host": "n", "source": "app", "text": "x", "value": 1})", "'value' and 'labels' belong to metric");
  rejects_observation(R"({"host": "n", "source": "app", "text": "x", "labels": {}})", "'value' and 'labels' belong to metric");
  rejects_observation(R"({"host": "n", "source": "dcgm", "metric": "", "value": 1, )" + ts + "}", "'metric' must be a non-empty string");
  rejects_observation(R"({"host": "n", "source": "dcgm", "metric": 7, "value": 1, )" + ts + "}", "'metric' must be a non-empty string");
  rejects_observation(R"({"host": "n", "source": "dcgm", "metric": "m", )" + ts + "}", "numeric 'value'");
  rejects_observation(R"({"host": "n", "source": "dcgm", "metric": "m", "value": "79", )" + ts + "}", "numeric 'value'");
  rejects_observation(R"({"host": "n", "source": "dcgm", "metric": "m", "value": 79})", "needs 'ts'");
  rejects_observation(R"({"host": "n", "source": "dcgm", "metric": "m", "value": 1, "labels": ["gpu"], )" + ts + "}",
                      "'labels' must be an object");
  rejects_observation(R"({"host": "n", "source": "dcgm", "metric": "m", "value": 1, "labels": {"gpu": 3}, )" + ts + "}",
                      "label 'gpu' must be a string");
  rejects_observation(R"({"host": "n", "source": "app", "text": "x", "file": 3})", "'file' must be a string");
  rejects_observation(R"({"host": "n", "source": "app", "text": "x", "line": 0})", "'line' must be a positive integer");
  rejects_observation(R"({"host": "n", "source": "app", "text": "x", "line": -4})", "'line' must be a positive integer");
  rejects_observation(R"({"host": "n", "source": "app", "text": "x", "line": 2.5})", "'line' must be a positive integer");
}

TEST_CASE("observations.jsonl: read by diagnose, with provenance defaults - a bad line fails with its number") {
  TempDir dir;
  auto program = program_for(R"(
extractor Err from app {
  match /ERR (?<code>\d+)/
  emit app.err { code: int(code) }
  test { line "ERR 1" expect app.err { code: 1 } }
  test { line "OK" expect none }
}
rule S stage symptoms {
  for e: event app.err
  symptom app.err key str(e.code) { code: e.code }
}
)");
  DiagnoseRequest req;
  req.context.workload_id = "j";
  req.context.nodes = {"node-01"};
  DiagnoseOptions opt;
  opt.threads = 1;
  Verdict v;
  std::string error;
  SUBCASE("valid lines, a blank line, explicit provenance") {
    auto p = dir.write("observations.jsonl",
                       "{\"host\": \"node-01\", \"source\": \"app\", \"ts\": \"2026-01-01T10:00:00Z\", \"text\": \"ERR 1\"}\n"
                       "\n"
                       "{\"host\": \"node-01\", \"source\": \"app\", \"text\": \"ERR 2\", \"file\": \"logs/node-01/app.log\", "
                       "\"line\": 40}\n");
    req.observations_path = p.string();
    REQUIRE(diagnose(program, req, opt, v, error));
    REQUIRE(v.symptoms.size() == 2);
    const Evidence& one = v.symptoms[0].evidence.at(0);
    CHECK(one.text == "ERR 1");
    CHECK(one.file == "observations.jsonl");
    CHECK(one.line == 1);
    CHECK(one.ts_origin == "observation");
    const Evidence& two = v.symptoms[1].evidence.at(0);
    CHECK(two.file == "logs/node-01/app.log");
    CHECK(two.line == 40);
  }
  SUBCASE("invalid JSON") {
    auto p = dir.write("observations.jsonl",
                       "{\"host\": \"node-01\", \"source\": \"app\", \"text\": \"ERR 1\"}\n{\"host\": \"node-01\",\n");
    req.observations_path = p.string();
    CHECK_FALSE(diagnose(program, req, opt, v, error));
    CHECK(error.find("observations.jsonl:2: invalid observation: not valid JSON") != std::string::npos);
  }
  SUBCASE("a valid JSON line that is not a valid observation") {
    auto p = dir.write("observations.jsonl", "\n\n{\"host\": \"node-01\", \"source\": \"app\", \"txt\": \"ERR 1\"}\n");
    req.observations_path = p.string();
    CHECK_FALSE(diagnose(program, req, opt, v, error));
    CHECK(error.find("observations.jsonl:3: invalid observation: unknown key 'txt'") != std::string::npos);
  }
  SUBCASE("an unreadable carrier") {
    req.observations_path = (dir.path() / "missing.jsonl").string();
    CHECK_FALSE(diagnose(program, req, opt, v, error));
    CHECK(error.find("missing.jsonl") != std::string::npos);
  }
}

// --------------------------------------------------------------- host names

TEST_CASE("parse_context_json: nodes with aliases") {
  WorkloadContext c;
  std::string error;
  REQUIRE(parse_context_json(context_with("nodes", R"(["node-01", {"name": "node-02", "aliases": ["10.0.0.2", "gpu-b.example.org", "10.0.0.2"]}])"),
                             c, error));
  CHECK(c.nodes == std::vector<std::string>{"node-01", "node-02"});
  REQUIRE(c.aliases.count("node-02"));
  CHECK(c.aliases["node-02"] == std::vector<std::string>{"10.0.0.2", "gpu-b.example.org"});
  CHECK_FALSE(c.aliases.count("node-01"));
  rejects(context_with("nodes", R"([{"name": "a", "aliases": ["x"]}, {"name": "b", "aliases": ["X"]}])"), "'X' is given for two nodes");
  rejects(context_with("nodes", R"(["a", {"name": "b", "aliases": ["a"]}])"), "is given for two nodes");
  rejects(context_with("nodes", R"([{"name": "a", "alias": ["x"]}])"), "unknown key 'alias' in a node");
  rejects(context_with("nodes", R"([{"aliases": ["x"]}])"), "a node object needs a \"name\"");
  rejects(context_with("nodes", R"([{"name": "a", "aliases": "x"}])"), "must be an array");
  rejects(context_with("nodes", R"([{"name": "a", "aliases": ["not valid"]}])"), "invalid alias");
}

TEST_CASE("parse_context_json: nodes with their ranks and srun tasks") {
  WorkloadContext c;
  std::string error;
  REQUIRE(parse_context_json(context_with("nodes", R"([{"name": "n2", "ranks": "8-15", "tasks": [1]},
                                                        {"name": "n1", "ranks": "0-3, 4-7", "tasks": "0"}, "n3"])"),
                             c, error));
  REQUIRE(c.ranks.size() == 2);  // n1's two ranges merged
  CHECK((c.ranks[0].first == 0 && c.ranks[0].last == 7 && c.ranks[0].node == "n1"));
  CHECK((c.ranks[1].first == 8 && c.ranks[1].last == 15 && c.ranks[1].node == "n2"));
  REQUIRE(c.tasks.size() == 2);
  CHECK((c.tasks[0].node == "n1" && c.tasks[1].node == "n2" && c.tasks[1].first == 1));
  rejects(context_with("nodes", R"([{"name": "a", "ranks": "0-7"}, {"name": "b", "ranks": "7-15"}])"),
          "rank 7 is given for two nodes ('a' and 'b')");
  rejects(context_with("nodes", R"([{"name": "a", "tasks": [0]}, {"name": "b", "tasks": [0]}])"), "srun task 0 is given for two nodes");
  rejects(context_with("nodes", R"([{"name": "a", "ranks": "7-3"}])"), "'7-3' is not a rank or a range of ranks at /nodes/0/ranks");
  rejects(context_with("nodes", R"([{"name": "a", "ranks": [-1]}])"), "-1 is not a rank");
  rejects(context_with("nodes", R"([{"name": "a", "ranks": ""}])"), "an empty list");
  rejects(context_with("nodes", R"([{"name": "a", "ranks": {"first": 0}}])"), "is not a list of ranks");
  rejects(context_with("nodes", R"([{"name": "a", "ranks": "0-4294967296"}])"), "is not a rank or a range");
  rejects(context_with("nodes", R"([{"name": "a", "ranks": "0-2000000"}])"), "more than 1048576 ranks");
  WorkloadContext back;
  REQUIRE(parse_context(nlohmann::json::parse(context_to_json(c).dump()), back, error));
  REQUIRE(back.ranks.size() == 2);
  CHECK((back.ranks[1].first == 8 && back.ranks[1].last == 15 && back.ranks[1].node == "n2"));
  CHECK(back.tasks.size() == 2);
  CHECK(context_to_json(c).dump().find(R"({"name":"n1","ranks":"0-7","tasks":"0"})") != std::string::npos);
}

TEST_CASE("context_to_json: what parse_context reads back, aliases and terminal state included (issue 33)") {
  WorkloadContext c;
  std::string error;
  REQUIRE(parse_context_json(R"({"workload_id": "60101", "scheduler": "slurm", "start": "2026-05-11T08:00:05Z",
                                 "end": "2026-05-11T09:02:05.25Z",
                                 "nodes": ["node-01", {"name": "node-02", "aliases": ["gpu-box-7", "10.0.0.2"]}],
                                 "terminal": {"state": "NODE_FAIL", "exit_code": 137}})",
                             c, error));
  WorkloadContext back;
  REQUIRE(parse_context(nlohmann::json::parse(context_to_json(c).dump()), back, error));
  CHECK(back.workload_id == c.workload_id);
  CHECK(back.scheduler == c.scheduler);
  CHECK(back.start == c.start);
  CHECK(back.end == c.end);
  CHECK(back.nodes == c.nodes);
  CHECK(back.aliases == c.aliases);
  REQUIRE(back.aliases.count("node-02"));
  CHECK(back.aliases["node-02"] == std::vector<std::string>{"10.0.0.2", "gpu-box-7"});
  CHECK(back.terminal.state == "NODE_FAIL");
  CHECK(back.terminal.exit_code == 137);
  // A context without a window or terminal state stays without one.
  WorkloadContext bare;
  bare.workload_id = "x";
  bare.nodes = {"a"};
  auto j = context_to_json(bare);
  CHECK_FALSE(j.contains("start"));
  CHECK_FALSE(j.contains("terminal"));
  REQUIRE(parse_context(nlohmann::json::parse(j.dump()), back, error));
  CHECK(back.nodes == bare.nodes);
  CHECK(back.aliases.empty());
  CHECK_FALSE(back.start);
}

TEST_CASE("canonical_host: FQDN, short-name and alias forms of a node") {
  WorkloadContext c;
  std::string error;
  REQUIRE(parse_context_json(context_with("nodes", R"(["node-01", "node-02", "gpu7.dc1.example.org",
                                                      {"name": "node-03", "aliases": ["10.0.0.3", "fe80::1"]},
                                                      "twin.a.example", "twin.b.example"])"),
                             c, error));
  std::string how;
  CHECK(canonical_host(c, "node-02", &how) == "node-02");
  CHECK(how.empty());
  CHECK(canonical_host(c, "node-02.cluster.local", &how) == "node-02");
  CHECK(how == "short name");
  CHECK(canonical_host(c, "NODE-02.Cluster.Local", &how) == "node-02");  // DNS names ignore case
  CHECK(canonical_host(c, "gpu7", &how) == "gpu7.dc1.example.org");
  CHECK(how == "FQDN");
  CHECK(canonical_host(c, "10.0.0.3", &how) == "node-03");
  CHECK(how == "alias");
  CHECK(canonical_host(c, "FE80::1", &how) == "node-03");
  // Not a node: the scheduler's host, an unknown address, another domain's twin.
  CHECK(canonical_host(c, "slurmctl", &how).empty());
  CHECK(canonical_host(c, "10.0.0.9", &how).empty());
  CHECK(canonical_host(c, "node-01x.cluster.local", &how).empty());
  // A short name that fits two nodes is not guessed.
  CHECK(canonical_host(c, "twin", &how).empty());
  CHECK(how == std::string(kAmbiguousHost) + "twin.a.example, twin.b.example");
}

TEST_CASE("parse_context_json: a misspelt terminal state is refused with the state it meant") {
  rejects(context_with("terminal", R"({"state": "COMPLETD", "exit_code": 0})"), "unknown terminal.state 'COMPLETD' (did you mean 'COMPLETED'?");
  rejects(context_with("terminal", R"({"state": "node_fial"})"), "did you mean 'NODE_FAIL'?");
  rejects(context_with("terminal", R"({"state": "TIMEOUTT"})"), "known: BOOT_FAIL, CANCELLED, COMPLETED");
  // Unknown but not a near miss: accepted (the verdict warns about it).
  WorkloadContext c;
  std::string error;
  CHECK(parse_context_json(context_with("terminal", R"({"state": "succeeded"})"), c, error));
  CHECK(c.terminal.state == "SUCCEEDED");
}

TEST_CASE("diagnose: logs of a node under its FQDN are that node's, with a coverage note") {
  TempDir dir;
  dir.write("context.json", R"({"workload_id": "1", "nodes": ["node-01", "node-02"], "terminal": {"state": "SUCCEEDED"}})");
  dir.write("logs/node-02.cluster.local/app.log", "hello\n");
  dir.write("logs/slurmctl/scheduler.log", "hello\n");
  Bundle b;
  std::string error;
  REQUIRE(load_bundle(dir.path(), b, error));
  Verdict v;
  REQUIRE(diagnose(program_for(""), request_from_bundle(b), {}, v, error));
  const auto& app = v.coverage.sources.at("app");
  CHECK(app.nodes_with_data == std::vector<std::string>{"node-02"});
  CHECK(v.coverage.control_plane_hosts == std::vector<std::string>{"slurmctl"});
  REQUIRE(v.coverage.host_aliases.size() == 1);
  CHECK(v.coverage.host_aliases[0].host == "node-02.cluster.local");
  CHECK(v.coverage.host_aliases[0].node == "node-02");
  CHECK(v.coverage.host_aliases[0].how == "short name");
  bool noted = false, state_warned = false;
  for (const auto& w : v.coverage.warnings) {
    noted = noted || w.find("evidence from host 'node-02.cluster.local' is read as node-02's") != std::string::npos;
    state_warned = state_warned || w.find("terminal state 'SUCCEEDED' is not one Culprit knows") != std::string::npos;
  }
  CHECK(noted);
  CHECK(state_warned);
}

TEST_CASE("diagnose: the context's ranks place a rank-tagged line of the batch host's output on its node") {
  TempDir dir;
  dir.write("context.json", R"({"workload_id": "1", "nodes": [{"name": "n1", "ranks": "0-7"}, {"name": "n2", "ranks": "8-15"}],
                                "terminal": {"state": "FAILED", "exit_code": 1}})");
  dir.write("logs/n1/app.log", "[rank11]: boom on a GPU\n[rank3]: boom on a GPU\n");
  Bundle b;
  std::string error;
  REQUIRE(load_bundle(dir.path(), b, error));
  Verdict v;
  REQUIRE(diagnose(program_for(R"(
extractor Boom from app {
  match /boom/
  emit app.boom { }
  test { line "boom" expect app.boom }
  test { line "calm" expect none }
}
rule Booms stage symptoms {
  for e: event app.boom
  symptom app.boom priority 10 { summary: "boom on {e.node}" }
}
)"),
                   request_from_bundle(b), {}, v, error));
  std::vector<std::string> nodes;
  for (const auto& s : v.symptoms) nodes.push_back(s.node);
  CHECK(nodes == std::vector<std::string>{"n1", "n2"});
  CHECK(v.coverage.sources.at("app").events_rank_unplaced == 0);
}

TEST_CASE("diagnose: a failure in srun's collected output that no line places names no culprit node") {
  // The batch host's file holds every task's output (srun reports tasks of
  // both nodes), without --label: the OOM line could be either node's.
  const char* const catalog = R"(
extractor Oom from app {
  match /CUDA out of memory/
  emit app.oom { }
  test { line "CUDA out of memory" expect app.oom }
  test { line "calm" expect none }
}
extractor Task from app {
  match /srun: error: (?<host>[\w.\-]+): tasks? [\d,\-]+: /
  emit app.task { task_host: host }
  test { line "srun: error: n1: task 2: Exited with exit code 1" expect app.task { task_host: "n1" } }
  test { line "calm" expect none }
}
rule Oom stage symptoms {
  for e: event app.oom
  symptom app.oom priority 80 { summary: "oom on {e.node}" }
}
rule TaskExit stage symptoms {
  for e: event app.task
  symptom app.task on e.task_host priority 1 { summary: "task on {e.task_host}" }
}
rule Classify stage outcome {
  for s: symptom app.oom
  classify s as software "cuda_oom"
}
)";
  auto run = [&](const char* n1_log, const char* n2_log, Verdict& v) {
    TempDir dir;
    dir.write("context.json", R"({"workload_id": "1", "scheduler": "slurm", "nodes": ["n1", "n2"],
                                  "terminal": {"state": "FAILED", "exit_code": 1}})");
    dir.write("logs/n1/app.log", n1_log);
    if (n2_log) dir.write("logs/n2/app.log", n2_log);
    Bundle b;
    std::string error;
    REQUIRE(load_bundle(dir.path(), b, error));
    REQUIRE(diagnose(program_for(catalog), request_from_bundle(b), {}, v, error));
  };
  const char* combined = "CUDA out of memory. Tried to allocate 112.00 MiB\n"
                         "srun: error: n2: task 4: Exited with exit code 1\n"
                         "srun: error: n1: task 0: Exited with exit code 1\n";
  Verdict v;
  run(combined, nullptr, v);
  CHECK(v.outcome.status == "attributed");
  CHECK(v.outcome.sub_domain == "cuda_oom");
  CHECK(v.outcome.culprit_nodes.empty());
  REQUIRE(v.outcome.candidates.size() == 1);
  CHECK(v.outcome.candidates[0].collected_on == std::vector<std::string>{"n1"});
  CHECK(v.coverage.sources.at("app").events_unplaced == 1);
  bool warned = false;
  for (const auto& w : v.coverage.warnings) warned = warned || w.find("name no node: logs/n1/app.log (1)") != std::string::npos;
  CHECK(warned);
  for (const auto& s : v.symptoms)  // srun's reports still name their nodes
    if (s.kind_name == "app.task") CHECK_FALSE(s.node_unplaced);

  SUBCASE("the same failure in a node's own log names that node") {
    Verdict own;
    run("calm\n", "CUDA out of memory. Tried to allocate 112.00 MiB\n", own);
    CHECK(own.outcome.culprit_nodes == std::vector<std::string>{"n2"});
    CHECK(own.outcome.candidates[0].collected_on.empty());
  }
  SUBCASE("a file whose srun reports only its own node's tasks is that node's") {
    Verdict single;
    run("CUDA out of memory. Tried to allocate 112.00 MiB\nsrun: error: n1: task 0: Exited with exit code 1\n", "calm\n",
        single);
    CHECK(single.outcome.culprit_nodes == std::vector<std::string>{"n1"});
    CHECK(single.coverage.sources.at("app").events_unplaced == 0);
  }
}

TEST_CASE("load_bundle: Flight Recorder dumps under traces/<host>/ become flight_recorder lines; bad ones are refused") {
  TempDir dir;
  dir.write("context.json", R"({"workload_id": "j", "nodes": [{"name": "node-01", "ranks": "0-1"}, {"name": "node-02", "ranks": "2-3"}]})");
  dir.write("logs/node-01/app.log", "a\n");
  dir.write("traces/node-02/nccl_trace_rank_3",
            R"({"version": "2.4", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"}},
                "entries": [{"pg_id": 0, "process_group": ["0", "default_pg"], "collective_seq_id": 5,
                             "profiling_name": "nccl:all_reduce", "state": "started", "input_sizes": [[8]], "output_sizes": [[8]]}]})");
  dir.write("traces/node-01/nccl_trace_rank_0", std::string("\x80\x02" "cos\nsystem\n.", 14));  // refused: a GLOBAL
  dir.write("traces/node-01/notes.txt", "no rank in this name");
  dir.write("traces/node-01/old/nccl_trace_rank_1", "x");                                           // nested: ignored
  Bundle b;
  std::string error;
  REQUIRE(load_bundle(dir.path().string(), b, error));
  REQUIRE(b.refused_files.size() == 2);
  CHECK(b.refused_files[0].path == "traces/node-01/nccl_trace_rank_0");
  CHECK(b.refused_files[0].reason.find("PK003") == 0);
  CHECK(b.refused_files[1].path == "traces/node-01/notes.txt");
  CHECK(b.refused_files[1].reason.find("no rank at the end of its name") != std::string::npos);
  CHECK(b.ignored_files == std::vector<std::string>{"traces/node-01/old/nccl_trace_rank_1"});
  REQUIRE(b.observations.size() == 3);
  CHECK(b.observations[0].host == "node-02");
  CHECK(b.observations[0].source == "flight_recorder");
  CHECK(b.observations[0].file == "traces/node-02/nccl_trace_rank_3");
  // Ranks 0-2 left no dump (rank 0's was refused): the context places them.
  CHECK(b.observations[1].text.find("3 ranks without a dump: 0 (node-01), 1 (node-01), 2 (node-02)") != std::string::npos);
  CHECK(b.observations[2].text.find("collective #5 nccl:all_reduce started") != std::string::npos);
}

TEST_CASE("load_bundle: a ras file in ncclras's JSON form becomes the report's lines; the text form stays a log") {
  TempDir dir;
  dir.write("context.json", R"({"workload_id": "j", "nodes": [{"name": "node-01", "aliases": ["10.0.0.1"], "ranks": "0-1"},
                                {"name": "node-02", "aliases": ["10.0.0.2"], "ranks": "2-3"}]})");
  dir.write("logs/node-01/ras.log", R"(
{"nccl_version": "2.28.9", "timestamp": "2026-03-14 02:31:07", "communicators": [
  {"hash": "0x1", "size": 4, "ranks": [], "missing_ranks": [
    {"rank": 2, "host": "10.0.0.2", "pid": 7, "cuda_dev": 0, "nvml_dev": 0, "status": {"unresponsive": true, "considered_dead": false}}]}],
 "ras": {"collection_time_sec": 5.0, "timeouts_count": 1}}
)");
  dir.write("logs/node-02/ras.log", "Job summary\n===========\n");
  dir.write("logs/node-02/app.log", "x\n");
  dir.write("logs/node-03/ras.log", "{\"communicators\": 3}");  // a control-plane host; refused
  Bundle b;
  std::string error;
  REQUIRE(load_bundle(dir.path().string(), b, error));
  REQUIRE(b.refused_files.size() == 1);
  CHECK(b.refused_files[0].path == "logs/node-03/ras.log");
  CHECK(b.refused_files[0].reason == "RS002: communicators is not an array");
  REQUIRE(b.observations.size() == 3);
  CHECK(b.observations[2].text ==
        "nccl ras report: communicator 0x1 of 4 ranks (all the job's ranks) rank 2 missing: process 7 on node 10.0.0.2 managing GPU 0 is "
        "unresponsive");
  CHECK(b.observations[2].file == "logs/node-01/ras.log");
  std::vector<std::string> logs;
  for (const auto& f : b.files) logs.push_back(f.display_path);
  CHECK(logs == std::vector<std::string>{"logs/node-02/app.log", "logs/node-02/ras.log"});

}

TEST_CASE("diagnose: host_node() and rank_node() place what one host prints about another, by the context") {
  TempDir dir;
  dir.write("context.json", R"({"workload_id": "1", "nodes": [{"name": "n1", "ranks": "0-7"},
                                {"name": "n2", "aliases": ["10.0.0.2"], "ranks": "8-15"}, "n3.cluster.local"]})");
  dir.write("logs/n1/app.log", "peer 10.0.0.2 rank 12\npeer n3 rank 7\npeer 10.9.9.9 rank 99\n");
  Bundle b;
  std::string error;
  REQUIRE(load_bundle(dir.path(), b, error));
  Verdict v;
  REQUIRE(diagnose(program_for(R"(
extractor Peer from app {
  match /peer (?<addr>\S+) rank (?<rank>\d+)/
  emit app.peer { addr: addr, rank: int(rank) }
  test { line "peer a rank 1" expect app.peer { addr: "a", rank: 1 } }
  test { line "calm" expect none }
}
rule Peers stage symptoms {
  for e: event app.peer
  symptom app.peer key e.addr priority 10 {
    summary: coalesce(host_node(e.addr), "-") + "/" + coalesce(rank_node(e.rank), "-")
  }
}
)"),
                   request_from_bundle(b), {}, v, error));
  std::vector<std::string> got;
  for (const auto& s : v.symptoms) got.push_back(s.summary);
  std::sort(got.begin(), got.end());
  // An alias, the short name of an FQDN node; an address and a rank the context does not place.
  CHECK(got == std::vector<std::string>{"-/-", "n2/n2", "n3.cluster.local/n1"});
}
