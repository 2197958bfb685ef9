// The dashboard's pages (HTML) and JSON bodies, rendered from what the
// store reader returned. No page needs JavaScript to be read: the list and
// the workload page are complete HTML (forms, links, <details>); the charts
// are drawn by /assets/dashboard.js from the JSON endpoints, and each has a
// table of the same numbers for readers without it (docs/dashboard.md).
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "blueprint/store/store_reader.h"
#include "dashboard/html.h"
#include "dashboard/query.h"
#include "dashboard/verdict_view.h"

namespace culprit::dashboard {

std::string list_page(const PageFrame& frame, const ListQuery& query, const blueprint::StoreFacets& facets,
                      const std::vector<blueprint::VerdictSummary>& rows, int64_t total);

std::string workload_page(const PageFrame& frame, const blueprint::VerdictDetail& detail, const VerdictView& view,
                          const std::vector<blueprint::RelatedVerdict>& related);

std::string fleet_page(const PageFrame& frame, const FleetQuery& query, const blueprint::StoreFacets& facets,
                       const std::vector<blueprint::OutcomeCount>& outcomes,
                       const std::vector<blueprint::Offender>& offenders);

// The outcome category a verdict is counted under in the fleet view: its
// domain when attributed, else its status ("ambiguous", "unattributed",
// "no_failure").
std::string outcome_category(const std::string& status, const std::string& domain);
// The categories in stacking order.
const std::vector<std::string>& outcome_categories();

// JSON bodies of /api/...
ojson list_json(const ListQuery& query, const std::vector<blueprint::VerdictSummary>& rows, int64_t total);
ojson domains_json(const FleetQuery& query, const std::vector<blueprint::OutcomeCount>& outcomes);
ojson unattributed_json(const FleetQuery& query, const std::vector<blueprint::OutcomeCount>& outcomes);
ojson offenders_json(const FleetQuery& query, const std::vector<blueprint::Offender>& offenders);
// The repeat offenders of [from_ns, until_ns) at `min_attempts`: the body of
// GET /api/offenders and of `culprit offenders --format json`.
ojson offenders_window_json(int64_t from_ns, int64_t until_ns, int64_t min_attempts, const std::vector<std::string>& domains,
                            const std::vector<blueprint::Offender>& offenders);

}  // namespace culprit::dashboard
