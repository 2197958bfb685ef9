#include "dashboard/query.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <set>

#include "base/checked_int.h"
#include "base/suggest.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "base/vocabulary.h"
#include "dashboard/html.h"

namespace culprit::dashboard {

namespace {

constexpr int64_t kDayNs = 86400LL * 1000000000LL;
constexpr size_t kMaxValue = 256;  // no filter value the store holds is longer
constexpr const char* kNotDay = "not a date (YYYY-MM-DD) from 1677-09-22 to 2262-04-10";
constexpr const char* kNotDayOrTime =
    "not a date (YYYY-MM-DD) or an RFC 3339 time, from 1677-09-22 to 2262-04-10";
constexpr const char* kOutOfRange = "out of range: times run from 1677-09-22 to 2262-04-10";

bool is_word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

// "nvlink.signal_integrity": dotted lower-case words (the verdict schema's pattern).
bool valid_sub_domain(const std::string& s) {
  if (s.empty() || s.size() > 128) return false;
  bool word = false;
  for (char c : s) {
    if (c == '.') {
      if (!word) return false;
      word = false;
    } else if (is_word_char(c)) {
      word = true;
    } else {
      return false;
    }
  }
  return word;
}

// Host names, Kubernetes node names, IPs: letters, digits, '.', '-', '_', ':'.
bool valid_node(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' ||
          c == ':'))
      return false;
  return true;
}

bool valid_scheduler(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!is_word_char(c) && c != '-') return false;
  return true;
}

// Free text bound as a parameter (job ids, catalog versions): any UTF-8
// without control characters.
bool valid_text(const std::string& s) {
  if (s.size() > kMaxValue || !is_valid_utf8(s)) return false;
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

bool parse_int(const std::string& s, int64_t lo, int64_t hi, int64_t& out) {
  if (s.empty() || s.size() > 10) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi) return false;
  out = v;
  return true;
}

// The one value of a parameter: the last one given, trimmed; "" when absent.
std::string one(const Params& p, const char* key) {
  auto range = p.equal_range(key);
  std::string v;
  for (auto it = range.first; it != range.second; ++it) v = std::string(trim(it->second));
  return v;
}

const std::vector<std::pair<std::string, blueprint::VerdictSort>>& sorts() {
  static const std::vector<std::pair<std::string, blueprint::VerdictSort>> k = {
      {"end", blueprint::VerdictSort::End},
      {"workload", blueprint::VerdictSort::Workload}, {"status", blueprint::VerdictSort::Status},
      {"cause", blueprint::VerdictSort::Cause},     {"nodes", blueprint::VerdictSort::Nodes},
      {"scheduler", blueprint::VerdictSort::Scheduler}, {"state", blueprint::VerdictSort::State}};
  return k;
}

}  // namespace

std::optional<int64_t> parse_day_or_time(const std::string& s, bool& day) {
  day = s.size() == 10;
  if (day) {
    // YYYY-MM-DD, digits where digits belong (parse_rfc3339 checks the calendar).
    for (size_t i = 0; i < 10; ++i)
      if ((i == 4 || i == 7) ? s[i] != '-' : (s[i] < '0' || s[i] > '9')) return std::nullopt;
    return parse_rfc3339(s + "T00:00:00Z");
  }
  return parse_rfc3339(s);
}

std::optional<blueprint::VerdictSort> sort_key(const std::string& name) {
  for (const auto& [n, k] : sorts())
    if (n == name) return k;
  return std::nullopt;
}

