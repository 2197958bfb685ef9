// Semantic analysis, scenarios pass: a scenario's workload, terminal state,
// logs, metrics and expectations are checked against the catalog.

#include "compiler/sema_internal.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "base/suggest.h"
#include "base/terminal_state.h"
#include "base/text_util.h"
#include "base/timestamp.h"

namespace culprit::sema_internal {

void Analyzer::analyze_scenario(const ast::Scenario& sc) {
  ir::Scenario out;
  out.title = sc.title;
  out.where = sc.where;
  out.nodes = sc.nodes;
  out.workload_id = sc.workload_id;
  if (sc.workload_id.empty()) err("E0301", sc.where, "a scenario's workload id must not be empty");
  out.scheduler = sc.scheduler;
  if (!one_of(sc.scheduler, std::array{"slurm", "kubernetes", "static"}))
    err("E0206", sc.scheduler_range, fmt::format("unknown scheduler '{}' (slurm, kubernetes, static)", sc.scheduler));
  out.terminal_state = sc.terminal_state;
  out.terminal_exit = sc.terminal_exit;
  if (!sc.terminal_state.empty() && !is_known_terminal_state(sc.terminal_state)) {
    // The outcome logic reads the state (only COMPLETED is a clean end): a
    // misspelt one would test something else than what the title says.
    auto m = closest_match(sc.terminal_state, known_terminal_states());
    if (m && edit_distance(*m, sc.terminal_state) > 2) m.reset();  // as for a context: a near miss only
    std::string msg = fmt::format("unknown terminal state '{}' (known: {})", sc.terminal_state, fmt::join(known_terminal_states(), ", "));
    const SourceRange& at = sc.terminal_range.file ? sc.terminal_range : sc.where;
    if (m) err("E0206", at, msg, fmt::format("did you mean '{}'?", *m));
    else diags_.warning("E0206", at, msg + "; only COMPLETED counts as a clean end");
  }
  if (sc.has_window) {
    out.window_start = parse_rfc3339(sc.window_start);
    out.window_end = parse_rfc3339(sc.window_end);
    if (!out.window_start || !out.window_end)
      err("E0301", sc.window_range, "scenario window bounds must be RFC 3339 times");
  }
  for (const auto& l : sc.logs) out.logs.push_back({l.host, l.source, l.text});
  for (const auto& m : sc.metrics) {
    ir::ScenarioMetric x;
    x.host = m.host;
    x.source = m.source;
    x.name = m.name;
    x.value = m.value;
    auto ts = parse_rfc3339(m.ts);
    if (!ts) err("E0301", m.where, "a scenario metric's time must be an RFC 3339 time with a zone");
    x.ts = ts.value_or(0);
    if (m.name.empty()) err("E0301", m.where, "a scenario metric needs a metric name");
    std::map<std::string, std::string> labels;
    for (const auto& [k, v] : m.labels)
      if (!labels.emplace(k, v).second) err("E0103", m.where, fmt::format("label '{}' is given twice", k));
    for (const auto& [k, v] : labels) x.labels += (x.labels.empty() ? "" : ",") + k + "=" + v;
    out.metrics.push_back(std::move(x));
  }
  if (out.nodes.empty()) {
    std::set<std::string> hosts;
    for (const auto& l : sc.logs) hosts.insert(l.host);
    for (const auto& m : sc.metrics) hosts.insert(m.host);
    out.nodes.assign(hosts.begin(), hosts.end());
  }
  for (const auto& r : sc.ranks) {
    // "0-7,16": what a context's "ranks" holds (docs/bundle.md); its ranges
    // are checked against each other when the scenario runs.
    bool shape = !r.ranks.empty() && r.ranks.find_first_not_of("0123456789-, ") == std::string::npos;
    if (!shape) err("E0301", r.where, fmt::format("a scenario's ranks are \"0-7,16\": numbers from 0 and ranges, not '{}'", r.ranks));
    if (std::find(out.nodes.begin(), out.nodes.end(), r.node) == out.nodes.end())
      err("E0301", r.where, fmt::format("ranks for '{}', which is not one of the scenario's nodes", r.node));
    out.ranks.emplace_back(r.node, r.ranks);
  }
  if (sc.expects.empty()) err("E0503", sc.where, fmt::format("scenario '{}' names no target: add at least one 'expect'", sc.title));
  for (const auto& e : sc.expects) {
    ir::ScenarioExpect x{e.kind, e.where, e.value, e.culprits, e.kind_pattern, e.node};
    switch (e.kind) {
      case ast::ScenarioExpectKind::Status:
        if (!one_of(e.value, kStatuses))
          err("E0206", tail_range(e.where, e.value.size()), fmt::format("unknown status '{}' (attributed, ambiguous, unattributed, no_failure)", e.value),
              did_you_mean(e.value, names_of(kStatuses)));
        break;
      case ast::ScenarioExpectKind::Domain:
        if (!one_of(e.value, kDomains))
          err("E0206", tail_range(e.where, e.value.size()), fmt::format("unknown domain '{}' (hardware, software, infrastructure, user)", e.value),
              did_you_mean(e.value, names_of(kDomains)));
        break;
      case ast::ScenarioExpectKind::SymptomState:
        if (!one_of(e.value, std::array{"active", "demoted", "scrubbed"}))
          err("E0206", tail_range(e.where, e.value.size()), fmt::format("unknown symptom state '{}' (active, demoted, scrubbed)", e.value),
              did_you_mean(e.value, {"active", "demoted", "scrubbed"}));
        [[fallthrough]];
      case ast::ScenarioExpectKind::NoSymptom: {
        bool any = false;
        for (const auto& k : cat_.symptom_kinds) any = any || glob_kind_match(e.kind_pattern, k.name);
        if (!any) {
          bool wildcard = e.kind_pattern.find('*') != std::string::npos;
          err("E0203", e.where, fmt::format("symptom pattern '{}' matches no symptom kind this catalog creates", e.kind_pattern),
              did_you_mean(e.kind_pattern, wildcard ? family_patterns(true) : kind_names(true)));
        }
        break;
      }
      default: break;
    }
    out.expects.push_back(std::move(x));
  }
  cat_.scenarios.push_back(std::move(out));
}

}  // namespace culprit::sema_internal
