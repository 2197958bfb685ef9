// The runtime's entry point: a catalog is compiled and self-tested once; a
// catalog that does not compile or fails its own tests gives no Attributor;
// attribute() takes the evidence by move and gives the same verdict as the
// pipeline it wraps.
#include "runtime/attributor.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "runtime/verdict_json.h"

using namespace culprit;

namespace {

// A one-file catalog in a fresh directory.
std::string catalog_dir(const std::string& name, const std::string& text) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("culprit-attributor-" + std::to_string(getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "rules.attr") << text;
  return dir.string();
}

const char* kRules = R"attr(
catalog "site" version "1.0.0"
extractor Err from app {
  match /ERR (?<code>\d+)/
  emit app.err { code: int(code) }
  test { line "ERR 7" expect app.err { code: 7 } }
  test { line "fine" expect none }
}
rule ErrSymptom stage symptoms {
  for e: event app.err
  symptom app.failure priority 60 { summary: "error {e.code}" }
}
rule ClassifyErr stage outcome {
  for s: symptom app.failure
  classify s as software "application_exception"
}
)attr";

}  // namespace

TEST_CASE("attributor: opens a catalog that compiles and passes its tests, and attributes") {
  AttributorConfig cfg;
  cfg.rule_paths = {catalog_dir("good", kRules)};
  cfg.jit = false;
  cfg.jit_options.use_cache = false;
  AttributorStart start;
  auto a = Attributor::open(cfg, start);
  REQUIRE(a);
  CHECK(start.error.empty());
  REQUIRE(start.self_test);
  CHECK(start.self_test->failed == 0);
  CHECK(start.self_test->passed == 2);
  CHECK(a->catalog().name == "site");

  DiagnoseRequest ev;
  ev.context.workload_id = "w";
  ev.context.nodes = {"node-01"};
  ev.context.terminal.state = "FAILED";
  Observation o;
  o.host = "node-01";
  o.source = "app";
  o.text = "ERR 3";
  ev.observations.push_back(o);
  Verdict v;
  std::string error;
  REQUIRE(a->attribute(std::move(ev), {}, v, error));
  CHECK(v.outcome.status == "attributed");
  CHECK(v.outcome.sub_domain == "application_exception");
  CHECK(v.outcome.culprit_nodes == std::vector<std::string>{"node-01"});
  CHECK(v.engine.catalog_name == "site");
}

TEST_CASE("attributor: refuses rules that do not compile, and a catalog that fails its own tests") {
  AttributorConfig cfg;
  cfg.jit = false;
  cfg.jit_options.use_cache = false;
  AttributorStart start;
  CHECK_FALSE(Attributor::open(cfg, start));
  CHECK(start.error == "no rules to load");

  cfg.rule_paths = {catalog_dir("broken", "rule X stage nowhere { }\n")};
  start = {};
  CHECK_FALSE(Attributor::open(cfg, start));
  CHECK(start.error.find("the rules do not compile") == 0);
  CHECK(start.diagnostics.error_count() > 0);

  std::string failing = kRules;
  failing.replace(failing.find("expect app.err { code: 7 }"), 26, "expect app.err { code: 8 }");
  cfg.rule_paths = {catalog_dir("failing", failing)};
  start = {};
  CHECK_FALSE(Attributor::open(cfg, start));
  REQUIRE(start.self_test);
  CHECK(start.self_test->failed == 1);
  CHECK(start.error == "the catalog fails 1 of its 2 inline tests");

  cfg.self_test = false;  // `culprit test` runs and reports the tests itself
  start = {};
  CHECK(Attributor::open(cfg, start));
  CHECK_FALSE(start.self_test);
}

TEST_CASE("attributor: a host's zone, stated by one of its log files, moves its dmesg -T stamps to UTC") {
  // node-01's app log stamps carry +08:00; its kernel log is `dmesg -T`,
  // printed in that local time. node-02 states no zone (its dmesg -T stamps
  // are taken as UTC), and its first file holds more than the head that is
  // read for a zone (256 KiB), which must not matter.
  namespace fs = std::filesystem;
  AttributorConfig cfg;
  cfg.rule_paths = {catalog_dir("zones", R"attr(
catalog "site" version "1.0.0"
extractor KErr from kernel {
  match /KERR (?<code>\d+)/
  emit kernel.err { code: int(code) }
  test { line "KERR 7" expect kernel.err { code: 7 } }
  test { line "fine" expect none }
}
rule KErrSymptom stage symptoms {
  for e: event kernel.err
  symptom kernel.failure priority 60 { summary: "kernel error {e.code}" }
}
)attr")};
  cfg.jit = false;
  cfg.jit_options.use_cache = false;
  AttributorStart start;
  auto a = Attributor::open(cfg, start);
  REQUIRE(a);
  fs::path dir = fs::temp_directory_path() / ("culprit-attributor-" + std::to_string(getpid())) / "zone-logs";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    LogFile f;
    f.host = name.substr(0, 7);
    f.source = name.find("kernel") != std::string::npos ? "kernel" : "app";
    f.display_path = "logs/" + name;
    f.path = (dir / name).string();
    f.size = text.size();
    return f;
  };
  DiagnoseRequest ev;
  ev.context.workload_id = "w";
  ev.context.nodes = {"node-01", "node-02"};
  ev.context.terminal.state = "FAILED";
  std::string filler;
  while (filler.size() < (300u << 10)) filler += "2026-03-14 06:00:00,000 INFO step done, nothing to see here\n";
  ev.files = {write("node-01-app.log", "2026-03-14T14:35:00+08:00 INFO started\n"),
              write("node-01-kernel.log", "[Sat Mar 14 14:35:42 2026] KERR 1\n"),
              write("node-02-app.log", filler + "2026-03-14T06:35:00+08:00 INFO too late to count\n"),
              write("node-02-kernel.log", "[Sat Mar 14 06:35:43 2026] KERR 2\n")};
  Verdict v;
  std::string error;
  REQUIRE(a->attribute(std::move(ev), {}, v, error));
  std::map<std::string, int64_t> ts;
  for (const auto& s : v.symptoms)
    for (const auto& e : s.evidence)
      if (e.ts) ts[std::string(e.host.view())] = *e.ts;
  REQUIRE(ts.count("node-01"));
  REQUIRE(ts.count("node-02"));
  const int64_t t0635 = 1773470100LL * 1000000000LL;  // 2026-03-14T06:35:00Z
  CHECK(ts["node-01"] == t0635 + 42LL * 1000000000LL);  // 14:35:42 local (+08:00)
  CHECK(ts["node-02"] == t0635 + 43LL * 1000000000LL);  // 06:35:43, no zone known: UTC
}
