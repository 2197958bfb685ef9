// The rule engine: events -> symptoms -> outcome, stage by stage.
//
// Runs every rule of a Program in stage order (early, symptoms, scrub,
// aggregate, final, outcome, post_outcome), each rule in catalog order, over
// an event and symptom store indexed as each query needs (by kind, node,
// key values and time; compiler/query_plan.h chooses), so a join costs its
// matches, not the product of its inputs. The result is deterministic: events
// are put in canonical order (time, host, source, file, line, producer)
// before any rule runs, and everything emitted is sorted.
//
// Its parts, each internal to the engine: runtime/event_store.h holds the
// events by kind in canonical order and frees each kind after its last
// reader; runtime/query_index.h answers queries from indexes and memos;
// runtime/outcome.h computes the outcome; engine.cpp runs the stages and
// their actions over them.
//
// Ownership: run_engine takes the events (by value) and frees them before
// it returns; the result owns everything in it. It reads the Program
// (shared, immutable) and owns the rest.
// Thread-safety: run_engine is a pure function of its inputs; call it from
// any thread.
// Errors: none are reported and nothing throws but allocation: a run that
// spends its step budget is a result (EngineResult::budget_exhausted_by,
// outcome unattributed), not an error.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "base/limits.h"

#include "runtime/model.h"
#include "runtime/program.h"

namespace culprit {

struct EngineResult {
  std::deque<Symptom> symptoms;        // sorted by id
  Outcome outcome;
  std::vector<std::string> affected_nodes;
  std::vector<TrailEntry> trail;
  // Each rule's wall time in this run (catalog order), for --timings and
  // for finding the rule a slow diagnosis spends its time in.
  std::vector<double> rule_ms;
  // Evaluation steps taken (candidates handed to queries, events scans
  // looked at), the budget they had (the `step_budget` given, or the one
  // limits::eval_steps_for the events received), and the rule that was
  // running when they reached it ("" when they did not). A run that ran out
  // stops after that rule and its outcome is `unattributed`: what it found
  // is incomplete. Native code and the interpreter take the same steps.
  uint64_t steps = 0;
  uint64_t step_budget = 0;
  std::string budget_exhausted_by;
};

// `host_sources` lists every (source, host) pair that had data; it backs
// covered() and coverage() in rules.
EngineResult run_engine(const Program& program, const WorkloadContext& context,
                        const std::vector<std::pair<std::string, std::string>>& host_sources,
                        std::vector<Event> events);

// The same, with the events in batches (e.g. one per scanned file) in any
// order. The engine never copies or moves an event: it works on pointers
// into the batches, and frees what the events of a kind hold once the last
// rule that queries that kind has run (events of kinds no rule queries are
// emptied at once; their fixed-size shells go with the batches at the end). With `collect_trail` false, EngineResult::trail stays empty (it is
// for --explain and metrics; the rest of the result does not depend on it).
// The result is otherwise the same as for the concatenation of the batches.
//
// `step_budget` bounds the work of the rules (docs/robustness.md): a catalog
// whose queries nest over many events stops there, in the interpreter and
// in native code alike, instead of running for hours. 0 (the default) means
// limits::eval_steps_for(the number of events in `batches`). Steps are
// counted on the query plans in use: with `use_indexes` false a run takes
// more of them, and may run out where the indexed run does not.
//
// Queries are answered as the Program's query plans say (compiler/
// query_plan.h): indexes by node and key, first hits, memoized closed
// aggregates. With `use_indexes` false every query walks all candidates of
// its kinds and nothing is memoized: the plain evaluation the indexes must
// agree with (tests compare the two); the result is the same either way.
EngineResult run_engine(const Program& program, const WorkloadContext& context,
                        const std::vector<std::pair<std::string, std::string>>& host_sources,
                        std::vector<EventList> batches, bool collect_trail = true, bool use_indexes = true,
                        uint64_t step_budget = 0);

// The canonical order of events (used by the engine and by tests).
bool event_canonical_less(const Event& a, const Event& b);

}  // namespace culprit
