// The fleet view: verdicts by outcome per day (stacked bars), the share of
// failures nothing could be blamed for, and the nodes most often named the
// culprit (the repeat-offender list an operator drains). The charts are
// drawn by the script from /api/fleet/...; the tables here carry the same
// numbers, so the page reads without it.
#include <fmt/format.h>

#include <map>

#include "base/vocabulary.h"
#include "base/timestamp.h"
#include "dashboard/pages.h"

namespace culprit::dashboard {

namespace {

std::string category_label(const std::string& c) {
  if (c == vocab::status::kNoFailure) return "no failure";
  return c;
}

struct Buckets {
  std::vector<int64_t> starts;
  std::map<std::string, std::vector<int64_t>> by_category;  // category -> count per bucket
  std::vector<int64_t> failures, unattributed, ambiguous;    // per bucket
};

Buckets bucketize(const FleetQuery& q, const std::vector<blueprint::OutcomeCount>& outcomes) {
  Buckets b;
  // Stepping by difference, not by `t += bucket`: a window that ends near
  // the last instant int64 holds must not wrap into an endless one.
  for (int64_t t = q.from_ns; t < q.before_ns; t += q.bucket_ns) {
    b.starts.push_back(t);
    if (q.before_ns - t <= q.bucket_ns) break;
  }
  size_t n = b.starts.size();
  for (const auto& c : outcome_categories()) b.by_category[c].assign(n, 0);
  b.failures.assign(n, 0);
  b.unattributed.assign(n, 0);
  b.ambiguous.assign(n, 0);
  for (const auto& o : outcomes) {
    int64_t i = (o.bucket_start_ns - q.from_ns) / q.bucket_ns;
    if (i < 0 || i >= static_cast<int64_t>(n)) continue;
    std::string cat = outcome_category(o.status, o.domain);
    auto it = b.by_category.find(cat);
    if (it == b.by_category.end()) it = b.by_category.find("other");
    it->second[static_cast<size_t>(i)] += o.count;
    if (o.status != vocab::status::kNoFailure) b.failures[static_cast<size_t>(i)] += o.count;
    if (o.status == vocab::status::kUnattributed) b.unattributed[static_cast<size_t>(i)] += o.count;
    if (o.status == vocab::status::kAmbiguous) b.ambiguous[static_cast<size_t>(i)] += o.count;
  }
  return b;
}

std::string window_links(const FleetQuery& q, const blueprint::StoreFacets& f) {
  constexpr int64_t day = 86400LL * 1000000000LL;
  int64_t end = q.before_ns;
  std::string out = "<p class=\"windows\">Window: ";
  for (int days : {7, 30, 90, 365}) {
    std::string from = day_text(saturating_add(end, -days * day)), to = day_text(end - day);
    bool current = q.from == from && q.to == to;
    out += fmt::format("<a href=\"/fleet?from={}&amp;to={}\"{}>{} days</a> · ", from, to, current ? " aria-current=\"true\"" : "",
                       days);
  }
  if (f.first_end_ns && f.last_end_ns)
    out += fmt::format("<a href=\"/fleet?from={}&amp;to={}\">everything</a>", day_text(*f.first_end_ns), day_text(*f.last_end_ns));
  out += "</p>\n";
  return out;
}

}  // namespace

const std::vector<std::string>& outcome_categories() {
  // The domains, "other" (a site's own domain word), then the statuses
  // that name no domain.
  static const std::vector<std::string> k = [] {
    std::vector<std::string> v = vocab::words(vocab::domains());
    v.emplace_back("other");
    for (const auto& s : vocab::statuses())
      if (s.word != vocab::status::kAttributed) v.emplace_back(s.word);
    return v;
  }();
  return k;
}

std::string outcome_category(const std::string& status, const std::string& domain) {
  if (status == vocab::status::kAttributed) {
    return vocab::contains(vocab::domains(), domain) ? domain : "other";
  }
  if (vocab::contains(vocab::statuses(), status)) return status;
  return "other";
}

std::string fleet_page(const PageFrame& frame, const FleetQuery& q, const blueprint::StoreFacets& f,
                       const std::vector<blueprint::OutcomeCount>& outcomes, const std::vector<blueprint::Offender>& offenders) {
  Buckets b = bucketize(q, outcomes);
  int64_t total = 0;
  for (const auto& [c, v] : b.by_category)
    for (int64_t x : v) total += x;
  std::string range = fmt::format("from={}&to={}", q.from, q.to);
  std::string out = fmt::format("<h1>Fleet <span class=\"muted count\">{} to {} · {} verdict{}</span></h1>\n", esc(q.from),
                                esc(q.to), count_text(total), total == 1 ? "" : "s");
  out += "<form class=\"filters compact\" method=\"get\" action=\"/fleet\" aria-label=\"Fleet window\">\n";
  out += fmt::format("<div class=\"field\"><label for=\"w-from\">From</label><input type=\"date\" id=\"w-from\" name=\"from\" value=\"{}\"></div>\n",
                     esc(q.from));
  out += fmt::format("<div class=\"field\"><label for=\"w-to\">To (inclusive)</label><input type=\"date\" id=\"w-to\" name=\"to\" value=\"{}\"></div>\n",
                     esc(q.to));
  out += fmt::format("<div class=\"field\"><label for=\"w-bucket\">Bars per</label><select id=\"w-bucket\" name=\"bucket\">"
                     "<option value=\"day\"{}>day</option><option value=\"week\"{}>week</option></select></div>\n",
                     q.bucket == "day" ? " selected" : "", q.bucket == "week" ? " selected" : "");
  out += fmt::format("<div class=\"field\"><label for=\"w-min\">Repeat offender: culprit of at least</label><input type=\"number\" "
                     "id=\"w-min\" name=\"min\" min=\"1\" max=\"1000\" value=\"{}\" aria-describedby=\"w-min-unit\"> "
                     "<small id=\"w-min-unit\">attempts</small></div>\n",
                     q.min_attempts);
  out += "<div class=\"actions\"><button type=\"submit\">Show</button></div>\n</form>\n";
  out += window_links(q, f);
  if (q.defaulted)
    out += "<p class=\"muted\">Showing the store's verdicts up to the newest one (a year at most); pick a window "
           "above for another.</p>\n";
  std::string qs = fmt::format("from={}&amp;to={}&amp;bucket={}", esc(q.from), esc(q.to), esc(q.bucket));

  // Verdicts by outcome per bucket.
  out += fmt::format("<section aria-labelledby=\"domains-h\"><h2 id=\"domains-h\">Verdicts by domain, per {}</h2>\n", esc(q.bucket));
  out += fmt::format("<div class=\"chart\" data-chart=\"stacked\" data-src=\"/api/fleet/domains?{}\" role=\"img\" "
                     "aria-label=\"Stacked bars: verdicts per {} by domain or outcome\"></div>\n",
                     qs, esc(q.bucket));
  out += "<details class=\"data\"><summary>The numbers</summary><div class=\"table-wrap\"><table><thead><tr><th scope=\"col\">"
         + std::string(q.bucket == "week" ? "Week of" : "Day") + "</th>";
  for (const auto& c : outcome_categories()) out += fmt::format("<th scope=\"col\" class=\"num\">{}</th>", esc(category_label(c)));
  out += "</tr></thead><tbody>\n";
  for (size_t i = 0; i < b.starts.size(); ++i) {
    int64_t sum = 0;
    for (const auto& c : outcome_categories()) sum += b.by_category[c][i];
    if (sum == 0) continue;
    std::string day = day_text(b.starts[i]);
    int64_t next = saturating_add(b.starts[i], q.bucket_ns);
    out += fmt::format("<tr><th scope=\"row\"><a href=\"/workloads?from={}&amp;to={}\">{}</a></th>", day, day_text(next - 1), day);
    for (const auto& c : outcome_categories()) out += fmt::format("<td class=\"num\">{}</td>", b.by_category[c][i]);
    out += "</tr>\n";
  }
  out += "</tbody></table></div></details>\n</section>\n";

  // Unattributed share.
  int64_t failures = 0, unattributed = 0;
  for (size_t i = 0; i < b.starts.size(); ++i) {
    failures += b.failures[i];
    unattributed += b.unattributed[i];
  }
  out += fmt::format("<section aria-labelledby=\"share-h\"><h2 id=\"share-h\">Unattributed share, per {}</h2>\n", esc(q.bucket));
  out += fmt::format("<p>{} of {} failed attempts ({}) had no cause named; a rising share means evidence or rules are "
                     "missing. <a href=\"/workloads?status=unattributed&amp;{}\">List them</a>.</p>\n",
                     count_text(unattributed), count_text(failures),
                     failures ? fmt::format("{:.1f} %", 100.0 * static_cast<double>(unattributed) / static_cast<double>(failures)) : "—",
                     esc(range));
  out += fmt::format("<div class=\"chart short\" data-chart=\"share\" data-src=\"/api/fleet/unattributed?{}\" role=\"img\" "
                     "aria-label=\"Share of failed attempts left unattributed, per {}\"></div>\n",
                     qs, esc(q.bucket));
  out += "</section>\n";

  // Repeat offenders.
  out += fmt::format("<section aria-labelledby=\"offenders-h\"><h2 id=\"offenders-h\">Repeat offenders</h2>\n"
                     "<p>Nodes named the culprit of at least {} attributed attempt{} with a hardware or infrastructure "
                     "cause (a node's own faults) in the window, most often first: the nodes to drain or inspect. <a href=\"/api/fleet/offenders?{}&amp;min={}\">JSON</a></p>\n",
                     q.min_attempts, q.min_attempts == 1 ? "" : "s", qs, q.min_attempts);
  if (offenders.empty()) {
    out += "<p class=\"muted\" id=\"offenders-empty\">None in this window.</p>\n";
  } else {
    out += "<div class=\"table-wrap\"><table class=\"offenders\" id=\"offenders\"><thead><tr><th scope=\"col\">Node</th>"
           "<th scope=\"col\" class=\"num\">Attempts</th><th scope=\"col\">Causes (domain / sub_domain)</th>"
           "<th scope=\"col\">Last (UTC)</th></tr></thead><tbody>\n";
    for (const auto& o : offenders) {
      std::string causes;
      for (const auto& [c, n] : o.causes) {
        size_t slash = c.find('/');
        std::string domain = c.substr(0, slash), sub = slash == std::string::npos ? "" : c.substr(slash + 1);
        causes += fmt::format("<li><a href=\"/workloads?node={}&amp;role=culprit&amp;sub_domain={}&amp;{}\"><span class=\"domain d-{}\">{}</span> / {}</a> ×{}</li>",
                              url_encode(o.node), url_encode(sub), esc(range), esc(domain), esc(domain), esc(sub), n);
      }
      out += fmt::format("<tr><th scope=\"row\"><a href=\"/workloads?node={}&amp;role=culprit&amp;{}\">{}</a></th><td class=\"num\">{}</td>"
                         "<td><ul class=\"inline\">{}</ul></td><td class=\"time\">{}</td></tr>\n",
                         url_encode(o.node), esc(range), esc(o.node), o.attempts, causes, time_element(o.last_end_ns));
    }
    out += "</tbody></table></div>\n";
  }
  out += "</section>\n";
  return page(frame, out);
}

ojson domains_json(const FleetQuery& q, const std::vector<blueprint::OutcomeCount>& outcomes) {
  Buckets b = bucketize(q, outcomes);
  ojson j;
  j["from"] = q.from;
  j["to"] = q.to;
  j["bucket"] = q.bucket;
  ojson starts = ojson::array();
  for (int64_t t : b.starts) starts.push_back(day_text(t));
  j["buckets"] = starts;
  ojson series = ojson::array();
  for (const auto& c : outcome_categories()) {
    int64_t sum = 0;
    for (int64_t x : b.by_category[c]) sum += x;
    series.push_back({{"category", c}, {"label", category_label(c)}, {"total", sum}, {"counts", b.by_category[c]}});
  }
  j["series"] = series;
  return j;
}

ojson unattributed_json(const FleetQuery& q, const std::vector<blueprint::OutcomeCount>& outcomes) {
  Buckets b = bucketize(q, outcomes);
  ojson j;
  j["from"] = q.from;
  j["to"] = q.to;
  j["bucket"] = q.bucket;
  ojson points = ojson::array();
  for (size_t i = 0; i < b.starts.size(); ++i) {
    ojson p;
    p["bucket"] = day_text(b.starts[i]);
    p["failures"] = b.failures[i];
    p[vocab::status::kUnattributed] = b.unattributed[i];
    p[vocab::status::kAmbiguous] = b.ambiguous[i];
    p["share"] = b.failures[i] ? ojson(static_cast<double>(b.unattributed[i]) / static_cast<double>(b.failures[i])) : ojson(nullptr);
    points.push_back(std::move(p));
  }
  j["points"] = points;
  return j;
}

namespace {
ojson offender_list(const std::vector<blueprint::Offender>& offenders) {
  ojson list = ojson::array();
  for (const auto& o : offenders) {
    ojson causes = ojson::array();
    for (const auto& [c, n] : o.causes) {
      size_t slash = c.find('/');
      causes.push_back({{"domain", c.substr(0, slash)},
                        {"sub_domain", slash == std::string::npos ? "" : c.substr(slash + 1)},
                        {"attempts", n}});
    }
    list.push_back({{"node", o.node}, {"attempts", o.attempts}, {"causes", causes},
                    {"last", o.last_end_ns ? ojson(format_rfc3339(*o.last_end_ns)) : ojson(nullptr)}});
  }
  return list;
}
}  // namespace

ojson offenders_json(const FleetQuery& q, const std::vector<blueprint::Offender>& offenders) {
  ojson j;
  j["from"] = q.from;
  j["to"] = q.to;
  j["min_attempts"] = q.min_attempts;
  j["domains"] = node_fault_domains();
  j["offenders"] = offender_list(offenders);
  return j;
}

ojson offenders_window_json(int64_t from_ns, int64_t until_ns, int64_t min_attempts, const std::vector<std::string>& domains,
                            const std::vector<blueprint::Offender>& offenders) {
  ojson j;
  j["since"] = format_rfc3339(from_ns);
  j["until"] = format_rfc3339(until_ns);
  j["min_attempts"] = min_attempts;
  j["domains"] = domains.empty() ? ojson("all") : ojson(domains);
  j["offenders"] = offender_list(offenders);
  return j;
}

}  // namespace culprit::dashboard
