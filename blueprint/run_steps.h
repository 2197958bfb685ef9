// The steps `culprit run` takes for each attempt, shared by its two loops:
// the poll loop (blueprint/runner.cpp) and the shared-queue worker
// (blueprint/queue_runner.cpp). Internal to the blueprint; runner.h is the
// manual of what they do together.
//
// Thread-safety: collect_and_attribute runs on a pool thread and touches
// only its InFlight; everything else runs on the run loop's thread (the one
// that owns the store, the hand-off and the outputs).
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "base/text_util.h"
#include "base/timestamp.h"
#include "blueprint/runner.h"

namespace culprit::blueprint::run_steps {

using ojson = nlohmann::ordered_json;

int64_t now_ns();
std::string human_bytes(double b);

// The run's progress on its log: one status line redrawn in place on a
// terminal, plain lines otherwise (runner.h, "Progress").
class Progress {
 public:
  Progress(std::ostream* log, bool terminal) : log_(log), terminal_(terminal), t0_(std::chrono::steady_clock::now()) {}
  RunCounts counts;
  int64_t bytes = 0;
  std::string current;

  // `text` quotes attempt keys, node names, verdicts and error messages
  // taken from the scheduler and the evidence: it is escaped whole, so a
  // control character in them can neither forge a line nor drive the terminal.
  void line(const std::string& text) {
    if (!log_) return;
    if (terminal_) *log_ << "\r\033[K";
    int64_t t = now_ns();
    *log_ << fmt::format("{} culprit run: {}\n", format_rfc3339(t - t % 1000000), escape_for_terminal(text));
    if (terminal_) draw();
    log_->flush();
  }
  // One line per stored attempt: the log when not on a terminal (there the
  // status line and stdout show it).
  void attempt_line(const std::string& text) {
    if (terminal_) draw();
    else line(text);
  }
  void draw() {
    if (!log_ || !terminal_) return;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    *log_ << fmt::format("\r\033[Kdiscovered {} · skipped {} · attributed {} · failed {} · {} ({}/s){}", counts.discovered,
                         counts.skipped, counts.attributed, counts.failed, human_bytes(static_cast<double>(bytes)),
                         human_bytes(secs > 0 ? static_cast<double>(bytes) / secs : 0),
                         current.empty() ? "" : " · " + escape_for_terminal(current));
    log_->flush();
  }
  void end() {
    if (log_ && terminal_) {
      *log_ << "\r\033[K";
      log_->flush();
    }
  }

 private:
  std::ostream* log_;
  bool terminal_;
  std::chrono::steady_clock::time_point t0_;
};


// One attempt between the run loop, which stores and prints it, and the
// pool's thread that collects and attributes it.
// One attempt between the run loop, which stores and prints it, and the
// pool's thread that collects and attributes it.
struct InFlight {
  const Attempt* attempt = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;  // under mu: the fields below are set
  int64_t bytes = 0, wire = 0;
  bool ok = false;
  ojson verdict;
  AttributionError aerr;
  // Where its time went (RunSetup::timings): wall clock when it was queued
  // (0: not through a queue) and when its collection started; nanoseconds
  // collecting and attributing.
  int64_t queued_at = 0, started_at = 0, collect_ns = 0, attribute_ns = 0;
};

// The part of an attempt that needs no store: on a pool thread. Collects
// with the discovery's own collector (a bundle) or the configured ones,
// attributes, and sets `f` (done, under its mutex).
void collect_and_attribute(RunSetup& s, const BlueprintConfig& cfg, const std::atomic<bool>& stop, Discovery& d, InFlight& f);

// Waits for `f`, then stores its verdict (with the recommendations decided
// for it, handed off once stored) or its failure, counts it in `p` and
// prints it. `status` becomes 1 on a failure; `deferred` counts hand-offs
// the webhook's breaker left pending. False only when the store failed
// (the line is printed; the run ends with status 3).
bool store_finished(RunSetup& s, Progress& p, const std::string& discovered_by, InFlight& f, int& status,
                    int64_t& deferred, std::string& err);

// Delivers what an interrupted run (killed between storing verdicts and
// handing off their recommendations) or an earlier poll (the webhook's
// breaker) left pending. False only on a store error.
bool resume_handoffs(RunSetup& s, Progress& p, int& status, int64_t& deferred, std::string& err);

// One placement snapshot of every discovery that records placement.
void record_placements(RunSetup& s, Progress& p, const std::atomic<bool>& stop);

// How long after the job's end its verdict came (progress lines).
std::string human_latency(int64_t ns);

// run_blueprint with a shared queue (RunSetup::queue): queue_runner.cpp.
int run_queue_worker(RunSetup& s, const std::atomic<bool>& stop);

}  // namespace culprit::blueprint::run_steps
