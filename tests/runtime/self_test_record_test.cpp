// The self-test record: a start-up with the same rules, build and code reads
// the outcome of an earlier run in which every test passed; anything else
// runs the tests. A failing catalog is never recorded.
#include "runtime/self_test_record.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "base/build_id.h"
#include "compiler/jit/cache.h"
#include "runtime/attributor.h"

#include "tests/support/test_support.h"

using namespace culprit;
namespace fs = std::filesystem;

namespace {

const char* kRules = R"attr(
catalog "site" version "1.0.0"
extractor Err from app {
  match /ERR (?<code>\d+)/
  emit app.err { code: int(code) }
  test "a code" { line "ERR 7" expect app.err { code: 7 } }
  test "no code" { line "fine" expect none }
}
rule ErrSymptom stage symptoms {
  for e: event app.err
  symptom app.failure priority 60 { summary: "error {e.code}" }
}
rule ClassifyErr stage outcome {
  for s: symptom app.failure
  classify s as software "application_exception"
}
scenario "one error" {
  nodes "node-01"
  terminal FAILED exit 1
  log "node-01" app "ERR 3"
  expect status attributed
}
)attr";

AttributorConfig config_for(const fs::path& rules, const fs::path& cache) {
  AttributorConfig cfg;
  cfg.rule_paths = {rules.string()};
  cfg.jit = false;  // the interpreter: no LLVM needed for what is tested here
  cfg.jit_options.cache_dir = cache.string();
  return cfg;
}

}  // namespace

TEST_CASE("self-test record: the second start-up reads what the first one ran") {
  REQUIRE_FALSE(build_id().empty());  // the build links with a build ID (Debian's default)
  testing::TempDir rules_dir;
  const fs::path& rules = rules_dir.path();
  testing::TempDir cache_dir;
  const fs::path& cache = cache_dir.path();
  std::ofstream(rules / "rules.attr") << kRules;
  AttributorConfig cfg = config_for(rules, cache);

  AttributorStart first;
  REQUIRE(Attributor::open(cfg, first));
  REQUIRE(first.self_test);
  CHECK_FALSE(first.self_test->recorded);
  CHECK(first.self_test->passed == 3);

  AttributorStart second;
  auto a = Attributor::open(cfg, second);
  REQUIRE(a);
  REQUIRE(second.self_test);
  CHECK(second.self_test->recorded);
  CHECK(second.self_test->passed == 3);
  CHECK(second.self_test->failed == 0);
  REQUIRE(second.self_test->results.size() == first.self_test->results.size());
  for (size_t i = 0; i < first.self_test->results.size(); ++i) {
    const auto &x = first.self_test->results[i], &y = second.self_test->results[i];
    CHECK(y.kind == x.kind);
    CHECK(y.name == x.name);
    CHECK(y.location == x.location);
    CHECK(y.file == x.file);
    CHECK(y.passed);
    // What a test exercised is for `culprit test --coverage`, which runs them.
    CHECK(y.extractors_matched.empty());
    CHECK(y.rules_acted.empty());
  }

  SUBCASE("turned off, the tests run") {
    cfg.self_test_record = false;
    AttributorStart again;
    REQUIRE(Attributor::open(cfg, again));
    CHECK_FALSE(again.self_test->recorded);
  }
  SUBCASE("without a cache there is no record") {
    cfg.jit_options.use_cache = false;
    AttributorStart again;
    REQUIRE(Attributor::open(cfg, again));
    CHECK_FALSE(again.self_test->recorded);
  }
  SUBCASE("changed rules run their tests") {
    std::ofstream(rules / "rules.attr", std::ios::app) << "# a comment changes the digest\n";
    AttributorStart again;
    REQUIRE(Attributor::open(cfg, again));
    CHECK_FALSE(again.self_test->recorded);
  }
  SUBCASE("the other evaluator has its own record") {
    std::string why;
    if (!jit_available(why)) return;
    cfg.jit = true;
    AttributorStart again;
    REQUIRE(Attributor::open(cfg, again));
    CHECK_FALSE(again.self_test->recorded);
    AttributorStart third;
    REQUIRE(Attributor::open(cfg, third));
    CHECK(third.self_test->recorded);
  }
}

TEST_CASE("self-test record: a failing catalog is never recorded and keeps failing") {
  testing::TempDir rules_dir;
  const fs::path& rules = rules_dir.path();
  testing::TempDir cache_dir;
  const fs::path& cache = cache_dir.path();
  std::string text = kRules;
  text.replace(text.find("expect app.err { code: 7 }"), 26, "expect app.err { code: 8 }");
  std::ofstream(rules / "rules.attr") << text;
  AttributorConfig cfg = config_for(rules, cache);
  for (int run = 0; run < 2; ++run) {
    AttributorStart start;
    CHECK_FALSE(Attributor::open(cfg, start));
    REQUIRE(start.self_test);
    CHECK_FALSE(start.self_test->recorded);
    CHECK(start.self_test->failed == 1);
  }
  for (const auto& e : fs::directory_iterator(cache)) CHECK(e.path().filename().string().rfind("selftest-", 0) != 0);
}

TEST_CASE("self-test record: store refuses a report with a failure; load refuses a bad entry") {
  testing::TempDir cache_dir;
  const fs::path& cache = cache_dir.path();
  TestReport report;
  TestResult ok;
  ok.kind = "line";
  ok.name = "X a";
  ok.passed = true;
  report.results = {ok};
  report.passed = 1;
  std::string note;
  CHECK(store_self_test_record(cache.string(), "key", report, note));
  TestReport back;
  CHECK(load_self_test_record(cache.string(), "key", back, note));
  CHECK(back.recorded);
  CHECK(back.passed == 1);
  CHECK_FALSE(load_self_test_record(cache.string(), "other key", back, note));
  CHECK_FALSE(load_self_test_record(cache.string(), "", back, note));

  TestResult bad = ok;
  bad.passed = false;
  report.results.push_back(bad);
  report.failed = 1;
  CHECK_FALSE(store_self_test_record(cache.string(), "key2", report, note));
  CHECK(note == "only a report in which every test passed is recorded");

  for (const char* bad : {"{\"results\": [7]}", "culprit self-test record 1\n", "culprit self-test record 1\n4:line7:X a",
                          "culprit self-test record 1\n4:line3:X a0:", "culprit self-test record 1\n4:line3:X a0:4:f.at4:",
                          "culprit self-test record 1\n99999:line"}) {
    CAPTURE(bad);
    CHECK(cache::store(cache.string(), "selftest", "key3", bad, note));
    CHECK_FALSE(load_self_test_record(cache.string(), "key3", back, note));
    CHECK(note == "the record does not parse");
  }
  CHECK(cache::store(cache.string(), "selftest", "key4", "culprit self-test record 1\n4:line3:X a0:4:f.at", note));
  CHECK(load_self_test_record(cache.string(), "key4", back, note));
  REQUIRE(back.results.size() == 1);
  CHECK(back.results[0].name == "X a");
  CHECK(back.results[0].location.empty());
  CHECK(back.results[0].file == "f.at");
}
