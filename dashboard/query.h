// The dashboard's URL state: the query parameters of the workload list and
// the fleet view, validated into store filters, and written back into links
// (sorting, paging, "narrow to this node") that keep every other filter.
//
// Validation is strict and happens before any SQL: a parameter whose value
// is not one the store can hold (a status outside the verdict's enum, a
// sub_domain that is not dotted lower-case words, a date that is not a
// date) is a 400 with a message naming the parameter. Values that pass are
// bound, never spliced, so anything else (a job id with quotes in it)
// merely matches nothing. Empty values mean "not set", as forms send them;
// unknown parameters are ignored.
//
// Instants and spans are int64 nanoseconds (base/timestamp.h: 1677-09-21
// to 2262-04-11), and every sum or difference of them here is checked: a
// parameter whose arithmetic would leave that range is a 400 naming it,
// never a wrapped window (a wrapped difference once let a 400-year fleet
// window pass the ten-year limit and answer 28 MB).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/checked_int.h"
#include "blueprint/store/store_reader.h"

namespace culprit::dashboard {

using Params = std::multimap<std::string, std::string>;  // every key=value of the query, decoded, repeats kept

struct ListQuery {
  blueprint::VerdictFilter filter;
  blueprint::VerdictPage page;
  // As given, to fill the form and build links.
  std::string from, to, sort = "end", order = "desc", role = "any";
  int64_t page_no = 1, per_page = 50;
};

// Parses the list's parameters: from, to (YYYY-MM-DD, UTC days, `to`
// inclusive; or RFC 3339 instants, `to` exclusive), status (repeatable),
// domain, sub_domain, node, role (any|culprit), scheduler, catalog, q (the
// job id or its beginning), sort, order (asc|desc), page, per_page.
bool parse_list_query(const Params& params, ListQuery& out, std::string& error);

// The list's parameters as URL pairs (defaults left out), for links.
std::vector<std::pair<std::string, std::string>> list_params(const ListQuery& q);
// "/workloads?..." for `q` with one parameter replaced (or added).
std::string list_url(const ListQuery& q, const std::string& key = "", const std::string& value = "");
// The same filters sorted by `sort`: the order flips when it already is.
std::string sort_url(const ListQuery& q, const std::string& sort);

struct FleetQuery {
  int64_t from_ns = 0, before_ns = 0;   // whole UTC days
  std::string from, to;                 // as shown (YYYY-MM-DD, `to` inclusive)
  int64_t bucket_ns = 86400LL * 1000000000LL;
  std::string bucket = "day";           // day | week
  int64_t min_attempts = 2;             // repeat-offender threshold
  bool defaulted = false;               // the window was chosen by the dashboard
};

// Parses from, to (YYYY-MM-DD), bucket (day|week) and min (1..1000).
// Without from/to the window ends with the day of the newest verdict (or
// today when the store is empty), so an old store still shows its data, and
// starts with the day of the oldest, at least 30 and at most 365 days
// before. Past 120 days the bars are per week unless `bucket` says.
// The repeat-offenders window of `culprit offenders` and GET /api/offenders:
// `since` a duration back from `until` ("7d", the default) or an RFC 3339
// time; `until` an RFC 3339 time (default: now); `min` attempts, 1..1000
// (default 2). Attempts that ended in [from_ns, until_ns) count.
// The domains a repeat offender is counted in unless asked otherwise: a
// node's own faults (hardware, infrastructure). A user's OOM, a Python
// exception or a framework crash names the node it ran on, not a node to
// drain, and on a busy fleet would put the busiest nodes on top.
std::vector<std::string> node_fault_domains();

struct OffendersQuery {
  int64_t from_ns = 0, until_ns = 0;
  int64_t min_attempts = 2;
  std::vector<std::string> domains = node_fault_domains();  // empty: every domain
};
// The offenders' window when neither `since` nor `until` is given, for a
// store whose newest verdict ended more than 7 days ago (a store filled from
// old bundles, a blueprint stopped last month): the store's own range, from
// its oldest verdict (at most 365 days back) to just after its newest, so
// the default shows what the store holds instead of an empty week, as the
// fleet page's default window does. False for a live store: the default
// 7 days back from now applies.
bool offenders_stale_store_window(std::optional<int64_t> oldest_end_ns, std::optional<int64_t> newest_end_ns, int64_t now_ns,
                                  OffendersQuery& q);

// `domains`: the domain words asked for (none: node_fault_domains()); `all`:
// every domain (not with `domains`).
bool parse_offenders_query(const std::string& since, const std::string& until, const std::string& min,
                           const std::vector<std::string>& domains, bool all, int64_t now_ns, OffendersQuery& out,
                           std::string& error);

bool parse_fleet_query(const Params& params, std::optional<int64_t> oldest_end_ns, std::optional<int64_t> newest_end_ns,
                       int64_t now_ns, FleetQuery& out, std::string& error);

// Names and values of the list's sort keys, for headers and the API.
std::optional<blueprint::VerdictSort> sort_key(const std::string& name);

// A YYYY-MM-DD day or an RFC 3339 instant. `day` tells which it was.
std::optional<int64_t> parse_day_or_time(const std::string& s, bool& day);

// checked_add, checked_sub, saturating_add: base/checked_int.h.
using culprit::checked_add;
using culprit::checked_sub;
using culprit::saturating_add;

}  // namespace culprit::dashboard
