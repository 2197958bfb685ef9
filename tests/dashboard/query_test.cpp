// The dashboard's URL state (dashboard/query.h) and the verdict's arrangement
// for the workload page (dashboard/verdict_view.h).
#include "dashboard/query.h"

#include <doctest/doctest.h>

#include "base/timestamp.h"
#include "dashboard/html.h"
#include "dashboard/pages.h"
#include "dashboard/verdict_view.h"

using namespace culprit::dashboard;

namespace {
constexpr int64_t kDay = 86400LL * 1000000000LL;

ListQuery list(const Params& p) {
  ListQuery q;
  std::string err;
  REQUIRE_MESSAGE(parse_list_query(p, q, err), err);
  return q;
}
std::string list_error(const Params& p) {
  ListQuery q;
  std::string err;
  CHECK_FALSE(parse_list_query(p, q, err));
  return err;
}
}  // namespace

TEST_CASE("the list's parameters become a store filter") {
  ListQuery q = list({{"q", " 48213 "}, {"from", "2026-03-14"}, {"to", "2026-03-14"}, {"status", "attributed"},
                      {"status", "ambiguous"}, {"status", "attributed"}, {"domain", "hardware"},
                      {"sub_domain", "nvlink.signal_integrity"}, {"node", "node-02"}, {"role", "culprit"},
                      {"scheduler", "slurm"}, {"catalog", "0.1.0"}, {"sort", "cause"}, {"order", "asc"}, {"page", "3"},
                      {"per_page", "20"}});
  CHECK(q.filter.workload_prefix == "48213");
  CHECK(*q.filter.end_from_ns == *culprit::parse_rfc3339("2026-03-14T00:00:00Z"));
  CHECK(*q.filter.end_before_ns == *q.filter.end_from_ns + kDay);  // a day is inclusive
  CHECK(q.filter.statuses == std::vector<std::string>{"ambiguous", "attributed"});  // sorted, once each
  CHECK(q.filter.node_is_culprit);
  CHECK(q.page.sort == culprit::blueprint::VerdictSort::Cause);
  CHECK_FALSE(q.page.descending);
  CHECK(q.page.offset == 40);
  CHECK(q.page.limit == 20);
  // An RFC 3339 `to` is exclusive.
  ListQuery t = list({{"to", "2026-03-14T02:00:00Z"}});
  CHECK(*t.filter.end_before_ns == *culprit::parse_rfc3339("2026-03-14T02:00:00Z"));
}

TEST_CASE("empty values are unset, as forms send them; unknown parameters are ignored") {
  ListQuery q = list({{"q", ""}, {"from", ""}, {"status", ""}, {"domain", ""}, {"role", ""}, {"sort", ""}, {"x", "y"}});
  CHECK(q.filter.workload_prefix.empty());
  CHECK_FALSE(q.filter.end_from_ns);
  CHECK(q.filter.statuses.empty());
  CHECK(q.role == "any");
  CHECK(q.page.sort == culprit::blueprint::VerdictSort::End);
  CHECK(q.page.descending);
  CHECK(list_url(q) == "/workloads");
}

