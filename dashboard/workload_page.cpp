// One workload attempt's verdict: the outcome in words, the facts of the
// attempt, the timeline (drawn by the script; a table without it), the
// cascade as a tree of <details> (keyboard-operable without script), the
// coverage gaps, and links to the verdict JSON and the workload's other runs.
#include <fmt/format.h>

#include <map>
#include <set>

#include "base/vocabulary.h"
#include "runtime/json_input.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "dashboard/pages.h"

namespace culprit::dashboard {

namespace {


std::string node_link(const std::string& node, bool culprit) {
  return fmt::format("<a href=\"/workloads?node={}{}\">{}</a>", url_encode(node), culprit ? "&amp;role=culprit" : "",
                     esc(node));
}

std::string node_links(const std::vector<std::string>& nodes, bool culprit) {
  std::string out;
  for (const auto& n : nodes) out += (out.empty() ? "" : ", ") + node_link(n, culprit);
  return out;
}

std::vector<std::string> names(const ojson& j) {
  std::vector<std::string> out;
  if (j.is_array())
    for (const auto& x : j)
      if (x.is_string()) out.push_back(x.get<std::string>());
  return out;
}

std::string cause_text(const std::string& domain, const std::string& sub) {
  return fmt::format("<span class=\"domain d-{0}\">{0}</span> / <span class=\"sub\">{1}</span>", esc(domain), esc(sub));
}

// The outcome, in the words the text report uses (runtime/verdict_text.cpp).
std::string outcome_panel(const VerdictView& view, const std::map<std::string, const SymptomItem*>& by_id) {
  const ojson& v = view.verdict;
  std::string status = string_member_or(v, "status");
  std::string out = fmt::format("<section class=\"outcome st-{}\" aria-labelledby=\"outcome-h\">\n", esc(status));
  const ojson& ov = v.contains("outcome_override") ? v["outcome_override"] : ojson();
  if (status == vocab::status::kAttributed) {
    out += fmt::format("<h2 id=\"outcome-h\"><span class=\"label\">Root cause</span> {}</h2>\n",
                       cause_text(string_member_or(v, "domain"), string_member_or(v, "sub_domain")));
    if (v.contains("root_cause") && v["root_cause"].is_object()) {
      std::string sym = string_member_or(v["root_cause"], "symptom");
      auto it = by_id.find(sym);
      out += fmt::format("<p class=\"summary\">{}</p>\n", esc(string_member_or(v["root_cause"], "summary")));
      if (it != by_id.end())
        out += fmt::format("<p>Symptom <a href=\"#{}\"><code>{}</code></a></p>\n", it->second->anchor, esc(sym));
    }
    auto culprits = names(v["culprit_nodes"]);
    out += fmt::format("<p class=\"culprits\"><span class=\"label\">Culprit nodes</span> {}</p>\n",
                       culprits.empty() ? std::string("none: the cause is not a node fault") : node_links(culprits, true));
  } else if (status == vocab::status::kAmbiguous) {
    out += "<h2 id=\"outcome-h\"><span class=\"label\">Ambiguous</span> the evidence supports more than one cause</h2>\n";
    out += "<p>Each candidate below has its own active, classified symptoms and none outranks the others. Nothing is "
           "blamed until one is ruled out.</p>\n<div class=\"candidates\">\n";
    int n = 0;
    for (const auto& c : v["candidates"]) {
      auto nodes = names(c["nodes"]);
      out += fmt::format("<article class=\"candidate\" aria-labelledby=\"cand-{0}\"><h3 id=\"cand-{0}\">Candidate {1}: {2}</h3>\n"
                         "<p><span class=\"label\">Nodes</span> {3}</p>\n<ul>",
                         n, n + 1, cause_text(string_member_or(c, "domain"), string_member_or(c, "sub_domain")),
                         nodes.empty() ? std::string("none (job-level)") : node_links(nodes, false));
      for (const auto& sid : names(c["symptoms"])) {
        auto it = by_id.find(sid);
        std::string sum = it != by_id.end() ? string_member_or(*it->second->json, "summary") : "";
        out += it != by_id.end() ? fmt::format("<li><a href=\"#{}\"><code>{}</code></a><div class=\"sum\">{}</div></li>",
                                               it->second->anchor, esc(sid), esc(sum))
                                 : fmt::format("<li><code>{}</code></li>", esc(sid));
      }
      out += "</ul></article>\n";
      ++n;
    }
    out += "</div>\n";
  } else if (status == vocab::status::kUnattributed) {
    out += "<h2 id=\"outcome-h\"><span class=\"label\">Unattributed</span> no cause established</h2>\n";
    if (!ov.is_object())
      out += "<p>No rule established a cause from the evidence; the symptoms below are not enough to name one.</p>\n";
  } else if (status == vocab::status::kNoFailure) {
    out += "<h2 id=\"outcome-h\"><span class=\"label\">No failure</span></h2>\n";
    if (!ov.is_object()) out += "<p>The workload completed normally.</p>\n";
  } else {
    out += fmt::format("<h2 id=\"outcome-h\">{}</h2>\n", esc(status));
  }
  // Where the hang is (the verdict's `hang`, schema v2): where to look, not a cause.
  if (v.contains("hang") && v["hang"].is_object()) {
    const ojson& h = v["hang"];
    out += fmt::format("<div class=\"hang\" role=\"note\"><p><span class=\"label\">Hang</span> {}</p>\n",
                       esc(string_member_or(h, "summary")));
    auto nodes = names(h.contains("laggard_nodes") ? h["laggard_nodes"] : ojson());
    std::vector<std::string> ranks;
    if (h.contains("laggard_ranks") && h["laggard_ranks"].is_array())
      for (const auto& r : h["laggard_ranks"])
        if (r.is_number_integer()) ranks.push_back(std::to_string(r.get<int64_t>()));
    if (!ranks.empty() || !nodes.empty())
      out += fmt::format("<p><span class=\"label\">Laggards</span> {}{}{}</p>\n", ranks.empty() ? "" : (ranks.size() == 1 ? "rank " : "ranks ") + esc(fmt::format("{}", fmt::join(ranks, ", "))),
                         !ranks.empty() && !nodes.empty() ? " on " : "", nodes.empty() ? "" : node_links(nodes, false));
    out += "<ul class=\"hang-evidence\">";
    for (const auto& sid : names(h.contains("evidence") ? h["evidence"] : ojson())) {
      auto it = by_id.find(sid);
      out += it != by_id.end() ? fmt::format("<li><a href=\"#{}\"><code>{}</code></a></li>", it->second->anchor, esc(sid))
                               : fmt::format("<li><code>{}</code></li>", esc(sid));
    }
    out += fmt::format("</ul><p class=\"muted\">Localised from {}.</p></div>\n",
                       string_member_or(h, "source") == "flight_recorder" ? "the ranks' Flight Recorder dumps"
                       : string_member_or(h, "source") == "ras"           ? "NCCL's RAS"
                                                                          : "the job's log lines");
  }
  if (ov.is_object())
    out += fmt::format("<p class=\"override\">Decided by rule <code>{}</code>: {}</p>\n", esc(string_member_or(ov, "rule")),
                       esc(string_member_or(ov, "reason")));
  out += "</section>\n";
  return out;
}

std::string facts(const blueprint::VerdictDetail& d, const VerdictView& view) {
  const auto& s = d.summary;
  const ojson& v = view.verdict;
  std::string out = "<section aria-labelledby=\"facts-h\"><h2 id=\"facts-h\">The attempt</h2>\n<dl class=\"facts\">\n";
  auto row = [&](const char* k, const std::string& html) { out += fmt::format("<div><dt>{}</dt><dd>{}</dd></div>\n", k, html); };
  row("Job", fmt::format("<strong>{}</strong>{}", esc(s.workload_id),
                         d.workload_name.empty() ? "" : fmt::format(" <span class=\"muted\">{}</span>", esc(d.workload_name))));
  row("Attempt", fmt::format("<code>{}</code>{}", esc(s.attempt_key),
                             s.attempt_no > 1 ? fmt::format(" (run {})", s.attempt_no) : ""));
  row("Scheduler", fmt::format("{} · cluster {}{}{}", esc(s.scheduler), esc(s.cluster),
                               d.partition_name.empty() ? "" : " · partition " + esc(d.partition_name),
                               d.user_name.empty() ? "" : " · user " + esc(d.user_name)));
  row("Terminal state", fmt::format("{}{}", esc(d.attempt_state.empty() ? s.state : d.attempt_state),
                                    d.exit_code ? fmt::format(", exit code {}", *d.exit_code) : ""));
  std::string window = fmt::format("{} → {}", time_element(s.start_ns), time_element(s.end_ns));
  if (s.start_ns && s.end_ns) window += fmt::format(" <span class=\"muted\">({})</span>", span_text(*s.end_ns - *s.start_ns));
  row("Ran (UTC)", window);
  if (d.submit_ns) row("Submitted", time_element(d.submit_ns));
  std::vector<std::string> nodes;
  for (auto n : split(d.nodes, ','))
    if (!n.empty()) nodes.emplace_back(n);
  row("Nodes", fmt::format("{} <span class=\"muted\">({})</span>", node_links(nodes, false), nodes.size()));
  const ojson& cat = v.contains("engine") ? v["engine"]["catalog"] : ojson();
  row("Catalog", fmt::format("{} <strong>{}</strong> <code title=\"{}\">{}</code>", esc(string_member_or(cat, "name")),
                             esc(string_member_or(cat, "version")), esc(string_member_or(cat, "digest")),
                             esc(string_member_or(cat, "digest").substr(0, std::min<size_t>(19, string_member_or(cat, "digest").size())))));
  row("Decided by", fmt::format("Culprit {} ({}), {} at {}", esc(string_member_or(v["engine"], "culprit")), esc(d.evaluator),
                                esc(d.attributed_by), time_element(d.attributed_ns)));
  row("Verdict", fmt::format("<a href=\"/workloads/{0}/verdict.json\" type=\"application/json\">verdict JSON</a> "
                             "<span class=\"muted\">({1}, <code>{2}</code>)</span>",
                             s.id, esc(string_member_or(v, "schema")), esc(d.verdict_sha256.substr(0, std::min<size_t>(19, d.verdict_sha256.size())))));
  out += "</dl></section>\n";
  return out;
}

std::string state_badge(const std::string& state) {
  return fmt::format("<span class=\"badge sym-{0}\">{0}</span>", esc(state));
}

std::string evidence_table(const ojson& s) {
  if (!s.contains("evidence") || !s["evidence"].is_array() || s["evidence"].empty()) return "<p class=\"muted\">No evidence lines kept.</p>";
  std::string out = "<table class=\"evidence\"><thead><tr><th scope=\"col\">Where</th><th scope=\"col\">Time (UTC)</th>"
                    "<th scope=\"col\">Line</th></tr></thead><tbody>\n";
  for (const auto& e : s["evidence"]) {
    std::string ts = string_member_or(e, "ts");
    auto t = ts.empty() ? std::nullopt : parse_rfc3339(ts);
    std::string origin = string_member_or(e, "ts_origin");
    std::string line = e.contains("line") && e["line"].is_number_integer() ? std::to_string(e["line"].get<int64_t>()) : "?";
    out += fmt::format("<tr><td class=\"where\"><code>{}:{}</code><div class=\"muted\">{} · {}</div></td><td class=\"time\">{}{}</td>"
                       "<td><code class=\"line\">{}</code></td></tr>\n",
                       esc(string_member_or(e, "file")), line, esc(string_member_or(e, "host")), esc(string_member_or(e, "source")),
                       t ? fmt::format("<time datetime=\"{}\">{}</time>", esc(ts), esc(ts.substr(11, ts.size() - 12)))
                         : "<span class=\"muted\">—</span>",
                       origin == "line" || origin.empty() ? "" : fmt::format("<div class=\"muted\">{}</div>", esc(origin)),
                       esc(string_member_or(e, "text")));
  }
  out += "</tbody></table>\n";
  int64_t total = s.contains("evidence_total") && s["evidence_total"].is_number_integer() ? s["evidence_total"].get<int64_t>() : 0;
  if (total > static_cast<int64_t>(s["evidence"].size()))
    out += fmt::format("<p class=\"muted\">{} evidence lines in all; the verdict keeps the first {}.</p>\n", count_text(total),
                       s["evidence"].size());
  return out;
}

void tree_item(std::string& out, const VerdictView& view, size_t i, int depth) {
  const SymptomItem& s = view.symptoms[i];
  const ojson& j = *s.json;
  std::string cls = "sym sym-" + s.state + (s.root_cause ? " root" : "") + (s.candidate ? " is-candidate" : "");
  std::string when;
  if (s.first_ns) when = time_text(s.first_ns).substr(11);
  if (s.last_ns && s.first_ns && *s.last_ns != *s.first_ns) when += " – " + time_text(s.last_ns).substr(11);
  std::string change;
  if (!s.rule.empty())
    change = fmt::format("<span class=\"change\">{} by <code>{}</code>: {}</span>", s.state == "scrubbed" ? "scrubbed" : "demoted",
                         esc(s.rule), esc(s.reason));
  bool open = s.root_cause || (depth == 0 && s.state == "active");
  out += fmt::format("<li class=\"{}\" id=\"{}\"><details{}><summary>{} {}<strong class=\"kind\">{}</strong> on {} ×{}"
                     "{} {}</summary>\n<div class=\"body\">",
                     cls, s.anchor, open ? " open" : "", state_badge(s.state),
                     s.root_cause ? "<span class=\"badge cause\">root cause</span> " : "", esc(s.kind),
                     s.node.empty() ? "the job" : esc(s.node), s.count,
                     when.empty() ? "" : fmt::format(" <span class=\"muted\">{}</span>", esc(when)), change);
  out += fmt::format("<p class=\"summary\">{}</p>\n", esc(string_member_or(j, "summary")));
  std::string cls_text;
  if (j.contains("classification") && j["classification"].is_object())
    cls_text = fmt::format(" · classified {}", cause_text(string_member_or(j["classification"], "domain"), string_member_or(j["classification"], "sub_domain")));
  out += fmt::format("<p class=\"meta\">Made by rule <code>{}</code>{} · id <code>{}</code></p>\n", esc(string_member_or(j, "rule")), cls_text,
                     esc(s.id));
  out += evidence_table(j);
  out += "</div></details>\n";
  if (!s.children.empty()) {
    out += fmt::format("<ul aria-label=\"Explained by {}\">\n", esc(s.id));
    for (size_t c : s.children) tree_item(out, view, c, depth + 1);
    out += "</ul>\n";
  }
  out += "</li>\n";
}

std::string cascade(const VerdictView& view) {
  std::map<std::string, size_t> counts;
  for (const auto& s : view.symptoms) counts[s.state]++;
  std::string out = "<section aria-labelledby=\"cascade-h\"><h2 id=\"cascade-h\">Symptoms and their cascade</h2>\n";
  if (view.symptoms.empty()) return out + "<p>No symptoms: no rule matched the evidence.</p></section>\n";
  out += fmt::format("<p>{} symptom{}: {} active, {} demoted (explained by another symptom), {} scrubbed (noise). A symptom "
                     "is listed under the one its demotion names as the cause; open one for its evidence.</p>\n",
                     view.symptoms.size(), view.symptoms.size() == 1 ? "" : "s", counts["active"], counts["demoted"],
                     counts["scrubbed"]);
  out += "<ul class=\"tree\" id=\"cascade\">\n";
  for (size_t r : view.roots) tree_item(out, view, r, 0);
  out += "</ul></section>\n";
  return out;
}

std::string timeline(const blueprint::VerdictDetail& d, const VerdictView& view) {
  std::string out = "<section aria-labelledby=\"timeline-h\"><h2 id=\"timeline-h\">Timeline</h2>\n";
  const std::string& status = d.summary.status;
  out += fmt::format("<p class=\"muted\">Symptoms per node from first to last sighting (UTC); {}. Select one to jump to it in "
                     "the cascade.</p>\n",
                     status == vocab::status::kAttributed  ? "the root cause is outlined and named"
                     : status == vocab::status::kAmbiguous ? "each candidate cause is named"
                                             : "no cause was named, so every mark is a symptom");
  out += fmt::format("<div class=\"chart timeline\" data-chart=\"timeline\" data-src=\"/api/workloads/{}/timeline\" "
                     "role=\"img\" aria-label=\"Timeline of the symptoms of each node\"></div>\n",
                     d.summary.id);
  // Without script (and for screen readers) the same data as a table.
  out += "<details class=\"data\"><summary>The timeline as a table</summary>\n<table><thead><tr><th scope=\"col\">Node</th>"
         "<th scope=\"col\">Symptom</th><th scope=\"col\">State</th><th scope=\"col\">First (UTC)</th><th scope=\"col\">Last</th>"
         "<th scope=\"col\" class=\"num\">Count</th></tr></thead><tbody>\n";
  for (const auto& row : view.timeline_nodes)
    for (const auto& s : view.symptoms) {
      if ((s.node.empty() ? std::string("job") : s.node) != row) continue;
      out += fmt::format("<tr{}><td>{}</td><td><a href=\"#{}\">{}</a>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>\n",
                         s.root_cause ? " class=\"root\"" : "", esc(row), s.anchor, esc(s.kind),
                         s.root_cause ? " <strong>(root cause)</strong>" : "", esc(s.state), time_element(s.first_ns),
                         time_element(s.last_ns), s.count);
    }
  out += "</tbody></table></details>\n</section>\n";
  return out;
}

std::string coverage(const VerdictView& view) {
  std::string out = "<section aria-labelledby=\"coverage-h\"><h2 id=\"coverage-h\">Coverage: what the verdict could not see</h2>\n";
  if (view.coverage_gaps.empty()) {
    out += "<p>No gaps: every log source the catalog reads was found on every node.</p>\n";
  } else {
    out += "<ul class=\"gaps\">\n";
    for (const auto& g : view.coverage_gaps) out += fmt::format("<li>{}</li>\n", esc(g));
    out += "</ul>\n";
  }
  const ojson& cov = view.verdict.contains("coverage") ? view.verdict["coverage"] : ojson();
  if (cov.is_object() && cov.contains("warnings") && cov["warnings"].is_array() && !cov["warnings"].empty()) {
    out += "<details class=\"data\"><summary>The verdict's own warnings</summary><ul>";
    for (const auto& w : cov["warnings"])
      if (w.is_string()) out += fmt::format("<li><code>{}</code></li>", esc(w.get<std::string>()));
    out += "</ul></details>\n";
  }
  if (cov.is_object() && cov.contains("sources") && cov["sources"].is_object()) {
    out += "<details class=\"data\"><summary>Sources read</summary><table><thead><tr><th scope=\"col\">Source</th>"
           "<th scope=\"col\">Nodes with data</th><th scope=\"col\" class=\"num\">Files</th><th scope=\"col\" class=\"num\">Lines</th>"
           "<th scope=\"col\" class=\"num\">Outside the window</th><th scope=\"col\" class=\"num\">Events</th></tr></thead><tbody>\n";
    for (auto it = cov["sources"].begin(); it != cov["sources"].end(); ++it) {
      const ojson& sc = it.value();
      auto num = [&](const char* k) { return sc.contains(k) && sc[k].is_number_integer() ? count_text(sc[k].get<int64_t>()) : "0"; };
      size_t with = sc.contains("nodes_with_data") && sc["nodes_with_data"].is_array() ? sc["nodes_with_data"].size() : 0;
      out += fmt::format("<tr><td>{}</td><td>{} of {}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                         "<td class=\"num\">{}</td></tr>\n",
                         esc(it.key()), with, num("nodes_expected"), num("files"), num("lines_read"), num("lines_out_of_scope"),
                         num("events"));
    }
    out += "</tbody></table></details>\n";
  }
  out += "</section>\n";
  return out;
}

std::string related_section(const std::vector<blueprint::RelatedVerdict>& related) {
  if (related.empty()) return "";
  std::string out = "<section aria-labelledby=\"related-h\"><h2 id=\"related-h\">Other verdicts of this job</h2>\n<ul>\n";
  for (const auto& r : related)
    out += fmt::format("<li><a href=\"/workloads/{}\"><code>{}</code></a> ended {}: <span class=\"badge st-{}\">{}</span> {} "
                       "<span class=\"muted\">catalog {}</span></li>\n",
                       r.id, esc(r.attempt_key), time_element(r.end_ns), esc(r.status), esc(status_label(r.status)),
                       r.domain.empty() ? "" : cause_text(r.domain, r.sub_domain), esc(r.catalog_version));
  out += "</ul></section>\n";
  return out;
}

// What follows from the verdict (culprit.verdict/v2's recommendation,
// docs/recovery.md): the job's action, then each node's. A v1 verdict has
// none and shows nothing. Each action's `why` (its reason without the action
// it names) is said once when every action shares it, as the actions of one
// cause do, and beside the action otherwise; a verdict stored before `why`
// existed shows each action's whole reason instead.
std::string recommendation_section(const ojson& v) {
  if (!v.is_object() || !v.contains("recommendation") || !v["recommendation"].is_object()) return "";
  const ojson& r = v["recommendation"];
  std::vector<const ojson*> actions;
  if (r.contains("job") && r["job"].is_object()) actions.push_back(&r["job"]);
  if (r.contains("nodes") && r["nodes"].is_array())
    for (const auto& a : r["nodes"])
      if (a.is_object()) actions.push_back(&a);
  if (actions.empty()) return "";
  bool have_why = true;
  std::set<std::string> whys, bases;
  for (const ojson* a : actions) {
    if (!a->contains("why")) have_why = false;
    whys.insert(string_member_or(*a, "why"));
    bases.insert(string_member_or(*a, "basis"));
  }
  const bool one_why = have_why && whys.size() == 1 && !whys.begin()->empty();
  std::string out = "<section aria-labelledby=\"recommend-h\"><h2 id=\"recommend-h\">What to do</h2>\n";
  if (one_why) out += fmt::format("<p class=\"why\"><strong>Why:</strong> {}</p>\n", esc(*whys.begin()));
  out += "<ul class=\"recommend\">\n";
  // The action in words ("Reset the GPU of node-02", "Restart the job
  // without node-03"); the token itself stays in the title, as the JSON and
  // the store have it.
  auto item = [&](const ojson& a, const std::string& who) {
    std::string target;
    if (a.contains("target") && a["target"].is_object())
      for (auto it = a["target"].begin(); it != a["target"].end(); ++it)
        if (it.value().is_string()) target += fmt::format(" <code>{} {}</code>", esc(it.key()), esc(it.value().get<std::string>()));
    const std::string action = string_member_or(a, "action");
    const std::string detail = one_why ? "" : have_why ? string_member_or(a, "why") : string_member_or(a, "reason");
    out += fmt::format("<li><strong title=\"{}\">{}</strong>{}{}{}</li>\n", esc(action), esc(vocab::action_label(action)),
                       who.empty() ? "" : " " + who, target,
                       detail.empty() ? "" : fmt::format("<br><span class=\"muted\">{}</span>", esc(detail)));
  };
  if (r.contains("job") && r["job"].is_object()) {
    const ojson& job = r["job"];
    std::string without;
    if (job.contains("nodes") && job["nodes"].is_array())
      for (const auto& n : job["nodes"])
        if (n.is_string()) without += (without.empty() ? "" : ", ") + node_link(n.get<std::string>(), true);
    item(job, string_member_or(job, "action") == vocab::job_action::kRestartExcluding ? without : "");
  }
  if (r.contains("nodes") && r["nodes"].is_array())
    for (const auto& a : r["nodes"])
      if (a.is_object()) item(a, node_link(string_member_or(a, "node"), true));
  out += "</ul>\n";
  // Where the actions come from, once: the recovery table's line (a class or
  // an XID bucket), when one line gave them all.
  if (bases.size() == 1) {
    const std::string& b = *bases.begin();
    if (b.rfind("class ", 0) == 0 || b.rfind("xid ", 0) == 0)
      out += fmt::format("<p class=\"muted\">From the recovery table's line <code>{}</code> (docs/recovery.md).</p>\n", esc(b));
  }
  return out + "</section>\n";
}

}  // namespace

std::string workload_page(const PageFrame& frame, const blueprint::VerdictDetail& d, const VerdictView& view,
                          const std::vector<blueprint::RelatedVerdict>& related) {
  std::map<std::string, const SymptomItem*> by_id;
  for (const auto& s : view.symptoms) by_id.emplace(s.id, &s);
  std::string out = fmt::format(
      "<nav class=\"crumbs\" aria-label=\"Breadcrumb\"><a href=\"/workloads\">Workloads</a> › <span aria-current=\"page\">{}</span></nav>\n"
      "<h1>Job {} <span class=\"badge st-{}\">{}</span> <span class=\"muted\">{} · {}</span></h1>\n",
      esc(d.summary.workload_id), esc(d.summary.workload_id), esc(d.summary.status), esc(status_label(d.summary.status)),
      esc(d.summary.state), time_text(d.summary.end_ns));
  out += outcome_panel(view, by_id);
  out += recommendation_section(view.verdict);
  out += "<div class=\"columns\">\n";
  out += facts(d, view);
  out += coverage(view);
  out += "</div>\n";
  out += timeline(d, view);
  out += cascade(view);
  out += related_section(related);
  return page(frame, out);
}

}  // namespace culprit::dashboard
