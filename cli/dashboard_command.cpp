// `culprit dashboard`: its options and help. The dashboard itself is
// dashboard/ (dashboard/server.h); this file only turns the command line
// into a DashboardConfig.
#include "cli/dashboard_command.h"

#include <fmt/format.h>

#include <cstdlib>
#include <iostream>

#include "base/operator_file.h"
#include "base/timestamp.h"
#include "blueprint/config.h"
#include "cli/args.h"
#include "dashboard/host_allow.h"
#include "dashboard/server.h"

namespace culprit::cli {

namespace {

const char* kDashboardHelp = R"(Usage: culprit dashboard [--store URL] [--listen HOST:PORT] [options]

Serves a read-only web view of the verdicts `culprit run` stored: the
workload list (filters, sorting, pages, job-id search), one page per
workload (root cause, cascade, evidence, timeline, coverage gaps) and the
fleet view (verdicts by domain per day, repeat offenders, the unattributed
share). The store is opened read-only (SQLite mode=ro; a PostgreSQL session
of read-only transactions); nothing the dashboard serves can write, and any
method but GET or HEAD is answered 405. See docs/dashboard.md.

Options:
  --store URL            sqlite:PATH or postgresql://[user@]host[:port]/db, the
                         same URL as `culprit run --store` (default
                         sqlite:culprit.db in the working directory)
  --password-file FILE   the PostgreSQL password (first line); otherwise libpq
                         reads PGPASSWORD or PGPASSFILE. Never in the URL.
  --listen HOST:PORT     address to bind (default 127.0.0.1:8081; port 0 = any).
                         Not loopback: a warning (there is no login)
  --allow-host NAME      also answer requests whose Host is NAME (a reverse
                         proxy's or the machine's name); repeatable. Others
                         than loopback, the --listen host and these get 421
  --threads N            HTTP workers, and store connections at most (default 8)
  --read-timeout DUR     a request must arrive within this of its first byte
                         (default 5s)
  --write-timeout DUR    an answer must be taken within this (default 5s)
  --no-access-log        do not write one JSON line per request to stderr
  --port-file FILE       write the bound port to FILE once serving (for scripts)
  -h, --help             this help

Exit status: 0 stopped by SIGTERM/SIGINT (requests in flight get up to 10 s
to finish), 2 bad usage or an address that cannot be bound, 3 the store
cannot be opened (missing, not a regular file, not a Culprit store, or
written by a newer culprit).
)";

int usage(const std::string& msg) {
  std::cerr << fmt::format("culprit dashboard: {}\nTry 'culprit dashboard --help'.\n", msg);
  return 2;
}

}  // namespace

bool check_store_url(const std::string& s, std::string& error) {
  size_t scheme = s.find("://");
  if (scheme != std::string::npos) {
    std::string rest = s.substr(scheme + 3);
    size_t at = rest.find('@');
    if (at != std::string::npos && rest.substr(0, at).find(':') != std::string::npos) {
      error = "--store carries a password (visible to every user in the process list): use --password-file, "
              "PGPASSWORD or PGPASSFILE";
      return false;
    }
  } else if (s.rfind("sqlite:", 0) != 0) {
    error = "--store must be sqlite:PATH or postgresql://[user@]host[:port]/database";
    return false;
  }
  return true;
}

int cmd_dashboard(int argc, char** argv) {
  ArgSpec spec{{"no-access-log", "help"},
               {"store", "password-file", "listen", "allow-host", "threads", "read-timeout", "write-timeout", "port-file"}};
  Args a;
  std::string err;
  if (!parse_args(argc, argv, 2, spec, a, err)) return usage(err);
  if (a.has("help")) {
    std::cout << kDashboardHelp;
    return 0;
  }
  if (!a.positionals.empty()) return usage("unexpected argument '" + a.positionals[0] + "'");
  dashboard::DashboardConfig cfg;
  cfg.store_url = a.last("store").value_or("sqlite:culprit.db");
  if (!check_store_url(cfg.store_url, err)) return usage(err);
  if (auto f = a.last("password-file"))
    if (!read_secret(*f, "", cfg.password, err)) return usage("--password-file: " + err);
  if (auto l = a.last("listen"))
    if (!parse_listen(*l, cfg.host, cfg.port, err)) return usage(err);
  for (const auto& name : a.all("allow-host")) {
    if (dashboard::normalize_allowed_host(name, err).empty()) return usage("--allow-host: " + err);
    cfg.allowed_hosts.push_back(name);
  }
  if (auto t = a.last("threads")) {
    char* end = nullptr;
    long n = std::strtol(t->c_str(), &end, 10);
    if (t->empty() || *end || n < 1 || n > 256) return usage("--threads must be an integer from 1 to 256");
    cfg.threads = static_cast<unsigned>(n);
  }
  for (auto [name, field] : {std::pair<const char*, int*>{"read-timeout", &cfg.read_timeout_s},
                             {"write-timeout", &cfg.write_timeout_s}})
    if (auto v = a.last(name)) {
      auto d = parse_duration(*v);
      if (!d || *d < 1000000000LL || *d > 3600LL * 1000000000LL)
        return usage(fmt::format("--{} must be a duration from 1s to 1h", name));
      *field = static_cast<int>(*d / 1000000000LL);
    }
  cfg.access_log = !a.has("no-access-log");
  cfg.port_file = a.last("port-file").value_or("");
  return dashboard::run_dashboard(cfg);
}

}  // namespace culprit::cli