TEST_CASE("a value the store cannot hold is an error that names the parameter") {
  CHECK(list_error({{"status", "broken"}}).find("'status'") != std::string::npos);
  CHECK(list_error({{"domain", "' OR 1=1"}}).find("'domain'") != std::string::npos);
  CHECK(list_error({{"sub_domain", "Gpu.Memory"}}).find("'sub_domain'") != std::string::npos);
  CHECK(list_error({{"sub_domain", "gpu..memory"}}).find("'sub_domain'") != std::string::npos);
  CHECK(list_error({{"node", "node-01; DROP"}}).find("'node'") != std::string::npos);
  CHECK(list_error({{"role", "admin"}}).find("'role'") != std::string::npos);
  CHECK(list_error({{"scheduler", "Slurm"}}).find("'scheduler'") != std::string::npos);
  CHECK(list_error({{"q", std::string("a\0b", 3)}}).find("'q'") != std::string::npos);
  CHECK(list_error({{"catalog", "\xff"}}).find("'catalog'") != std::string::npos);
  CHECK(list_error({{"q", std::string(300, 'x')}}).find("longer than") != std::string::npos);
  CHECK(list_error({{"from", "2026-02-30"}}).find("'from'") != std::string::npos);
  CHECK(list_error({{"from", "yesterday"}}).find("'from'") != std::string::npos);
  CHECK(list_error({{"from", "2026-03-15"}, {"to", "2026-03-14"}}).find("ends before") != std::string::npos);
  CHECK(list_error({{"sort", "verdict_json"}}).find("'sort'") != std::string::npos);
  CHECK(list_error({{"order", "up"}}).find("'order'") != std::string::npos);
  CHECK(list_error({{"page", "0"}}).find("'page'") != std::string::npos);
  CHECK(list_error({{"page", "-1"}}).find("'page'") != std::string::npos);
  CHECK(list_error({{"per_page", "100000"}}).find("'per_page'") != std::string::npos);
  // Quotes in a free-text value are merely text: bound, never spliced.
  CHECK(list({{"q", "x' OR '1'='1"}}).filter.workload_prefix == "x' OR '1'='1");
}

TEST_CASE("links keep the other filters; a change of filter or order goes back to page 1") {
  ListQuery q = list({{"q", "48 213"}, {"status", "unattributed"}, {"page", "4"}, {"per_page", "20"}});
  CHECK(list_url(q) == "/workloads?q=48%20213&status=unattributed&per_page=20&page=4");
  CHECK(list_url(q, "page", "5") == "/workloads?q=48%20213&status=unattributed&per_page=20&page=5");
  CHECK(list_url(q, "page", "1") == "/workloads?q=48%20213&status=unattributed&per_page=20");
  CHECK(list_url(q, "node", "node-02") == "/workloads?q=48%20213&status=unattributed&per_page=20&node=node-02");
  // Text sorts ascending first, times and counts descending; the same key again flips.
  CHECK(sort_url(q, "workload") == "/workloads?q=48%20213&status=unattributed&sort=workload&order=asc&per_page=20");
  CHECK(sort_url(q, "nodes") == "/workloads?q=48%20213&status=unattributed&sort=nodes&per_page=20");
  CHECK(sort_url(q, "end") == "/workloads?q=48%20213&status=unattributed&order=asc&per_page=20");
}

TEST_CASE("the fleet window: defaults from the store's span, validated bounds") {
  auto at = [](const char* t) { return *culprit::parse_rfc3339(t); };
  FleetQuery f;
  std::string err;
  // A store of six months: all of it, in weeks.
  REQUIRE(parse_fleet_query({}, at("2026-03-14T02:03:34Z"), at("2026-09-30T12:15:50Z"), 0, f, err));
  CHECK(f.from == "2026-03-14");
  CHECK(f.to == "2026-09-30");
  CHECK(f.bucket == "week");
  CHECK(f.defaulted);
  // A store of two days: the 30 days up to its newest verdict, in days.
  REQUIRE(parse_fleet_query({}, at("2026-09-29T00:00:00Z"), at("2026-09-30T12:15:50Z"), 0, f, err));
  CHECK(f.from == "2026-09-01");
  CHECK(f.to == "2026-09-30");
  CHECK(f.bucket == "day");
  // Three years: the last one.
  REQUIRE(parse_fleet_query({}, at("2023-01-01T00:00:00Z"), at("2026-09-30T12:15:50Z"), 0, f, err));
  CHECK(f.to == "2026-09-30");
  CHECK(f.before_ns - f.from_ns == 365 * kDay);
  // An empty store: the 30 days up to now.
  REQUIRE(parse_fleet_query({}, std::nullopt, std::nullopt, at("2026-12-01T13:00:00Z"), f, err));
  CHECK(f.to == "2026-12-01");
  CHECK(f.before_ns - f.from_ns == 30 * kDay);
  // Given.
  REQUIRE(parse_fleet_query({{"from", "2026-05-01"}, {"to", "2026-05-07"}, {"min", "3"}}, std::nullopt, std::nullopt, 0, f, err));
  CHECK(f.before_ns - f.from_ns == 7 * kDay);
  CHECK(f.min_attempts == 3);
  CHECK_FALSE(f.defaulted);
  CHECK_FALSE(parse_fleet_query({{"bucket", "hour"}}, std::nullopt, std::nullopt, 0, f, err));
  CHECK(err.find("'bucket'") != std::string::npos);
  CHECK_FALSE(parse_fleet_query({{"from", "2026-05-01T00:00:00Z"}}, std::nullopt, std::nullopt, 0, f, err));
  CHECK_FALSE(parse_fleet_query({{"min", "0"}}, std::nullopt, std::nullopt, 0, f, err));
  CHECK_FALSE(parse_fleet_query({{"from", "2000-01-01"}, {"to", "2026-01-01"}}, std::nullopt, std::nullopt, 0, f, err));
}