bool parse_list_query(const Params& p, ListQuery& q, std::string& error) {
  q = ListQuery{};
  auto bad = [&](const char* key, const std::string& why) {
    error = fmt::format("parameter '{}': {}", key, why);
    return false;
  };
  for (const auto& [k, v] : p)
    if (v.size() > kMaxValue) return bad(k.c_str(), fmt::format("longer than {} bytes", kMaxValue));

  q.from = one(p, "from");
  q.to = one(p, "to");
  bool day = false;
  if (!q.from.empty()) {
    auto t = parse_day_or_time(q.from, day);
    if (!t) return bad("from", kNotDayOrTime);
    q.filter.end_from_ns = *t;
  }
  if (!q.to.empty()) {
    auto t = parse_day_or_time(q.to, day);
    if (!t) return bad("to", kNotDayOrTime);
    auto end = day ? checked_add(*t, kDayNs) : t;  // a day is inclusive
    if (!end) return bad("to", kOutOfRange);
    q.filter.end_before_ns = *end;
  }
  if (q.filter.end_from_ns && q.filter.end_before_ns && *q.filter.end_from_ns >= *q.filter.end_before_ns)
    return bad("to", "the range ends before it starts");

  std::set<std::string> statuses;
  auto range = p.equal_range("status");
  for (auto it = range.first; it != range.second; ++it) {
    std::string v(trim(it->second));
    if (v.empty()) continue;
    if (!vocab::contains(vocab::statuses(), v))
      return bad("status", fmt::format("must be {}", fmt::join(vocab::words(vocab::statuses()), ", ")));
    statuses.insert(v);
  }
  q.filter.statuses.assign(statuses.begin(), statuses.end());

  q.filter.domain = one(p, "domain");
  if (!q.filter.domain.empty() && !vocab::contains(vocab::domains(), q.filter.domain) &&
      q.filter.domain != blueprint::kNoDomain)
    return bad("domain", fmt::format("must be {} or {}", fmt::join(vocab::words(vocab::domains()), ", "), blueprint::kNoDomain));
  q.filter.sub_domain = one(p, "sub_domain");
  if (!q.filter.sub_domain.empty() && !valid_sub_domain(q.filter.sub_domain))
    return bad("sub_domain", "must be dotted lower-case words, such as nvlink.signal_integrity");
  q.filter.node = one(p, "node");
  if (!q.filter.node.empty() && !valid_node(q.filter.node))
    return bad("node", "a node name has only letters, digits and . - _ :");
  q.role = one(p, "role");
  if (q.role.empty()) q.role = "any";
  if (q.role != "any" && q.role != "culprit") return bad("role", "must be any or culprit");
  q.filter.node_is_culprit = q.role == "culprit";
  q.filter.scheduler = one(p, "scheduler");
  if (!q.filter.scheduler.empty() && !valid_scheduler(q.filter.scheduler))
    return bad("scheduler", "a scheduler name has only lower-case letters, digits, _ and -");
  q.filter.catalog_version = one(p, "catalog");
  if (!valid_text(q.filter.catalog_version)) return bad("catalog", "control characters or invalid UTF-8");
  q.filter.workload_prefix = one(p, "q");
  if (!valid_text(q.filter.workload_prefix)) return bad("q", "control characters or invalid UTF-8");

  std::string sort = one(p, "sort");
  if (!sort.empty()) {
    auto k = sort_key(sort);
    if (!k) return bad("sort", "must be end, workload, status, cause, nodes, scheduler or state");
    q.sort = sort;
    q.page.sort = *k;
  }
  std::string order = one(p, "order");
  if (!order.empty()) {
    if (order != "asc" && order != "desc") return bad("order", "must be asc or desc");
    q.order = order;
  }
  q.page.descending = q.order == "desc";
  std::string page = one(p, "page"), per = one(p, "per_page");
  if (!page.empty() && !parse_int(page, 1, 1000000, q.page_no)) return bad("page", "must be a number from 1");
  if (!per.empty() && !parse_int(per, 10, 500, q.per_page)) return bad("per_page", "must be a number from 10 to 500");
  q.page.limit = q.per_page;
  q.page.offset = (q.page_no - 1) * q.per_page;
  return true;
}

