// A catalog's inline tests run by unit tests on both engines: the program on
// the JIT when it can run here, and the check that every test passed.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "compiler/ir.h"
#include "runtime/native_code.h"
#include "runtime/program.h"
#include "runtime/self_test.h"

namespace culprit {

// Runs the program's inline tests: all of them pass, and there are `tests`.
inline void expect_tests_pass(std::shared_ptr<const Program> p, size_t tests) {
  auto report = run_inline_tests(p);
  for (const auto& r : report.results)
    if (!r.passed) MESSAGE(r.location << " " << r.name << ": " << r.message);
  CHECK(report.failed == 0);
  CHECK(report.passed == tests);
}

// The catalog built for the JIT (no compile cache), or null with a message
// where the JIT cannot run on this machine; the caller then returns.
inline std::shared_ptr<const Program> jit_program_or_skip(std::shared_ptr<const ir::Catalog> cat) {
  std::string why;
  if (!jit_available(why)) {
    MESSAGE("JIT unavailable: " << why);
    return nullptr;
  }
  JitOptions o;
  o.use_cache = false;
  std::string error;
  auto p = Program::build(std::move(cat), error, jit_factory(o));
  INFO(error);
  REQUIRE(p != nullptr);
  CHECK(p->evaluator() == "jit");
  return p;
}

}  // namespace culprit