TEST_CASE("time parameters whose arithmetic would leave int64 are refused, never wrapped") {
  // int64 nanoseconds hold 1677-09-21 .. 2262-04-11 (base/timestamp.h).
  auto at = [](const char* t) { return *culprit::parse_rfc3339(t); };
  FleetQuery f;
  std::string err;
  // 500 years: the difference wrapped negative and passed the ten-year limit.
  CHECK_FALSE(parse_fleet_query({{"from", "1700-01-01"}, {"to", "2200-01-01"}}, std::nullopt, std::nullopt, 0, f, err));
  CHECK(err.find("'from'") != std::string::npos);
  CHECK(err.find("ten years") != std::string::npos);
  CHECK_FALSE(parse_fleet_query({{"from", "1677-09-22"}, {"to", "2262-04-10"}}, std::nullopt, std::nullopt, 0, f, err));
  CHECK(err.find("ten years") != std::string::npos);
  // The last day int64 holds cannot be an inclusive `to` (its end is past the range).
  CHECK_FALSE(parse_fleet_query({{"from", "2262-04-01"}, {"to", "2262-04-11"}}, std::nullopt, std::nullopt, 0, f, err));
  CHECK(err.find("'to'") != std::string::npos);
  CHECK(err.find("out of range") != std::string::npos);
  // Days before the range are not days.
  CHECK_FALSE(parse_fleet_query({{"from", "1677-09-21"}}, std::nullopt, std::nullopt, 0, f, err));
  CHECK(err.find("1677-09-22") != std::string::npos);
  // A `from` near the end: the default `to` (30 days on) is cut at the store's newest day, not wrapped.
  REQUIRE_MESSAGE(parse_fleet_query({{"from", "2262-04-05"}}, std::nullopt, at("2262-04-10T00:00:00Z"), 0, f, err), err);
  CHECK(f.from == "2262-04-05");
  CHECK(f.to == "2262-04-10");
  // A store whose newest verdict ends at the last instant: the window ends at the last midnight.
  REQUIRE_MESSAGE(parse_fleet_query({}, std::nullopt, INT64_MAX, 0, f, err), err);
  CHECK(f.to == "2262-04-10");
  CHECK(f.before_ns - f.from_ns == 30 * kDay);
  // Weekly bars up to the end of the range: as many as the window holds, no wrapped step.
  REQUIRE_MESSAGE(parse_fleet_query({{"from", "2262-01-01"}, {"to", "2262-04-10"}, {"bucket", "week"}}, std::nullopt,
                                    std::nullopt, 0, f, err),
                  err);
  ojson d = domains_json(f, {});
  CHECK(d["buckets"].size() == 15);  // 100 days
  CHECK(d["buckets"].back() == "2262-04-09");

  // The list: a `to` day whose end is past the range.
  CHECK(list_error({{"to", "2262-04-11"}}).find("out of range") != std::string::npos);
  CHECK(list({{"to", "2262-04-10"}}).filter.end_before_ns == at("2262-04-11T00:00:00Z"));

  // The offenders' window: a duration back from `until` that reaches past the start of the range.
  OffendersQuery o;
  CHECK_FALSE(parse_offenders_query("106751d", "1700-01-01T00:00:00Z", "", {}, false, 0, o, err));
  CHECK(err.find("1677-09-22") != std::string::npos);
  CHECK_FALSE(parse_offenders_query("9223372036854775807ns", "", "", {}, false, -2, o, err));
  CHECK(err.find("1677-09-22") != std::string::npos);
  REQUIRE_MESSAGE(parse_offenders_query("106000d", "", "", {}, false, at("2026-05-11T00:00:00Z"), o, err), err);
  CHECK(o.until_ns - o.from_ns == 106000 * kDay);
  // The domains counted: a node's own faults unless asked; every domain with all.
  CHECK(o.domains == std::vector<std::string>{"hardware", "infrastructure"});
  REQUIRE(parse_offenders_query("", "", "", {"software", "hardware", "software"}, false, at("2026-05-11T00:00:00Z"), o, err));
  CHECK(o.domains == std::vector<std::string>{"hardware", "software"});
  REQUIRE(parse_offenders_query("", "", "", {}, true, at("2026-05-11T00:00:00Z"), o, err));
  CHECK(o.domains.empty());
  CHECK_FALSE(parse_offenders_query("", "", "", {"hardwar"}, false, at("2026-05-11T00:00:00Z"), o, err));
  CHECK(err.find("did you mean 'hardware'?") != std::string::npos);
  CHECK_FALSE(parse_offenders_query("", "", "", {"user"}, true, at("2026-05-11T00:00:00Z"), o, err));
  // A stale store (newest verdict over 7 days old) is shown whole, at most
  // its last year; a live one keeps the 7 days back from now.
  REQUIRE(parse_offenders_query("", "", "", {}, false, at("2026-12-01T00:00:00Z"), o, err));
  CHECK(offenders_stale_store_window(at("2026-03-14T00:00:00Z"), at("2026-05-11T09:00:00Z"), at("2026-12-01T00:00:00Z"), o));
  CHECK(o.from_ns == at("2026-03-14T00:00:00Z"));
  CHECK(o.until_ns == at("2026-05-11T09:00:00Z") + 1);
  CHECK(offenders_stale_store_window(at("2020-01-01T00:00:00Z"), at("2026-05-11T09:00:00Z"), at("2026-12-01T00:00:00Z"), o));
  CHECK(o.from_ns == at("2026-05-11T09:00:00Z") + 1 - 365 * kDay);
  REQUIRE(parse_offenders_query("", "", "", {}, false, at("2026-12-01T00:00:00Z"), o, err));
  CHECK_FALSE(offenders_stale_store_window(at("2026-03-14T00:00:00Z"), at("2026-11-30T00:00:00Z"), at("2026-12-01T00:00:00Z"), o));
  CHECK(o.until_ns == at("2026-12-01T00:00:00Z"));
  CHECK_FALSE(offenders_stale_store_window(std::nullopt, std::nullopt, at("2026-12-01T00:00:00Z"), o));
}

