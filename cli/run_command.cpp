// `culprit run`: options, configuration and the attribution backend; the
// loop itself is blueprint/runner.h.
#include "base/text_util.h"
#include "base/operator_file.h"
#include "cli/run_command.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "base/timestamp.h"
#include "blueprint/collect/files_collector.h"
#include "blueprint/collect/kube_logs_collector.h"
#include "blueprint/collect/loki_collector.h"
#include "blueprint/collect/promql_collector.h"
#include "blueprint/config.h"
#include "blueprint/discovery/kueue_discovery.h"
#include "blueprint/discovery/slurm_discovery.h"
#include "blueprint/discovery/static_discovery.h"
#include "blueprint/collect/push_down.h"
#include "blueprint/recovery_policy.h"
#include "blueprint/runner.h"
#include "cli/args.h"
#include "cli/catalog_choice.h"
#include "cli/text_output.h"

namespace culprit::cli {

namespace {

const char* kRunHelp = R"(Usage: culprit run --config FILE (--once | --watch) [options]

The blueprint: discovers workload attempts that ended (Slurm through sacct,
Kueue Workloads through the Kubernetes API, or the workloads and bundles the
configuration lists), collects their evidence (log files by path template,
Loki, Kubernetes pod logs and Events, PromQL metrics), attributes each one
(in this process or through a `culprit serve`), and writes the verdicts to
the store and to stdout. Attempts already in the store are skipped, so runs
can repeat.
See docs/blueprint.md and docs/blueprint-config.md.

Options:
  --config FILE        the configuration (YAML)
  --once               process the current window and exit
  --watch              poll every watch.interval until SIGTERM/SIGINT;
                       progress is kept in the store, so a restart goes on
  --store URL          sqlite:PATH or postgresql://[user@]host[:port]/db
                       (overrides the configuration; default sqlite:culprit.db
                       in the working directory). Passwords: PGPASSWORD,
                       PGPASSFILE or store.password_file, never the URL
  --service URL        attribute through a `culprit serve` at URL
  --token-file FILE    its bearer token (with --service)
  --format jsonl|text|none
                       what stdout gets per attempt (default: the
                       configuration's output.stdout, else jsonl); text is
                       one line per attempt: its verdict and what follows
  -v, --verbose        with text, a block per attempt instead: the root
                       cause, the coverage warnings, each action
  --record-placement   also store where the pods of running Kubernetes
                       workloads are (every poll, and every
                       discovery.kueue.placement_interval with --watch), so
                       attempts whose pods are gone still know their nodes
  --policy FILE        the recovery policy (YAML, docs/recovery.md): which
                       recommendations act and which are held
  --emit-recommendations FILE|-
                       append each recommendation of a new verdict, with the
                       policy's decision, as a JSON line (- : stdout, with
                       --format none)
  --webhook URL        POST each recommendation (JSON) to URL; failures are
                       reported and make the exit status 1
  --webhook-timeout DUR
                       per attempt of a webhook call (default 10s; 3 retries)
  --apply              run the Slurm drain commands of recommendations that
                       act (without it they are only printed)
  --check              validate the configuration (and --policy) and exit
  --polls N            with --watch: stop after N polls
  --concurrency N      attempts collected and attributed at once (1..256;
                       default: the number of cores); stored and printed in
                       discovery order whatever N is (without --queue)
  --queue              be one replica of several sharing the PostgreSQL
                       store's work queue: discovered attempts are queued
                       there and each replica claims, collects and
                       attributes what it can, under a lease; a replica that
                       dies loses nothing (docs/blueprint.md, "Replicas")
  --lease DUR          with --queue: how long a claim holds without its
                       heartbeat (default 30s); a dead replica's attempts
                       are taken over after it
  --replica NAME       with --queue: this replica's name in leases and
                       messages (default HOST:PID)
  --alerts-listen HOST:PORT
                       with --watch: receive Prometheus Alertmanager's webhook
                       (webhook_config url http://HOST:PORT/v1/alertmanager);
                       a firing alert whose labels name a workload (job_id,
                       slurm_job_id, workload_id, jobid or job_name) starts a
                       poll at once (docs/blueprint.md, "Alerts")
  --alerts-token-file FILE
                       the bearer token Alertmanager must send
  --alerts-port-file FILE
                       write the receiver's bound port to FILE (port 0 = any)
  --attempt-timings FILE
                       append one JSON line per attempt settled: where its
                       time went (queued, collection, attribution, store)
  --engine jit|interp, --no-cache, --cache-dir DIR, --rules PATH, --no-stdlib
                       the in-process catalog (added to the configuration's)
  -h, --help           this help

Exit status: 0 every attempt attributed or already stored, 1 some attempt
failed and is left for the next run or a hand-off (scontrol, webhook)
failed, 2 bad usage, configuration or policy, 3 the store, the service or
discovery could not be used.
)";

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

int usage(const std::string& msg) {
  std::cerr << fmt::format("culprit run: {}\nTry 'culprit run --help'.\n", escape_for_terminal(msg));
  return 2;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  ArgSpec spec = with_catalog_options(
      {{"once", "watch", "help", "check", "record-placement", "apply", "verbose", "queue"},
       {"config", "store", "service", "token-file", "format", "polls", "policy", "emit-recommendations", "webhook",
        "webhook-timeout", "concurrency", "lease", "replica", "alerts-listen", "alerts-token-file", "alerts-port-file", "attempt-timings"}});
  Args a;
  std::string err;
  if (!parse_args(argc, argv, 2, spec, a, err)) return usage(err);
  if (a.has("help")) {
    std::cout << kRunHelp;
    return 0;
  }
  if (!a.positionals.empty()) return usage("unexpected argument '" + a.positionals[0] + "'");
  auto config_path = a.last("config");
  if (!config_path) return usage("--config FILE is required");
  if (!a.has("check") && a.has("once") == a.has("watch")) return usage("give exactly one of --once and --watch");
  int max_polls = 0;
  if (auto n = a.last("polls")) {
    char* end = nullptr;
    long v = std::strtol(n->c_str(), &end, 10);
    if (n->empty() || *end || v < 1) return usage("--polls must be a positive integer");
    if (!a.has("watch")) return usage("--polls applies only with --watch");
    max_polls = static_cast<int>(v);
  }
  int concurrency = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (auto n = a.last("concurrency")) {
    char* end = nullptr;
    long v = std::strtol(n->c_str(), &end, 10);
    if (n->empty() || *end || v < 1 || v > 256) return usage("--concurrency must be an integer from 1 to 256");
    concurrency = static_cast<int>(v);
  }
  int64_t lease_ns = 30LL * 1000000000;
  if (auto t = a.last("lease")) {
    if (!a.has("queue")) return usage("--lease applies only with --queue");
    auto c = parse_bounded_duration(*t, lease_ns);
    if (c == DurationCheck::range) return usage(duration_error(c, "--lease"));
    if (c != DurationCheck::ok || lease_ns < 1000000000LL) return usage("--lease must be a duration of at least 1s, such as 30s");
  }
  std::string replica;
  if (auto r = a.last("replica")) {
    if (!a.has("queue")) return usage("--replica applies only with --queue");
    if (r->empty() || r->size() > 200) return usage("--replica must be a name of 1 to 200 characters");
    replica = *r;
  } else {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    replica = fmt::format("{}:{}", host[0] ? host : "localhost", getpid());
  }

  std::optional<blueprint::AlertReceiverConfig> alerts_cfg;
  if (auto l = a.last("alerts-listen")) {
    if (!a.has("watch")) return usage("--alerts-listen applies only with --watch (an alert starts a poll)");
    alerts_cfg.emplace();
    if (!parse_listen(*l, alerts_cfg->host, alerts_cfg->port, err)) return usage("--alerts-listen: " + err);
    if (auto t = a.last("alerts-token-file"))
      if (!read_secret(*t, "", alerts_cfg->token, err)) return usage("--alerts-token-file: " + err);
  } else if (a.last("alerts-token-file") || a.last("alerts-port-file")) {
    return usage("--alerts-token-file and --alerts-port-file apply only with --alerts-listen");
  }

  blueprint::BlueprintConfig cfg;
  Diagnostics diags;
  std::string io_error;
  bool ok = blueprint::load_config(*config_path, cfg, diags, io_error);
  if (!diags.all().empty()) std::cerr << diags.render(auto_color(STDERR_FILENO));
  if (!io_error.empty()) {
    std::cerr << "culprit run: " << io_error << "\n";
    return 2;
  }
  if (!ok) {
    std::cerr << fmt::format("culprit run: {} has {} error{}\n", *config_path, diags.error_count(),
                             diags.error_count() == 1 ? "" : "s");
    return 2;
  }

  // Command-line overrides.
  if (auto s = a.last("store")) {
    cfg.store.url = *s;
    std::string rest = s->substr(s->find("://") == std::string::npos ? 0 : s->find("://") + 3);
    size_t at = rest.find('@');
    if (s->find("://") != std::string::npos && at != std::string::npos && rest.substr(0, at).find(':') != std::string::npos)
      return usage("--store carries a password (visible to every user in the process list): use PGPASSWORD, PGPASSFILE "
                   "or store.password_file");
  }
  if (cfg.store.url.empty()) cfg.store.url = "sqlite:culprit.db";
  if (auto f = a.last("format")) {
    if (*f != "jsonl" && *f != "text" && *f != "none") return usage("--format must be jsonl, text or none");
    cfg.output.stdout_format = *f;
  }
  if (a.has("verbose")) {
    if (cfg.output.stdout_format != "text") return usage("--verbose applies only with --format text");
    cfg.output.verbose = true;
  }
  if (auto u = a.last("service")) {
    if (u->rfind("http://", 0) != 0 && u->rfind("https://", 0) != 0) return usage("--service must be an http:// or https:// URL");
    if (!cfg.attribution.service) cfg.attribution.service.emplace();
    cfg.attribution.service->url = *u;
  }
  if (auto t = a.last("token-file")) {
    if (!cfg.attribution.service) return usage("--token-file applies only with --service");
    cfg.attribution.service->token_file = *t;
    cfg.attribution.service->token_env.clear();
  }
  const auto* kueue = cfg.connector<blueprint::KueueDiscoveryConfig>();
  const auto* slurm = cfg.connector<blueprint::SlurmDiscoveryConfig>();
  const auto* loki = cfg.connector<blueprint::LokiCollectorConfig>();
  if (a.has("record-placement") && !kueue)
    return usage("--record-placement needs discovery.kueue in the configuration");
  std::optional<blueprint::RecoveryPolicy> policy;
  if (auto pf = a.last("policy")) {
    Diagnostics pdiags;
    policy.emplace();
    std::string perr;
    bool pok = blueprint::load_recovery_policy(*pf, *policy, pdiags, perr);
    if (!pdiags.all().empty()) std::cerr << pdiags.render(auto_color(STDERR_FILENO));
    if (!perr.empty()) {
      std::cerr << "culprit run: " << perr << "\n";
      return 2;
    }
    if (!pok) {
      std::cerr << fmt::format("culprit run: {} has {} error{}\n", *pf, pdiags.error_count(), pdiags.error_count() == 1 ? "" : "s");
      return 2;
    }
  }
  if (a.has("apply") && !slurm)
    return usage("--apply runs Slurm drain commands: it needs discovery.slurm in the configuration");
  auto emit = a.last("emit-recommendations");
  if (emit && *emit == "-" && cfg.output.stdout_format != "none")
    return usage("--emit-recommendations - shares stdout with the verdicts: add --format none, or give a FILE");
  blueprint::HandoffConfig hcfg;
  if (auto w = a.last("webhook")) {
    if (w->rfind("http://", 0) != 0 && w->rfind("https://", 0) != 0) return usage("--webhook must be an http:// or https:// URL");
    hcfg.webhook_url = *w;
  }
  if (auto t = a.last("webhook-timeout")) {
    int64_t d = 0;
    auto c = parse_bounded_duration(*t, d);
    if (c == DurationCheck::range) return usage(duration_error(c, "--webhook-timeout"));
    if (c != DurationCheck::ok || d <= 0) return usage("--webhook-timeout must be a duration such as 10s");
    if (!a.last("webhook")) return usage("--webhook-timeout applies only with --webhook");
    hcfg.webhook_timeout_ns = d;
  }
  hcfg.apply = a.has("apply");
  if (slurm) hcfg.slurm_conf = slurm->slurm_conf;
  if (a.has("check")) {
    if (policy)
      std::cout << fmt::format("ok: {}: {} rule{}{}, default {}\n", *a.last("policy"), policy->rules.size(),
                               policy->rules.size() == 1 ? "" : "s",
                               policy->replace_suspect ? ", replace_suspect after repeated faults" : "",
                               policy->default_decision);
    // One entry per configured connector, in registry order, each saying
    // what it will do: the registry knows them, this command does not.
    std::vector<std::string> parts;
    for (const auto& c : cfg.connectors) {
      auto what = c.config->summary();
      parts.push_back(what.empty() ? std::string(c.connector->section) : fmt::format("{} ({})", c.connector->section, what));
    }
    if (parts.empty()) parts.push_back("no connectors");
    std::cout << fmt::format("ok: {}: {}, store {}, attribution {}\n", *config_path, fmt::join(parts, ", "),
                             blueprint::redact_url(cfg.store.url),
                             cfg.attribution.service ? cfg.attribution.service->url : "in-process");
    return 0;
  }

  blueprint::RunSetup setup;
  setup.config = &cfg;
  setup.watch = a.has("watch");
  setup.max_polls = max_polls;
  setup.concurrency = concurrency;
  setup.log = &std::cerr;
  setup.log_is_terminal = isatty(STDERR_FILENO);
  setup.out = cfg.output.stdout_format == "none" ? nullptr : &std::cout;
  setup.record_placement = a.has("record-placement");

  if (cfg.attribution.service) {
    for (const char* local : {"rules", "engine", "cache-dir"})
      if (a.last(local)) return usage(fmt::format("--{} does not apply with --service (the service's catalog applies)", local));
    auto svc = blueprint::ServiceAttribution::make(*cfg.attribution.service, cfg.output.explain, err);
    if (!svc) {
      std::cerr << "culprit run: " << escape_for_terminal(err) << "\n";
      return 2;
    }
    if (!svc->ready(err)) {
      std::cerr << "culprit run: " << escape_for_terminal(err) << "\n";
      return 3;
    }
    if (!svc->authorized(err)) {
      std::cerr << "culprit run: " << escape_for_terminal(err) << "\n";
      return 2;
    }
    if (loki && loki->push_down) {
      // Push-down needs the catalog's atoms: use the local catalog only when
      // it is the one the service runs (same digest), else read unfiltered.
      std::string digest;
      if (!svc->catalog_digest(digest, err)) {
        std::cerr << "culprit run: " << escape_for_terminal(err) << "\n";
        return 3;
      }
      AttributorConfig acfg;
      Args catalog_args = a;
      if (!cfg.attribution.stdlib) catalog_args.flags.insert("no-stdlib");
      auto& rules = catalog_args.options["rules"];
      rules.insert(rules.begin(), cfg.attribution.rules.begin(), cfg.attribution.rules.end());
      acfg.self_test = false;
      std::shared_ptr<const Attributor> local;
      if (catalog_config(catalog_args, {}, acfg, err)) {
        acfg.self_test = false;  // only its atoms are used here; the service runs the tests
        acfg.jit = false;
        AttributorStart start;
        local = Attributor::open(acfg, start);
      }
      if (local && local->catalog().digest == digest) {
        setup.line_filters = blueprint::catalog_line_filters(*local->program());
        for (const auto& x : local->catalog().extractors)
          for (const auto& src : x.sources) setup.wanted_sources.insert(src);
      } else {
        std::cerr << fmt::format("culprit run: warning: the service's catalog ({}) is not this binary's; Loki lines are "
                                 "read without the catalog's line filter\n", digest.substr(0, 12));
      }
    }
    setup.attribution = std::move(svc);
  } else {
    AttributorConfig acfg;
    // The configuration's catalog, then the command line's additions.
    Args catalog_args = a;
    if (!cfg.attribution.stdlib) catalog_args.flags.insert("no-stdlib");
    if (!cfg.attribution.engine.empty() && !a.last("engine")) catalog_args.options["engine"] = {cfg.attribution.engine};
    auto& rules = catalog_args.options["rules"];
    rules.insert(rules.begin(), cfg.attribution.rules.begin(), cfg.attribution.rules.end());
    if (!catalog_config(catalog_args, {}, acfg, err)) return usage(err);
    auto attributor = open_attributor("run", acfg, true, "refusing to attribute with it (run 'culprit test')");
    if (!attributor) return 2;
    for (const auto& x : attributor->catalog().extractors)
      for (const auto& s : x.sources) setup.wanted_sources.insert(s);
    setup.line_filters = blueprint::catalog_line_filters(*attributor->program());
    DiagnoseOptions opt;
    opt.threads = cfg.attribution.threads;
    opt.slack_before = cfg.attribution.slack_before;
    opt.slack_after = cfg.attribution.slack_after;
    setup.attribution = std::make_unique<blueprint::InProcessAttribution>(attributor, opt, cfg.output.explain);
  }

  std::string password;
  if (!cfg.store.password_file.empty() || !cfg.store.password_env.empty())
    if (!read_secret(cfg.store.password_file, cfg.store.password_env, password, err)) {
      std::cerr << "culprit run: store password: " << err << "\n";
      return 2;
    }
  setup.store = blueprint::Store::open(cfg.store.url, password, err);
  if (!setup.store) {
    std::cerr << "culprit run: " << escape_for_terminal(err) << "\n";
    return 3;
  }
  if (a.has("queue")) {
    setup.queue = blueprint::WorkQueue::open(cfg.store.url, password, replica, lease_ns, err);
    if (!setup.queue) {
      std::cerr << "culprit run: --queue: " << escape_for_terminal(err) << "\n";
      return cfg.store.url.rfind("sqlite:", 0) == 0 ? 2 : 3;
    }
  }
  if (!blueprint::make_pipeline(cfg, setup, err)) {
    std::cerr << "culprit run: " << escape_for_terminal(err) << "\n";
    return 2;
  }
  std::ofstream emit_file;
  if (emit) {
    if (*emit == "-") {
      hcfg.emit = &std::cout;
    } else {
      emit_file.open(*emit, std::ios::app | std::ios::binary);
      if (!emit_file) {
        std::cerr << fmt::format("culprit run: cannot open {} for --emit-recommendations\n", *emit);
        return 2;
      }
      hcfg.emit = &emit_file;
    }
  }
  if (policy) hcfg.policy = &*policy;
  setup.handoff = blueprint::Handoff::make(hcfg, err);
  if (!setup.handoff) return usage(err);

  std::ofstream timings_file;
  if (auto t = a.last("attempt-timings")) {
    timings_file.open(*t, std::ios::app | std::ios::binary);
    if (!timings_file) {
      std::cerr << fmt::format("culprit run: cannot open {} for --attempt-timings\n", escape_for_terminal(*t));
      return 2;
    }
    setup.timings = &timings_file;
  }
  std::unique_ptr<blueprint::AlertReceiver> alerts;
  if (alerts_cfg) {
    alerts_cfg->cluster = cfg.cluster;
    alerts = blueprint::AlertReceiver::start(*alerts_cfg, err);
    if (!alerts) {
      std::cerr << "culprit run: " << escape_for_terminal(err) << "\n";
      return 2;
    }
    if (auto pf = a.last("alerts-port-file")) {
      std::ofstream f(*pf, std::ios::trunc);
      f << alerts->port() << "\n";
      if (!f) {
        std::cerr << fmt::format("culprit run: cannot write {}\n", *pf);
        return 2;
      }
    }
    std::cerr << fmt::format("culprit run: receiving Alertmanager's webhook on http://{}:{}/v1/alertmanager\n",
                             alerts_cfg->host, alerts->port());
    setup.alerts = alerts.get();
  }

  // A service that answers before reading the whole body (401, 413) closes
  // the connection: that is an error answer to report, not a reason to die.
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  return blueprint::run_blueprint(setup, g_stop);
}

}  // namespace culprit::cli
