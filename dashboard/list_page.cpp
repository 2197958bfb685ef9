// The workload list: a GET form of filters, a sortable table, pages. All of
// it is plain HTML, so it works without JavaScript and every state is a URL.
#include <fmt/format.h>

#include <algorithm>

#include "base/vocabulary.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "dashboard/pages.h"

namespace culprit::dashboard {

namespace {

std::string option(const std::string& value, const std::string& label, const std::string& selected) {
  return fmt::format("<option value=\"{}\"{}>{}</option>", esc(value), value == selected ? " selected" : "", esc(label));
}

std::string select_field(const char* id, const char* name, const char* label, const std::vector<std::string>& values,
                         const std::string& selected, const char* any = "any") {
  std::string opts = option("", any, selected);
  bool seen = selected.empty();
  for (const auto& v : values) {
    if (v.empty()) continue;
    opts += option(v, v, selected);
    seen = seen || v == selected;
  }
  // A value given in the URL but absent from the store still shows as chosen.
  if (!seen) opts += option(selected, selected, selected);
  return fmt::format("<div class=\"field\"><label for=\"{0}\">{2}</label><select id=\"{0}\" name=\"{1}\">{3}</select></div>\n",
                     id, name, label, opts);
}

std::string text_field(const char* id, const char* name, const char* label, const std::string& value, const char* extra,
                       const char* hint) {
  return fmt::format(
      "<div class=\"field\"><label for=\"{0}\">{2}</label><input id=\"{0}\" name=\"{1}\" value=\"{3}\" {4}>{5}</div>\n", id,
      name, label, esc(value), extra, hint);
}

std::string form(const ListQuery& q, const blueprint::StoreFacets& f) {
  std::string out = "<form class=\"filters\" method=\"get\" action=\"/workloads\" role=\"search\" aria-label=\"Filter the workloads\">\n";
  out += text_field("f-q", "q", "Job id", q.filter.workload_prefix,
                    "type=\"search\" autocomplete=\"off\" spellcheck=\"false\" aria-describedby=\"f-q-hint\" data-shortcut=\"/\"",
                    "<small id=\"f-q-hint\" class=\"hint\">the id or its beginning; press / to jump here</small>");
  out += text_field("f-from", "from", "Ended from", q.from,
                    q.from.size() > 10 ? "type=\"text\"" : "type=\"date\"", "");
  out += text_field("f-to", "to", "Ended to (inclusive)", q.to, q.to.size() > 10 ? "type=\"text\"" : "type=\"date\"", "");
  out += "<fieldset class=\"field statuses\"><legend>Status</legend>";
  for (const auto& w : vocab::statuses()) {
    std::string s(w.word);
    bool on = std::find(q.filter.statuses.begin(), q.filter.statuses.end(), s) != q.filter.statuses.end();
    out += fmt::format("<label class=\"check\"><input type=\"checkbox\" name=\"status\" value=\"{}\"{}> {}</label>", s,
                       on ? " checked" : "", status_label(s));
  }
  out += "</fieldset>\n";
  std::string domain_opts = option("", "any", q.filter.domain);
  for (const auto& d : vocab::domains()) domain_opts += option(std::string(d.word), std::string(d.word), q.filter.domain);
  domain_opts += option(blueprint::kNoDomain, "none (no cause named)", q.filter.domain);
  out += fmt::format("<div class=\"field\"><label for=\"f-domain\">Domain</label><select id=\"f-domain\" name=\"domain\">{}</select></div>\n",
                     domain_opts);
  std::string subs;
  for (const auto& s : f.sub_domains)
    if (!s.empty()) subs += fmt::format("<option value=\"{}\">", esc(s));
  out += text_field("f-sub", "sub_domain", "Sub-domain", q.filter.sub_domain,
                    "list=\"sub-domains\" autocomplete=\"off\" spellcheck=\"false\"",
                    ("<datalist id=\"sub-domains\">" + subs + "</datalist>").c_str());
  out += text_field("f-node", "node", "Node", q.filter.node, "autocomplete=\"off\" spellcheck=\"false\"", "");
  out += fmt::format(
      "<div class=\"field\"><label for=\"f-role\">The node</label><select id=\"f-role\" name=\"role\">{}{}</select></div>\n",
      option("any", "ran the job", q.role), option("culprit", "is a culprit", q.role));
  out += select_field("f-scheduler", "scheduler", "Scheduler", f.schedulers, q.filter.scheduler);
  out += select_field("f-catalog", "catalog", "Catalog version", f.catalog_versions, q.filter.catalog_version);
  // The order and page size survive a change of filters.
  if (q.sort != "end") out += fmt::format("<input type=\"hidden\" name=\"sort\" value=\"{}\">", esc(q.sort));
  if (q.order != "desc") out += fmt::format("<input type=\"hidden\" name=\"order\" value=\"{}\">", esc(q.order));
  if (q.per_page != 50) out += fmt::format("<input type=\"hidden\" name=\"per_page\" value=\"{}\">", q.per_page);
  out += "<div class=\"actions\"><button type=\"submit\">Apply filters</button> <a class=\"button secondary\" href=\"/workloads\">Clear</a></div>\n";
  out += "</form>\n";
  return out;
}

std::string header_cell(const ListQuery& q, const char* key, const char* label, const char* cls = "") {
  if (!*key) return fmt::format("<th scope=\"col\" class=\"{}\">{}</th>", cls, label);
  bool active = q.sort == key;
  const char* aria = !active ? "" : q.order == "desc" ? " aria-sort=\"descending\"" : " aria-sort=\"ascending\"";
  const char* arrow = !active ? "" : q.order == "desc" ? " <span aria-hidden=\"true\">▼</span>" : " <span aria-hidden=\"true\">▲</span>";
  return fmt::format("<th scope=\"col\" class=\"{}\"{}><a href=\"{}\">{}{}</a></th>", cls, aria, esc(sort_url(q, key)), label,
                     arrow);
}

std::string describe_filters(const ListQuery& q) {
  std::vector<std::string> parts;
  auto add = [&](const char* what, const std::string& v) {
    if (!v.empty()) parts.push_back(fmt::format("{} <strong>{}</strong>", what, esc(v)));
  };
  add("job id", q.filter.workload_prefix);
  add("from", q.from);
  add("to", q.to);
  if (!q.filter.statuses.empty()) {
    std::string s;
    for (const auto& x : q.filter.statuses) s += (s.empty() ? "" : " or ") + status_label(x);
    add("status", s);
  }
  add("domain", q.filter.domain);
  add("sub-domain", q.filter.sub_domain);
  if (!q.filter.node.empty()) add(q.role == "culprit" ? "culprit node" : "node", q.filter.node);
  add("scheduler", q.filter.scheduler);
  add("catalog", q.filter.catalog_version);
  if (parts.empty()) return "";
  return " matching " + fmt::format("{}", fmt::join(parts, ", "));
}

std::string pager(const ListQuery& q, int64_t total) {
  int64_t pages = std::max<int64_t>(1, (total + q.per_page - 1) / q.per_page);
  if (pages <= 1) return "";
  auto link = [&](int64_t page, const char* label, const char* rel, bool enabled) {
    if (!enabled) return fmt::format("<span class=\"disabled\" aria-disabled=\"true\">{}</span>", label);
    return fmt::format("<a href=\"{}\" rel=\"{}\">{}</a>", esc(list_url(q, "page", std::to_string(page))), rel, label);
  };
  return fmt::format("<nav class=\"pager\" aria-label=\"Pages\">{} {} <span aria-current=\"page\">Page {} of {}</span> {} {}</nav>\n",
                     link(1, "« First", "first", q.page_no > 1), link(q.page_no - 1, "‹ Previous", "prev", q.page_no > 1),
                     count_text(q.page_no), count_text(pages), link(q.page_no + 1, "Next ›", "next", q.page_no < pages),
                     link(pages, "Last »", "last", q.page_no < pages));
}

std::string culprit_links(const ListQuery& q, const std::string& nodes) {
  if (nodes.empty()) return "<span class=\"muted\">—</span>";
  std::string out;
  for (auto n : split(nodes, ',')) {
    ListQuery k = q;
    k.role = "culprit";
    k.filter.node = std::string(n);
    if (!out.empty()) out += ", ";
    out += fmt::format("<a href=\"{}\" title=\"Verdicts blaming {}\">{}</a>", esc(list_url(k, "node", std::string(n))),
                       esc(std::string(n)), esc(std::string(n)));
  }
  return out;
}

}  // namespace

std::string list_page(const PageFrame& frame, const ListQuery& q, const blueprint::StoreFacets& f,
                      const std::vector<blueprint::VerdictSummary>& rows, int64_t total) {
  std::string out = fmt::format("<h1>Workloads <span class=\"muted count\">{} verdict{} in the store</span></h1>\n",
                                count_text(f.verdicts), f.verdicts == 1 ? "" : "s");
  out += form(q, f);
  int64_t first = rows.empty() ? 0 : q.page.offset + 1, last = q.page.offset + static_cast<int64_t>(rows.size());
  if (total == 0)
    out += fmt::format("<p class=\"result\" role=\"status\" id=\"result\">No verdicts{}.</p>\n", describe_filters(q));
  else
    out += fmt::format("<p class=\"result\" role=\"status\" id=\"result\">Showing {}–{} of {} verdict{}{}.</p>\n",
                       count_text(first), count_text(last), count_text(total), total == 1 ? "" : "s", describe_filters(q));
  if (!rows.empty()) {
    out += "<div class=\"table-wrap\"><table class=\"list\" id=\"workloads\">\n";
    out += fmt::format("<caption class=\"sr-only\">Verdicts, sorted by {} {}</caption>\n", esc(q.sort),
                       q.order == "desc" ? "descending" : "ascending");
    out += "<thead><tr>" + header_cell(q, "end", "Ended (UTC)", "time") + header_cell(q, "workload", "Job") +
           header_cell(q, "scheduler", "Scheduler") + header_cell(q, "state", "State") + header_cell(q, "status", "Status") +
           header_cell(q, "cause", "Cause", "cause") + header_cell(q, "", "Culprit nodes") +
           header_cell(q, "nodes", "Nodes", "num") + header_cell(q, "", "Catalog") + "</tr></thead>\n<tbody>\n";
    for (const auto& r : rows) {
      std::string cause;
      if (!r.domain.empty())
        cause = fmt::format("<span class=\"domain d-{0}\">{0}</span> / {1}", esc(r.domain), esc(r.sub_domain));
      else
        cause = "<span class=\"muted\">no cause named</span>";
      if (!r.root_cause_summary.empty())
        cause += fmt::format("<div class=\"sum\">{}</div>", esc(truncate_utf8(r.root_cause_summary, 180)));
      std::string attempt = r.attempt_no > 1 ? fmt::format(" <span class=\"muted\">run {}</span>", r.attempt_no) : "";
      out += fmt::format(
          "<tr><td class=\"time\">{}</td><td class=\"job\"><a href=\"/workloads/{}\">{}</a>{}</td><td class=\"sched\">{} <span class=\"muted\">· {}</span></td>"
          "<td>{}</td><td><span class=\"badge st-{}\">{}</span></td><td class=\"cause\">{}</td><td>{}</td><td class=\"num\">{}</td>"
          "<td>{}</td></tr>\n",
          time_element(r.end_ns), r.id, esc(r.workload_id), attempt, esc(r.scheduler), esc(r.cluster), esc(r.state),
          esc(r.status), esc(status_label(r.status)), cause, culprit_links(q, r.culprit_nodes), r.node_count,
          esc(r.catalog_version));
    }
    out += "</tbody></table></div>\n";
  }
  out += pager(q, total);
  out += fmt::format("<p class=\"api\">This list as JSON: <a href=\"{}\">{}</a></p>\n",
                     esc("/api" + list_url(q)), esc("/api" + list_url(q)));
  return page(frame, out);
}

ojson list_json(const ListQuery& q, const std::vector<blueprint::VerdictSummary>& rows, int64_t total) {
  ojson j;
  j["total"] = total;
  j["page"] = q.page_no;
  j["per_page"] = q.per_page;
  j["sort"] = q.sort;
  j["order"] = q.order;
  ojson list = ojson::array();
  for (const auto& r : rows) {
    ojson x;
    x["id"] = r.id;
    x["url"] = fmt::format("/workloads/{}", r.id);
    x["attempt_key"] = r.attempt_key;
    x["scheduler"] = r.scheduler;
    x["cluster"] = r.cluster;
    x["workload_id"] = r.workload_id;
    x["attempt"] = r.attempt_no;
    x["state"] = r.state;
    x["start"] = r.start_ns ? ojson(format_rfc3339(*r.start_ns)) : ojson(nullptr);
    x["end"] = r.end_ns ? ojson(format_rfc3339(*r.end_ns)) : ojson(nullptr);
    x["node_count"] = r.node_count;
    x["status"] = r.status;
    x["domain"] = r.domain.empty() ? ojson(nullptr) : ojson(r.domain);
    x["sub_domain"] = r.sub_domain.empty() ? ojson(nullptr) : ojson(r.sub_domain);
    ojson nodes = ojson::array();
    for (auto n : split(r.culprit_nodes, ','))
      if (!n.empty()) nodes.push_back(std::string(n));
    x["culprit_nodes"] = nodes;
    x["root_cause"] = r.root_cause.empty() ? ojson(nullptr) : ojson(r.root_cause);
    x["root_cause_summary"] = r.root_cause_summary;
    x["catalog"] = {{"name", r.catalog_name}, {"version", r.catalog_version}};
    list.push_back(std::move(x));
  }
  j["verdicts"] = std::move(list);
  return j;
}

}  // namespace culprit::dashboard