TEST_CASE("escaping") {
  CHECK(esc("<a href=\"x\">'&'</a>") == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  CHECK(url_encode("a b&c=d/é") == "a%20b%26c%3Dd%2F%C3%A9");
  CHECK(query_string({{"a", ""}, {"b", "1"}, {"c", "x y"}}) == "?b=1&c=x%20y");
  CHECK(count_text(1234567) == "1,234,567");
  CHECK(span_text(3780LL * 1000000000LL) == "1 h 03 min");
}

namespace {
// A verdict shaped as culprit.verdict/v1: a root cause on node-02, a
// symptom it demotes on node-01, one demoted by that one, a scrubbed one,
// a job-level one, and two that name each other as their cause.
const char* kVerdict = R"({
  "schema": "culprit.verdict/v1", "status": "attributed", "domain": "hardware", "sub_domain": "nvlink",
  "root_cause": {"symptom": "root", "summary": "fatal NVLink fault"},
  "workload": {"nodes": ["node-01", "node-02"], "start": "2026-03-14T01:00:00Z", "end": "2026-03-14T02:00:00Z"},
  "symptoms": [
    {"id": "a", "kind": "nccl.error", "node": "node-01", "state": "demoted", "first": "2026-03-14T01:59:00Z",
     "demoted_by": {"rule": "R1", "reason": "downstream", "cause": "root"}},
    {"id": "b", "kind": "torch.exit", "node": "node-01", "state": "demoted", "demoted_by": {"rule": "R2", "reason": "after a", "cause": "a"}},
    {"id": "loop1", "kind": "x", "node": "node-02", "state": "demoted", "demoted_by": {"rule": "R3", "reason": "r", "cause": "loop2"}},
    {"id": "loop2", "kind": "y", "node": "node-02", "state": "demoted", "demoted_by": {"rule": "R3", "reason": "r", "cause": "loop1"}},
    {"id": "noise", "kind": "z", "node": "ctl", "state": "scrubbed", "scrubbed_by": {"rule": "S", "reason": "noise"}},
    {"id": "job", "kind": "slurm.exit", "state": "active"},
    {"id": "root", "kind": "nvlink.fatal", "node": "node-02", "state": "active", "first": "2026-03-14T01:58:00Z",
     "classification": {"domain": "hardware", "sub_domain": "nvlink"}}
  ],
  "coverage": {"nodes_without_logs": ["node-03"],
               "sources": {"kernel": {"nodes_expected": 2, "nodes_with_data": ["node-02"], "nodes_missing": ["node-01"], "files": 1},
                           "imex": {"nodes_expected": 2, "nodes_with_data": [], "files": 0}}}
})";
}  // namespace

