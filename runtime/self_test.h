// Running a catalog's own tests: extractor line tests and scenarios.
//
// Line tests run through the real scan path (the source's Hyperscan
// database, then RE2, then the field expressions), so a test passes only if
// a log line would really produce the event. Scenario tests run the whole
// pipeline on their lines and compare the verdict with their expectations.
// A failure message says what was expected and what came out, per field.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/program.h"

namespace culprit {

// One unmet expectation, where it is written.
struct TestFailure {
  std::string location;  // file:line of the `expect` (of the test, for a line test)
  std::string message;   // "status: expected attributed, got unattributed"
};

// What a scenario's run produced, shown when it fails.
struct ScenarioOutcome {
  std::string status, domain, sub_domain;
  std::vector<std::string> culprits;
  std::vector<std::pair<std::string, std::string>> symptoms;  // (id, state), sorted by id
};

struct TestResult {
  std::string kind;      // "line" | "scenario"
  std::string name;      // extractor name + test title, or scenario title
  std::string location;  // file:line
  std::string file;      // the test's rule file, as loaded
  bool passed = false;
  std::string message;   // why it failed: the failures' messages joined with "; "
  std::vector<TestFailure> failures;       // each unmet expectation with its location
  std::optional<ScenarioOutcome> actual;   // scenarios: the verdict that came out
  // What the test exercised (for rule coverage): the extractors that matched
  // one of its lines and the rules that acted in its run (scenarios only).
  std::vector<std::string> extractors_matched, rules_acted;
  double ms = 0;         // wall time (reports only; never affects a result)
};

struct TestReport {
  std::vector<TestResult> results;
  size_t passed = 0, failed = 0;
  // Read from the record of an earlier run with the same rules, build and
  // code (runtime/self_test_record.h) instead of run now; `ms` are that run's.
  bool recorded = false;
};

// Which tests to run: all when `select` is empty, else those it accepts.
struct TestSelection {
  std::function<bool(const std::string& kind, const std::string& name, const std::string& file)> select;
};

// Runs the selected tests on every core (up to 8 threads); the report lists
// them in catalog order (line tests by extractor, then scenarios) whatever
// the thread count, and only the `ms` of each depends on the run.
TestReport run_inline_tests(std::shared_ptr<const Program> program, const TestSelection& selection = {});

}  // namespace culprit
