// The runtime's entry point: a catalog is compiled and self-tested once; a
// catalog that does not compile or fails its own tests gives no Attributor;
// attribute() takes the evidence by move and gives the same verdict as the
// pipeline it wraps.
#include "runtime/attributor.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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
