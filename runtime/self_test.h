// Running a catalog's own tests: extractor line tests and scenarios.
//
// Line tests run through the real scan path (the source's Hyperscan
// database, then RE2, then the field expressions), so a test passes only if
// a log line would really produce the event. Scenario tests run the whole
// pipeline on their lines and compare the verdict with their expectations.
// A failure message says what was expected and what came out, per field.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/program.h"

namespace culprit {

struct TestResult {
  std::string kind;      // "line" | "scenario"
  std::string name;      // extractor name + test title, or scenario title
  std::string location;  // file:line
  bool passed = false;
  std::string message;   // why it failed
};

struct TestReport {
  std::vector<TestResult> results;
  size_t passed = 0, failed = 0;
};

TestReport run_inline_tests(std::shared_ptr<const Program> program);

}  // namespace culprit