TEST_CASE("the cascade is a tree under the causes that demotions name") {
  VerdictView v;
  std::string err;
  REQUIRE_MESSAGE(make_verdict_view(kVerdict, v, err), err);
  auto index = [&](const char* id) {
    for (size_t i = 0; i < v.symptoms.size(); ++i)
      if (v.symptoms[i].id == id) return i;
    FAIL("no symptom " << id);
    return size_t{0};
  };
  REQUIRE(v.symptoms.size() == 7);
  // Root cause first, then the other active ones, then the demoted and scrubbed roots.
  REQUIRE(v.roots.size() >= 3);
  CHECK(v.roots[0] == index("root"));
  CHECK(v.roots[1] == index("job"));
  CHECK(v.symptoms[index("root")].children == std::vector<size_t>{index("a")});
  CHECK(v.symptoms[index("a")].children == std::vector<size_t>{index("b")});
  CHECK(v.symptoms[index("a")].rule == "R1");
  // The loop is cut: exactly one of the two is a root, holding the other.
  bool l1 = std::find(v.roots.begin(), v.roots.end(), index("loop1")) != v.roots.end();
  bool l2 = std::find(v.roots.begin(), v.roots.end(), index("loop2")) != v.roots.end();
  CHECK(l1 != l2);
  CHECK(v.roots.back() == index("noise"));
  // The timeline's focus is the cause and its cascade.
  CHECK(v.symptoms[index("root")].focus);
  CHECK(v.symptoms[index("b")].focus);
  CHECK_FALSE(v.symptoms[index("noise")].focus);
  CHECK(v.timeline_nodes == std::vector<std::string>{"node-01", "node-02", "ctl", "job"});
  // Anchors are unique HTML ids.
  CHECK(v.symptoms[index("root")].anchor != v.symptoms[index("a")].anchor);
  // Coverage gaps in words.
  REQUIRE(v.coverage_gaps.size() == 3);
  CHECK(v.coverage_gaps[0].find("No logs at all from node-03") == 0);
  CHECK(v.coverage_gaps[1].find("No kernel log from node-01 (read on 1 of 2 nodes)") == 0);
  CHECK(v.coverage_gaps[2].find("Not collected for any node: imex logs") == 0);
  ojson tl = timeline_json(v);
  CHECK(tl["rows"].size() == 4);
  CHECK(tl["symptoms"].size() == 7);
}

TEST_CASE("a stored text that is not a verdict is refused") {
  VerdictView v;
  std::string err;
  CHECK_FALSE(make_verdict_view("{", v, err));
  CHECK_FALSE(make_verdict_view(R"({"schema": "other"})", v, err));
  CHECK(err.find("not a culprit.verdict") != std::string::npos);
}