std::vector<std::pair<std::string, std::string>> list_params(const ListQuery& q) {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("q", q.filter.workload_prefix);
  out.emplace_back("from", q.from);
  out.emplace_back("to", q.to);
  for (const auto& s : q.filter.statuses) out.emplace_back("status", s);
  out.emplace_back("domain", q.filter.domain);
  out.emplace_back("sub_domain", q.filter.sub_domain);
  out.emplace_back("node", q.filter.node);
  if (q.role != "any") out.emplace_back("role", q.role);
  out.emplace_back("scheduler", q.filter.scheduler);
  out.emplace_back("catalog", q.filter.catalog_version);
  if (q.sort != "end") out.emplace_back("sort", q.sort);
  if (q.order != "desc") out.emplace_back("order", q.order);
  if (q.per_page != 50) out.emplace_back("per_page", std::to_string(q.per_page));
  if (q.page_no != 1) out.emplace_back("page", std::to_string(q.page_no));
  return out;
}

std::string list_url(const ListQuery& q, const std::string& key, const std::string& value) {
  auto params = list_params(q);
  if (!key.empty()) {
    params.erase(std::remove_if(params.begin(), params.end(), [&](const auto& kv) { return kv.first == key; }), params.end());
    // Any change of filter or order starts again at the first page.
    if (key != "page")
      params.erase(std::remove_if(params.begin(), params.end(), [](const auto& kv) { return kv.first == "page"; }),
                   params.end());
    if (!value.empty() && !(key == "page" && value == "1")) params.emplace_back(key, value);
  }
  return "/workloads" + query_string(params);
}

std::string sort_url(const ListQuery& q, const std::string& sort) {
  ListQuery s = q;
  s.page_no = 1;
  // The first click sorts text ascending and times and counts newest/most first.
  bool text = sort == "workload" || sort == "status" || sort == "cause" || sort == "scheduler" || sort == "state";
  if (q.sort == sort) s.order = q.order == "desc" ? "asc" : "desc";
  else s.order = text ? "asc" : "desc";
  s.sort = sort;
  return list_url(s);
}

bool offenders_stale_store_window(std::optional<int64_t> oldest_end_ns, std::optional<int64_t> newest_end_ns, int64_t now_ns,
                                  OffendersQuery& q) {
  constexpr int64_t kDay = 86400LL * 1000000000LL;
  if (!newest_end_ns || *newest_end_ns >= now_ns - 7 * kDay || *newest_end_ns == INT64_MAX) return false;
  q.until_ns = *newest_end_ns + 1;
  auto year_back = checked_sub(q.until_ns, 365 * kDay);
  q.from_ns = std::max(oldest_end_ns.value_or(q.until_ns - 1), year_back.value_or(INT64_MIN));
  if (q.from_ns >= q.until_ns) q.from_ns = q.until_ns - 1;
  return true;
}

std::vector<std::string> node_fault_domains() { return {vocab::domain::kHardware, vocab::domain::kInfrastructure}; }

bool parse_offenders_query(const std::string& since, const std::string& until, const std::string& min,
                           const std::vector<std::string>& domains, bool all, int64_t now_ns, OffendersQuery& out,
                           std::string& error) {
  out = OffendersQuery{};
  if (all && !domains.empty()) {
    error = "give domains or all, not both";
    return false;
  }
  if (all) out.domains.clear();
  if (!domains.empty()) {
    out.domains.clear();
    for (const auto& d : domains) {
      if (!vocab::contains(vocab::domains(), d)) {
        std::string hint = did_you_mean(d, vocab::words(vocab::domains()));
        error = fmt::format("domain '{}' is not one of {}{}", d, fmt::join(vocab::words(vocab::domains()), ", "),
                            hint.empty() ? "" : "; " + hint);
        return false;
      }
      if (std::find(out.domains.begin(), out.domains.end(), d) == out.domains.end()) out.domains.push_back(d);
    }
    std::sort(out.domains.begin(), out.domains.end());
  }
  out.until_ns = now_ns;
  if (!until.empty()) {
    auto t = parse_rfc3339(until);
    if (!t) {
      std::string hint = rfc3339_hint(until);
      error = fmt::format("until '{}' is not an RFC 3339 time ({})", until, hint.empty() ? "2026-05-11T00:00:00Z" : hint);
      return false;
    }
    out.until_ns = *t;
  }
  std::string s = since.empty() ? "7d" : since;
  if (auto d = parse_duration(s); d && *d > 0) {
    auto from = checked_sub(out.until_ns, *d);
    if (!from) {
      error = fmt::format("since '{}' reaches back before 1677-09-22, the earliest time there is", s);
      return false;
    }
    out.from_ns = *from;
  } else if (auto t = parse_rfc3339(s)) {
    out.from_ns = *t;
  } else {
    std::string hint = rfc3339_hint(s);
    error = fmt::format("since '{}' is neither a duration (7d, 12h) nor an RFC 3339 time{}", s, hint.empty() ? "" : ": " + hint);
    return false;
  }
  if (out.from_ns >= out.until_ns) {
    error = "since must be before until";
    return false;
  }
  if (!min.empty()) {
    char* end = nullptr;
    long n = std::strtol(min.c_str(), &end, 10);
    if (*end || n < 1 || n > 1000) {
      error = fmt::format("min '{}' must be a whole number of attempts from 1 to 1000", min);
      return false;
    }
    out.min_attempts = n;
  }
  return true;
}

