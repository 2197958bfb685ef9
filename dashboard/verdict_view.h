// A stored verdict (culprit.verdict/v1 or v2 JSON) arranged the way the workload
// page tells it: the cascade as a tree, the timeline's rows, and the
// coverage gaps in plain words. The page (workload_page.cpp) and the
// timeline endpoint (api.cpp) both read this, so they agree.
//
// The tree: a symptom hangs under the symptom its demotion or scrub names
// as the cause (`demoted_by.cause`, `scrubbed_by.cause`); the roots are the
// symptoms with no such cause in the verdict, ordered root cause first, then
// the other classified active symptoms, the other active ones, then
// demoted and scrubbed roots. Within a parent, children keep the verdict's
// (sorted) order. A cause chain that loops is cut where it would repeat.
//
// Thread-safety: a VerdictView is immutable after make_verdict_view().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace culprit::dashboard {

using ojson = nlohmann::ordered_json;

struct SymptomItem {
  const ojson* json = nullptr;          // the symptom, inside VerdictView::verdict
  std::string id, kind, node, state;    // node "" for job-level symptoms
  std::string anchor;                   // an HTML id, unique in the page
  std::string rule, reason, cause;      // of the demotion or scrub, when there is one
  std::optional<int64_t> first_ns, last_ns;
  int64_t count = 0;
  bool root_cause = false;              // the verdict's root_cause symptom
  bool candidate = false;               // supports one of the candidates
  bool focus = false;                   // the root cause or a candidate, or in their cascade
  std::vector<size_t> children;         // indexes into VerdictView::symptoms
};

struct VerdictView {
  ojson verdict;
  std::vector<SymptomItem> symptoms;    // in the verdict's order
  std::vector<size_t> roots;            // the tree's roots, in display order
  std::vector<std::string> timeline_nodes;  // the rows: workload nodes, then other hosts, then "job"
  std::optional<int64_t> window_start_ns, window_end_ns;
  std::vector<std::string> coverage_gaps;   // sentences, most important first
};

// Parses and arranges a verdict. False with `error` when it is not a
// culprit.verdict/v1 or v2 document.
bool make_verdict_view(const std::string& json_text, VerdictView& out, std::string& error);

// The timeline as JSON for the page's script: window, rows and one entry
// per symptom with its times, state and whether it is the cause.
ojson timeline_json(const VerdictView& view);

}  // namespace culprit::dashboard
