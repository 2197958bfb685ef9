// Diagnosing one workload attempt: evidence in, verdict out.
//
// diagnose() scans every log file in parallel (one Scanner per worker
// thread), turns observations into events, assembles coverage, runs the rule
// engine and returns the Verdict. The verdict is a function of the evidence
// only: the same evidence gives the same verdict whatever the thread count,
// the order of files or observations, or the run.
//
// Bad input (unreadable observations, invalid JSON lines) is reported through
// `error` and the call returns false; I/O errors on individual log files are
// recorded in coverage instead, so one broken file does not hide the rest.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/bundle.h"
#include "runtime/evidence_set.h"
#include "runtime/model.h"
#include "runtime/observation.h"
#include "runtime/program.h"

namespace culprit {

// Where the time of one diagnosis went (filled when DiagnoseOptions::timings is set).
struct DiagnoseTimings {
  double read_ms = 0;      // observations.jsonl and in-memory observations into streams
  double scan_ms = 0;      // every log file and stream, on all threads (elapsed)
  double engine_ms = 0;    // the rule engine: sorting, indexing, every stage (one thread)
  int64_t events = 0;      // events the engine received
  int64_t symptoms = 0;
  uint64_t eval_steps = 0;   // evaluation steps the rules took
  uint64_t eval_budget = 0;  // the steps they could take (DiagnoseOptions::eval_steps)
  unsigned threads = 0;    // scan threads used
  // The rules that took longest (at most 5, slowest first, ties by name):
  // name and wall time in ms.
  std::vector<std::pair<std::string, double>> slowest_rules;
  // Wall time in ms summed over the rules of each stage, in stage order
  // (ir::kStageNames), stages without rules left out. `final` holds the
  // cascades and the priority rule: what many symptoms cost.
  std::vector<std::pair<std::string, double>> stage_ms;
};

// How the scan took its captures (filled when DiagnoseOptions::captures is
// set; runtime/capture_regex.h): lines decided by PCRE2, lines it gave back
// to RE2, and with `verify_captures` the lines where the two differed.
struct CaptureCounts {
  int64_t pcre2 = 0, fallbacks = 0, mismatches = 0;
  std::vector<std::string> notes;  // the first differences, described
};

struct DiagnoseOptions {
  unsigned threads = 0;                          // 0 = hardware concurrency
  uint64_t split_bytes = 64ULL << 20;            // files at least this large are split across threads (ScanHelpers)
  int64_t slack_before = 10LL * 60 * 1000000000;  // evidence kept before the window start
  int64_t slack_after = 30LL * 60 * 1000000000;   // and after its end (epilogs, health checks)
  bool trail = true;                             // collect Verdict::trail (false: left empty, saves memory)
  DiagnoseTimings* timings = nullptr;            // when set, filled with the time of each phase
  bool use_indexes = true;                       // false: queries scan (run_engine; for tests of the indexes)
  // Events kept from all files and streams together (0: only the per-file
  // cap). Files are then scanned one after the other, in the fixed job
  // order, so which events are kept does not depend on timing; the rest are
  // counted in coverage like events over the per-file cap. The service sets
  // it so that what one request can hold is known before it runs.
  size_t max_events = 0;
  // Evaluation steps the rules may take (runtime/engine.h run_engine). 0,
  // the default, is the documented budget for the events the engine gets
  // (limits::eval_steps_for, after max_events); tests set their own.
  uint64_t eval_steps = 0;
  bool verify_captures = false;                  // ScanOptions::verify_captures (tests, `eval --verify-captures`)
  CaptureCounts* captures = nullptr;             // when set, the scan's capture counts are added to it
};

// One attempt to attribute: its context and its evidence (runtime/evidence_set.h).
struct DiagnoseRequest : EvidenceSet {
  WorkloadContext context;
};

bool diagnose(std::shared_ptr<const Program> program, DiagnoseRequest&& request, const DiagnoseOptions& options,
              Verdict& out, std::string& error);
// The same, copying the request's observations (for callers that keep them).
bool diagnose(std::shared_ptr<const Program> program, const DiagnoseRequest& request, const DiagnoseOptions& options,
              Verdict& out, std::string& error);

DiagnoseRequest request_from_bundle(const Bundle& bundle);
// The same, taking the bundle's file list instead of copying it.
DiagnoseRequest request_from_bundle(Bundle&& bundle);

// The versions reported in verdicts and by `culprit --version`.
EngineInfo engine_info(const Program& program);

}  // namespace culprit
