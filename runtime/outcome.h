// The outcome of a rule-engine run: what the symptoms left active and
// classified amount to, and how a rule's `set outcome` changes it.
//
// The stage runner (runtime/engine.cpp) computes the outcome once the rules
// up to the final stage have run (before post_outcome rules, which may read
// and override it) and applies each `set outcome` action through here:
//   - no classified active symptom: no_failure when the workload completed
//     with exit 0, else unattributed;
//   - one classification: attributed, with the culprit nodes (workload
//     nodes, not control-plane hosts) and the root cause, the first of its
//     symptoms by time, then id;
//   - more than one: ambiguous. Every classification is a candidate.
// Each candidate has a basis: `specific` when one of its symptoms was
// classified as specific evidence; otherwise (`classify ... generic`: a
// traceback, a crash signal, a generic CUDA error) `single_origin_generic`
// when they are on one node at most, and `generic_no_single_origin` when the
// same generic failure is still active on several nodes: then the candidate
// names no node (the nodes are kept apart, as `generic_nodes`), since what
// fails alike wherever it runs is the job's code or its stack, not a node.
// On one node it is that node's only when the other workload nodes' logs of
// the same sources, or their application logs, were read (`heard(source,
// node)`): a traceback in the one
// log a user pasted of a four-node job may be printed by every rank, so
// without the others' logs it is `generic_origin_unseen` and names no node.
// A class a rule gives `on job` (`classify ... on job`: a code failure of the
// job's, wherever it showed) names no node either; its nodes are kept as
// `generic_nodes`, and its basis still says whether it had a single origin.
// A symptom whose node is only the host that collected the job's combined
// output (Symptom::node_unplaced) names no node either: that host is kept
// apart, as the candidate's `collected_on`, whatever the basis.
//
// Internal to the engine. Pure functions of their arguments: any thread;
// nothing throws but allocation.
#pragma once

#include <deque>
#include <functional>
#include <string>

#include "compiler/ir.h"
#include "runtime/model.h"

namespace culprit {

// `heard(source, node)`: whether that node's logs of that source were read.
Outcome outcome_of(const std::deque<Symptom>& symptoms, const WorkloadContext& context,
                   const std::function<bool(const std::string& source, const std::string& node)>& heard);

// `set outcome` by rule `rule` with `reason` (already interpolated): the
// status, and the classification when the action names one; a status that
// blames no one clears the culprit nodes, and no_failure the root cause.
void set_outcome(Outcome& outcome, const ir::Action& action, const std::string& rule, const std::string& reason);

}  // namespace culprit