bool parse_fleet_query(const Params& p, std::optional<int64_t> oldest_end_ns, std::optional<int64_t> newest_end_ns,
                       int64_t now_ns, FleetQuery& f, std::string& error) {
  f = FleetQuery{};
  auto bad = [&](const char* key, const std::string& why) {
    error = fmt::format("parameter '{}': {}", key, why);
    return false;
  };
  std::string from = one(p, "from"), to = one(p, "to"), bucket = one(p, "bucket"), min = one(p, "min");
  bool day = false;
  std::optional<int64_t> a, b;
  if (!from.empty()) {
    a = parse_day_or_time(from, day);
    if (!a || !day) return bad("from", kNotDay);
  }
  if (!to.empty()) {
    b = parse_day_or_time(to, day);
    if (!b || !day) return bad("to", kNotDay);
    b = checked_add(*b, kDayNs);  // `to` is inclusive
    if (!b) return bad("to", kOutOfRange);
  }
  // The end of the anchor's UTC day, or the last midnight int64 holds.
  int64_t anchor = std::max<int64_t>(newest_end_ns.value_or(now_ns), 0);
  int64_t anchor_day_end = std::min(anchor / kDayNs + 1, INT64_MAX / kDayNs) * kDayNs;
  f.defaulted = !a && !b;
  if (!b) b = a ? std::min(saturating_add(*a, 30 * kDayNs), anchor_day_end) : anchor_day_end;
  if (!a) {
    // By default everything the store holds, when that is a year or less:
    // a young store (or the examples) shows all its verdicts at once.
    a = checked_sub(*b, 30 * kDayNs);
    if (!a) return bad("to", kOutOfRange);
    if (f.defaulted && oldest_end_ns && *oldest_end_ns < *a)
      a = std::max(saturating_add(*b, -365 * kDayNs), (*oldest_end_ns / kDayNs) * kDayNs);
  }
  if (*a >= *b) return bad("to", "the range ends before it starts");
  // Both ends are in range and ordered, so the span cannot wrap; it is still
  // checked, as the one place a wrap would have let any window through.
  auto span = checked_sub(*b, *a);
  if (!span || *span > 3660 * kDayNs) return bad("from", "the window is longer than ten years");
  auto last_day = checked_sub(*b, kDayNs);
  if (!last_day) return bad("to", kOutOfRange);
  f.from_ns = *a;
  f.before_ns = *b;
  f.from = format_rfc3339(*a).substr(0, 10);
  f.to = format_rfc3339(*last_day).substr(0, 10);
  if (!bucket.empty()) {
    if (bucket != "day" && bucket != "week") return bad("bucket", "must be day or week");
    f.bucket = bucket;
  } else if (*span > 120 * kDayNs) {
    f.bucket = "week";  // a day per bar stops being readable past a few months
  }
  f.bucket_ns = f.bucket == "week" ? 7 * kDayNs : kDayNs;
  if (*span / f.bucket_ns > 800) return bad("bucket", "too many bars for this window: use bucket=week");
  if (!min.empty() && !parse_int(min, 1, 1000, f.min_attempts)) return bad("min", "must be a number from 1 to 1000");
  return true;
}

}  // namespace culprit::dashboard
