// base/limits.h: every limit has a stable name, and docs/robustness.md
// documents each one (the table users read is the list the code enforces).
#include "base/limits.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>

using namespace culprit;

TEST_CASE("limits: names are unique and every limit is documented") {
  std::ifstream in(std::string(CULPRIT_SOURCE_DIR) + "/docs/robustness.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  std::set<std::string_view> seen;
  for (const auto& e : limits::all()) {
    CAPTURE(e.name);
    CHECK(seen.insert(e.name).second);
    CHECK(e.value > 0);
    CHECK(doc.find("`" + std::string(e.name) + "`") != std::string::npos);
  }
}

TEST_CASE("limits::exceeded names the limit, its value and where") {
  CHECK(limits::exceeded("json_depth", 64, "arrays nested deeper", "/nodes/0") ==
        "limit json_depth exceeded: arrays nested deeper (at most 64) at /nodes/0");
  CHECK(limits::exceeded("in_list", 1024, "the list has 2000 elements") ==
        "limit in_list exceeded: the list has 2000 elements (at most 1024)");
}

TEST_CASE("limits::eval_steps_for grows with the events and saturates instead of wrapping") {
  CHECK(limits::eval_steps_for(0) == limits::kEvalStepsBase);
  CHECK(limits::eval_steps_for(3012) == 1000000 + 100 * 3012);
  CHECK(limits::eval_steps_for(50000) == 6000000);  // the service's events_per_request
  // Past what a multiplication or the addition can hold, the largest budget.
  const uint64_t largest = (UINT64_MAX - limits::kEvalStepsBase) / limits::kEvalStepsPerEvent;
  CHECK(limits::eval_steps_for(largest) == largest * limits::kEvalStepsPerEvent + limits::kEvalStepsBase);
  CHECK(limits::eval_steps_for(largest + 1) == UINT64_MAX);                              // the sum overflows
  CHECK(limits::eval_steps_for(UINT64_MAX / limits::kEvalStepsPerEvent + 1) == UINT64_MAX);  // the product does
  CHECK(limits::eval_steps_for(UINT64_MAX) == UINT64_MAX);
}
