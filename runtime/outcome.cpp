#include "runtime/outcome.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "base/vocabulary.h"
#include "runtime/canonical_order.h"

namespace culprit {

Outcome outcome_of(const std::deque<Symptom>& symptoms, const WorkloadContext& context,
                   const std::function<bool(const std::string& source, const std::string& node)>& heard) {
  // Ordered by classification, so candidates come out in the same order
  // whatever order the rules created the symptoms in.
  std::map<std::pair<std::string, std::string>, std::vector<const Symptom*>> classes;
  for (const auto& s : symptoms)
    if (s.state == SymptomState::Active && s.classification) classes[*s.classification].push_back(&s);
  Outcome o;
  for (auto& [cls, list] : classes) {
    Candidate c;
    c.domain = cls.first;
    c.sub_domain = cls.second;
    std::set<std::string> nodes, sources, collected_on;
    bool specific = false;
    c.on_job = true;
    for (const Symptom* s : list) {
      c.on_job = c.on_job && s->class_on_job;
      if (!s->node.empty() && !s->control_plane) (s->node_unplaced ? collected_on : nodes).insert(s->node);
      c.symptoms.push_back(s->id);
      specific = specific || !s->generic;
      sources.insert(s->evidence_sources.begin(), s->evidence_sources.end());
    }
    sources.insert("app");
    std::sort(c.symptoms.begin(), c.symptoms.end());
    c.nodes.assign(nodes.begin(), nodes.end());
    for (const auto& n : collected_on)
      if (!nodes.count(n)) c.collected_on.push_back(n);
    // Generic evidence names a node only as the single origin: the same
    // generic failure still active on several nodes (nothing explained the
    // others as its cascade) is the job's code or a library failing wherever
    // it ran, and names none of them.
    if (!specific) {
      // One node: its own only if every other node was heard from on one of
      // the sources the evidence came from, or on the application's log
      // (where a rank shows its own failure, or that it lost a peer).
      bool others_heard = std::all_of(context.nodes.begin(), context.nodes.end(), [&](const std::string& n) {
        return nodes.count(n) || std::any_of(sources.begin(), sources.end(), [&](const std::string& src) { return heard(src, n); });
      });
      c.basis = nodes.size() > 1 ? basis::kGenericNoSingleOrigin
              : nodes.size() == 1 && !others_heard ? basis::kGenericOriginUnseen
                                                   : basis::kSingleOriginGeneric;
      if (c.basis != basis::kSingleOriginGeneric) c.generic_nodes = std::move(c.nodes), c.nodes.clear();
    }
    // A class of the job's own (a code failure) names no node, wherever it
    // showed; the basis above still says whether it had a single origin.
    if (c.on_job && !c.nodes.empty()) {
      c.generic_nodes.insert(c.generic_nodes.end(), c.nodes.begin(), c.nodes.end());
      c.nodes.clear();
    }
    o.candidates.push_back(std::move(c));
  }
  if (classes.empty()) {
    bool completed = context.terminal.state == vocab::state::kCompleted && context.terminal.exit_code.value_or(0) == 0;
    o.status = completed ? vocab::status::kNoFailure : vocab::status::kUnattributed;
  } else if (classes.size() == 1) {
    auto& [cls, list] = *classes.begin();
    o.status = vocab::status::kAttributed;
    o.domain = cls.first;
    o.sub_domain = cls.second;
    o.culprit_nodes = o.candidates.front().nodes;
    o.basis = o.candidates.front().basis;
    std::vector<const Symptom*> sorted = list;
    std::sort(sorted.begin(), sorted.end(), symptom_order);
    o.root_cause = sorted.front()->id;
    o.root_cause_summary = sorted.front()->summary;
  } else {
    o.status = vocab::status::kAmbiguous;
  }
  return o;
}

void set_outcome(Outcome& outcome, const ir::Action& a, const std::string& rule, const std::string& reason) {
  outcome.status = a.status;
  if (!a.domain.empty()) {
    outcome.domain = a.domain;
    outcome.sub_domain = a.sub_domain;
  }
  if (a.status != vocab::status::kAttributed && a.status != vocab::status::kAmbiguous) {
    if (a.domain.empty()) {
      outcome.domain.clear();
      outcome.sub_domain.clear();
    }
    outcome.culprit_nodes.clear();
    outcome.basis = basis::kNone;
    if (a.status == vocab::status::kNoFailure) {
      outcome.root_cause.clear();
      outcome.root_cause_summary.clear();
    }
  }
  outcome.overridden_by = rule;
  outcome.override_reason = reason;
}

}  // namespace culprit
