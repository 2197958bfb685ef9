#include "runtime/verdict_text.h"

#include <fmt/format.h>

#include <map>

#include "base/text_util.h"
#include "base/timestamp.h"

namespace culprit {

namespace {

struct Style {
  bool on;
  std::string bold() const { return on ? "\033[1m" : ""; }
  std::string red() const { return on ? "\033[1;31m" : ""; }
  std::string green() const { return on ? "\033[1;32m" : ""; }
  std::string yellow() const { return on ? "\033[1;33m" : ""; }
  std::string dim() const { return on ? "\033[2m" : ""; }
  std::string reset() const { return on ? "\033[0m" : ""; }
};

std::string where(const Evidence& e) {
  return fmt::format("{}:{}", e.file, e.line);
}

void evidence_lines(std::string& out, const Symptom& s, const TextOptions& opt, const Style& st, const char* indent) {
  size_t n = 0;
  for (const auto& e : s.evidence) {
    if (n++ == opt.evidence_per_symptom) break;
    out += fmt::format("{}{}{}{}  {}\n", indent, st.dim(), where(e), st.reset(), truncate_utf8(e.text, 160));
  }
  if (s.evidence_total > static_cast<int64_t>(std::min(opt.evidence_per_symptom, s.evidence.size())))
    out += fmt::format("{}{}… {} evidence line{} in all{}\n", indent, st.dim(), s.evidence_total,
                       s.evidence_total == 1 ? "" : "s", st.reset());
}

std::string node_label(const Symptom& s) { return s.node.empty() ? "job" : s.node; }

}  // namespace

std::string verdict_to_text(const Verdict& v, const TextOptions& opt) {
  Style st{opt.color};
  std::string out;
  const Outcome& o = v.outcome;
  std::map<std::string, const Symptom*> by_id;
  for (const auto& s : v.symptoms) by_id[s.id] = &s;

  out += fmt::format("{}Workload {}{} ({}, {} node{}, terminal state {}{})\n", st.bold(), v.workload.workload_id, st.reset(),
                     v.workload.scheduler, v.workload.nodes.size(), v.workload.nodes.size() == 1 ? "" : "s",
                     v.workload.terminal.state.empty() ? "unknown" : v.workload.terminal.state,
                     v.workload.terminal.exit_code ? fmt::format(", exit {}", *v.workload.terminal.exit_code) : "");
  std::string status_color = o.status == "attributed" ? st.red() : o.status == "no_failure" ? st.green() : st.yellow();
  out += fmt::format("\n{}{}{}", status_color, o.status == "no_failure" ? "NO FAILURE" : o.status == "attributed" ? "ROOT CAUSE" : o.status == "ambiguous" ? "AMBIGUOUS" : "UNATTRIBUTED", st.reset());
  if (!o.domain.empty()) out += fmt::format("  {}{} / {}{}", st.bold(), o.domain, o.sub_domain, st.reset());
  out += "\n";
  if (!o.root_cause.empty()) {
    out += fmt::format("  {}\n", o.root_cause_summary);
  }
  if (o.status == "attributed")
    out += fmt::format("  culprit nodes: {}\n", o.culprit_nodes.empty() ? std::string("none (not a node fault)") : fmt::format("{}", fmt::join(o.culprit_nodes, ", ")));
  if (!o.overridden_by.empty()) out += fmt::format("  decided by {}: {}\n", o.overridden_by, o.override_reason);
  if (o.status == "unattributed" && o.overridden_by.empty())
    out += "  no rule established a cause from the evidence; the symptoms below are not enough to name one\n";
  if (o.status == "no_failure" && o.overridden_by.empty()) out += "  the workload completed normally\n";
  if (o.status == "ambiguous") {
    out += "  candidates:\n";
    for (const auto& c : o.candidates)
      out += fmt::format("    - {} / {} on {}\n", c.domain, c.sub_domain, c.nodes.empty() ? std::string("job") : fmt::format("{}", fmt::join(c.nodes, ", ")));
  }

  // The cause symptoms, then their cascade collapsed beneath them.
  std::vector<const Symptom*> causes, active_other, orphans, scrubbed;
  std::map<std::string, std::vector<const Symptom*>> cascade;
  for (const auto& s : v.symptoms) {
    if (s.state == SymptomState::Active) (s.classification ? causes : active_other).push_back(&s);
    else if (s.state == SymptomState::Scrubbed) scrubbed.push_back(&s);
    else if (s.demoted_by && !s.demoted_by->cause.empty() && by_id.count(s.demoted_by->cause)) cascade[s.demoted_by->cause].push_back(&s);
    else orphans.push_back(&s);
  }
  auto print_cascade = [&](const std::string& id, const char* indent) {
    auto it = cascade.find(id);
    if (it == cascade.end()) return;
    out += fmt::format("{}{} downstream symptom{} demoted:\n", indent, it->second.size(), it->second.size() == 1 ? "" : "s");
    for (const Symptom* d : it->second) {
      out += fmt::format("{}  - {}{}{} on {} ×{}  ({}: {})\n", indent, st.bold(), d->kind_name, st.reset(), node_label(*d), d->count,
                         d->demoted_by->rule, d->demoted_by->reason);
      evidence_lines(out, *d, opt, st, (std::string(indent) + "      ").c_str());
    }
  };
  if (!causes.empty()) {
    out += "\nCause symptoms:\n";
    for (const Symptom* s : causes) {
      out += fmt::format("  * {}{}{} on {} ×{}{}: {}\n", st.bold(), s->kind_name, st.reset(), node_label(*s), s->count,
                         s->first ? " from " + format_rfc3339(*s->first) : "", s->summary);
      evidence_lines(out, *s, opt, st, "      ");
      print_cascade(s->id, "    ");
    }
  }
  if (!active_other.empty()) {
    out += "\nOther active symptoms (not a cause by themselves):\n";
    for (const Symptom* s : active_other) {
      out += fmt::format("  * {} on {} ×{}: {}\n", s->kind_name, node_label(*s), s->count, s->summary);
      evidence_lines(out, *s, opt, st, "      ");
    }
  }
  // Demoted symptoms whose cause was itself demoted, or that had no cause link.
  for (const auto& [cause, list] : cascade)
    if (by_id.at(cause)->state != SymptomState::Active || !by_id.at(cause)->classification)
      for (const Symptom* d : list) orphans.push_back(d);
  if (!orphans.empty()) {
    out += "\nOther demoted symptoms:\n";
    for (const Symptom* s : orphans)
      out += fmt::format("  - {} on {} ×{} ({}: {})\n", s->kind_name, node_label(*s), s->count, s->demoted_by->rule, s->demoted_by->reason);
  }
  if (!scrubbed.empty()) {
    out += fmt::format("\n{} symptom{} scrubbed as noise:", scrubbed.size(), scrubbed.size() == 1 ? "" : "s");
    for (const Symptom* s : scrubbed) out += fmt::format(" {}", s->id);
    out += "\n";
  }
  if (!v.coverage.warnings.empty()) {
    out += fmt::format("\n{}Coverage warnings:{}\n", st.yellow(), st.reset());
    for (const auto& w : v.coverage.warnings) out += fmt::format("  ! {}\n", w);
  }
  int64_t lines = 0, out_of_scope = 0;
  for (const auto& [name, sc] : v.coverage.sources) {
    lines += sc.lines_read;
    out_of_scope += sc.lines_out_of_scope;
  }
  out += fmt::format("\n{}{} lines read, {} outside the workload window; catalog {} {} ({}), {}{}\n", st.dim(), lines, out_of_scope,
                     v.engine.catalog_name, v.engine.catalog_version, v.engine.catalog_digest.substr(0, 19), v.engine.evaluator, st.reset());
  if (opt.explain) {
    out += "\nDerivation trail:\n";
    std::string stage;
    for (const auto& t : v.trail) {
      if (t.stage != stage) {
        stage = t.stage;
        out += fmt::format("  [{}]\n", stage);
      }
      out += fmt::format("    {} {} {}: {}\n", t.rule, t.action, t.target, t.detail);
    }
  }
  return out;
}

}  // namespace culprit
