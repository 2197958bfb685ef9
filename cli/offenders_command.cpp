// `culprit offenders`: the store read-only through the dashboard's reader
// (blueprint/store/store_reader.h), the same window parser and JSON document as
// the dashboard's GET /api/offenders, so both always agree.
#include "cli/offenders_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <iostream>

#include "base/operator_file.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "blueprint/config.h"
#include "blueprint/store/store_reader.h"
#include "cli/args.h"
#include "cli/dashboard_command.h"
#include "dashboard/pages.h"
#include "dashboard/query.h"

namespace culprit::cli {

namespace {

const char* kOffendersHelp = R"(Usage: culprit offenders --store URL [--since 7d] [--min N] [options]

Lists the nodes that were the culprit of at least N attributed attempts that
ended in the window, with their classes (domain/sub_domain) and counts: the
nodes to drain, inspect or replace. Most attempts first, then by node name.
Only a node's own faults count unless asked otherwise: causes of the
hardware and infrastructure domains (a user's OOM or a Python exception
names the node it ran on, not a node to fix).
The store is read only (as the dashboard reads it); SQLite and PostgreSQL.
See docs/recovery.md.

Options:
  --store URL            sqlite:PATH or postgresql://[user@]host[:port]/db
                         (default sqlite:culprit.db in the working directory)
  --password-file FILE   the PostgreSQL password (first line); otherwise libpq
                         reads PGPASSWORD or PGPASSFILE
  --since DUR|TIME       the window's start: a duration back from --until
                         (default 7d) or an RFC 3339 time
  --until TIME           the window's end, RFC 3339 (default: now)
                         Without --since and --until, a store whose newest
                         verdict is over 7 days old is shown whole (at most
                         its last 365 days) instead of an empty week.
  --min N                at least N attempts (default 2)
  --domain D             count causes of domain D (repeatable; default
                         hardware and infrastructure)
  --all                  count causes of every domain
  --format text|json     text (default) or the dashboard's /api/offenders JSON
  -h, --help             this help

Exit status: 0 listed, 2 bad usage, 3 the store cannot be opened or read.
)";

int usage(const std::string& msg) {
  std::cerr << fmt::format("culprit offenders: {}\nTry 'culprit offenders --help'.\n", escape_for_terminal(msg));
  return 2;
}

}  // namespace

int cmd_offenders(int argc, char** argv) {
  ArgSpec spec{{"help", "all"}, {"store", "password-file", "since", "until", "min", "format", "domain"}};
  Args a;
  std::string err;
  if (!parse_args(argc, argv, 2, spec, a, err)) return usage(err);
  if (a.has("help")) {
    std::cout << kOffendersHelp;
    return 0;
  }
  if (!a.positionals.empty()) return usage("unexpected argument '" + a.positionals[0] + "'");
  std::string url = a.last("store").value_or("sqlite:culprit.db");
  if (!check_store_url(url, err)) return usage(err);
  std::string format = a.last("format").value_or("text");
  if (format != "text" && format != "json") return usage("--format must be text or json");
  std::string password;
  if (auto f = a.last("password-file"))
    if (!read_secret(*f, "", password, err)) return usage("--password-file: " + err);
  int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  dashboard::OffendersQuery q;
  // The arguments are checked before the store is opened, so a usage error
  // is one whatever the store; a default window is then fitted to a stale one.
  if (!dashboard::parse_offenders_query(a.last("since").value_or(""), a.last("until").value_or(""),
                                        a.last("min").value_or(""), a.all("domain"), a.has("all"), now, q, err))
    return usage(err);
  std::string warning;
  auto reader = blueprint::StoreReader::open(url, password, err, warning);
  if (!reader) {
    std::cerr << "culprit offenders: " << escape_for_terminal(err) << "\n";
    return 3;
  }
  bool window_from_store = false;  // ends just after the store's newest verdict
  if (!a.last("since") && !a.last("until")) {
    blueprint::StoreFacets f;
    if (!reader->facets(f, err)) {
      std::cerr << "culprit offenders: " << escape_for_terminal(err) << "\n";
      return 3;
    }
    window_from_store = dashboard::offenders_stale_store_window(f.first_end_ns, f.last_end_ns, now, q);
  }
  std::vector<blueprint::Offender> offenders;
  if (!reader->offenders(q.from_ns, q.until_ns, q.min_attempts, -1, q.domains, offenders, err)) {
    std::cerr << "culprit offenders: " << escape_for_terminal(err) << "\n";
    return 3;
  }
  if (format == "json") {
    std::cout << dashboard::offenders_window_json(q.from_ns, q.until_ns, q.min_attempts, q.domains, offenders).dump(2) << "\n";
    return std::cout.good() ? 0 : 3;
  }
  // The window's end is exclusive; one that the store's newest verdict set
  // is said as that verdict's end, not a nanosecond after it.
  const std::string until = window_from_store ? format_rfc3339(q.until_ns - 1) + " (the newest verdict)" : format_rfc3339(q.until_ns);
  std::cout << fmt::format("{} node{} the culprit of at least {} attempt{} ({} causes) from {} to {} ({})\n", offenders.size(),
                           offenders.size() == 1 ? " was" : "s were", q.min_attempts, q.min_attempts == 1 ? "" : "s",
                           q.domains.empty() ? std::string("all") : fmt::format("{}", fmt::join(q.domains, " and ")),
                           format_rfc3339(q.from_ns), until, reader->url());
  if (offenders.empty()) return 0;
  size_t w = 4;
  for (const auto& o : offenders) w = std::max(w, escape_for_terminal(o.node).size());
  std::cout << fmt::format("{:<{}}  attempts  {:<20}  causes\n", "node", w, "last");
  for (const auto& o : offenders) {
    std::string causes;
    for (const auto& [c, n] : o.causes) causes += fmt::format("{}{} {}", causes.empty() ? "" : ", ", c, n);
    // Node names and causes come from stored verdicts, that is from evidence.
    std::cout << fmt::format("{:<{}}  {:<8}  {:<20}  {}\n", escape_for_terminal(o.node), w, o.attempts,
                             o.last_end_ns ? format_rfc3339(*o.last_end_ns) : "-", escape_for_terminal(causes));
  }
  return std::cout.good() ? 0 : 3;
}

}  // namespace culprit::cli
