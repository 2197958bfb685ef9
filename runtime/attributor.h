// The runtime's entry point: a compiled, self-tested catalog that turns the
// evidence of one workload attempt into a verdict.
//
// Every front end (the `culprit` CLI, the `culprit serve` service, the
// `culprit run` blueprint) builds one Attributor at start-up and calls
// attribute() once per workload attempt. Building it does, in order: load
// and compile the rule catalog (compiler/catalog_loader.h), build the
// Program with the chosen evaluator (native code from the JIT, or the
// interpreter; runtime/program.h), and run the catalog's inline tests
// (runtime/self_test.h). A catalog that does not compile or fails one of its
// own tests gives no Attributor: a front end never attributes with rules it
// has not checked.
//
//   culprit::AttributorConfig cfg;
//   cfg.rule_paths = {culprit::stdlib_directory(), "site-rules/"};
//   culprit::AttributorStart start;
//   auto attributor = culprit::Attributor::open(cfg, start);
//   if (!attributor) { print start.diagnostics, start.error; exit 2; }
//   culprit::DiagnoseRequest evidence = ...;   // context, files, observations, collector reports
//   culprit::Verdict v;
//   if (!attributor->attribute(std::move(evidence), {}, v, error)) { bad input: error }
//
// Ownership and thread-safety: an Attributor is immutable once open() has
// returned it; attribute() may be called from any number of threads at once
// (each call owns its evidence and its scan threads). Share it through the
// shared_ptr. No exception escapes: failures are values (AttributorStart,
// the `error` of attribute()).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/catalog_loader.h"
#include "runtime/diagnose.h"
#include "runtime/model.h"
#include "runtime/native_code.h"
#include "runtime/program.h"
#include "runtime/recovery.h"
#include "runtime/self_test.h"

namespace culprit {

struct AttributorConfig {
  // The catalog's parts, in load order (the bundled catalog first, usually;
  // see stdlib_directory()). Must not be empty.
  std::vector<std::string> rule_paths;
  bool jit = true;            // native code (falls back to the interpreter, with a warning, where the JIT cannot run)
  JitOptions jit_options;     // cache use and directory, optimization level
  bool self_test = true;      // run the catalog's inline tests; a failure refuses the catalog
  // Reuse the record of an earlier run in which every test passed with the
  // same rules, build and code (runtime/self_test_record.h), when the cache
  // is on. False: always run them.
  bool self_test_record = true;
};

// What open() found, whether or not it succeeded.
struct AttributorStart {
  Diagnostics diagnostics;                // of compiling the rules (warnings even on success)
  std::string error;                      // why open() failed ("" on success)
  std::string warning;                    // e.g. "the JIT is unavailable (...); using the interpreter"
  std::optional<TestReport> self_test;    // when the tests ran
  double parse_ms = 0, sema_ms = 0;       // compile phases (culprit check --timings)
  double self_test_ms = 0;                // running the tests, or reading their record
  bool catalog_from_image = false;        // the compiled catalog was read from the cache (LoadedCatalog::from_image)
};

class Attributor {
 public:
  // Null on failure, with `start.error` set (and `start.diagnostics` when
  // the rules do not compile, `start.self_test` when a test failed).
  static std::shared_ptr<const Attributor> open(const AttributorConfig& config, AttributorStart& start);

  // The verdict for one workload attempt. Takes the evidence by move: the
  // text of in-memory observations moves into the scanner's streams and is
  // never copied. False with `error` for bad input (an unreadable or invalid
  // observations file); I/O errors on single log files go to the verdict's
  // coverage instead.
  bool attribute(DiagnoseRequest&& evidence, const DiagnoseOptions& options, Verdict& out, std::string& error) const;

  const std::shared_ptr<const Program>& program() const { return program_; }
  const ir::Catalog& catalog() const { return program_->catalog(); }
  // The recovery table every verdict's recommendation comes from.
  const RecoveryTable& recovery() const { return *recovery_; }
  // The versions that every verdict reports (engine, catalog, libraries,
  // recovery tables).
  EngineInfo info() const;

  Attributor(std::shared_ptr<const Program> program, std::shared_ptr<const RecoveryTable> recovery)
      : program_(std::move(program)), recovery_(std::move(recovery)) {}

 private:
  std::shared_ptr<const Program> program_;
  std::shared_ptr<const RecoveryTable> recovery_;
};

}  // namespace culprit
