#include "blueprint/discovery/static_discovery.h"

#include <fmt/format.h>
#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "blueprint/config_reader.h"
#include "runtime/bundle.h"

namespace culprit::blueprint {

bool StaticDiscovery::discover(const DiscoveryWindow&, DiscoveryResult& out, std::string&) {
  std::set<std::string> keys;
  for (const auto& w : config_.workloads) {
    Attempt a;
    a.context.scheduler = w.scheduler;
    a.cluster = w.cluster.empty() ? cluster_ : w.cluster;
    a.context.workload_id = w.id;
    a.job_id = w.id;
    a.context.start = w.start;
    a.context.end = w.end;
    a.context.nodes = w.nodes;
    a.context.terminal.state = w.state;
    a.context.terminal.exit_code = w.exit_code;
    a.key = fmt::format("{}/{}/{}", a.context.scheduler, a.cluster, w.id);
    if (!keys.insert(a.key).second) {
      out.warnings.push_back(fmt::format("workload '{}' is listed twice; the first one is used", w.id));
      continue;
    }
    out.attempts.push_back(std::move(a));
  }
  std::vector<std::string> dirs = config_.bundles;
  for (const auto& pattern : config_.bundle_globs) {
    glob_t g{};
    if (glob(pattern.c_str(), GLOB_MARK, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) {
        std::string m = g.gl_pathv[i];
        while (m.size() > 1 && m.back() == '/') m.pop_back();
        if (std::filesystem::exists(std::filesystem::path(m) / "context.json")) dirs.push_back(m);
      }
    globfree(&g);
  }
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  for (const auto& dir : dirs) {
    Bundle b;
    std::string err;
    if (!load_bundle(dir, b, err)) {
      out.warnings.push_back(fmt::format("bundle {}: {}", dir, err));
      continue;
    }
    Attempt a;
    a.cluster = cluster_;
    a.context = std::move(b.context);  // aliases included
    a.job_id = a.context.workload_id;
    a.bundle_dir = dir;
    // A bundle is identified by its workload id and where it lives, so two
    // bundles of one job (say, two attempts) stay apart.
    a.key = fmt::format("bundle/{}/{}@{}", cluster_, a.context.workload_id, std::filesystem::path(dir).filename().string());
    if (!keys.insert(a.key).second) continue;
    out.attempts.push_back(std::move(a));
  }
  std::sort(out.attempts.begin(), out.attempts.end(), [](const Attempt& x, const Attempt& y) { return x.key < y.key; });
  return true;
}

void BundleCollector::collect(const CollectRequest& req, Collected& out) const {
  const Attempt& a = *req.attempt;
  Bundle b;
  std::string err;
  if (!load_bundle(a.bundle_dir, b, err)) {
    // Gone or broken since discovery: say so, as a collector would.
    CollectorReport rep;
    rep.collector = "bundle";
    rep.nodes_expected = a.context.nodes;
    rep.status = "failed";
    rep.reason = err;
    out.collectors.push_back(std::move(rep));
    return;
  }
  // The bundle is its own evidence record, handed over as load_bundle filled
  // it: observations.jsonl is read by diagnose, with its messages, so the
  // verdict is the one `culprit diagnose` gives, coverage included. No
  // collector report is added: diagnose's coverage already says which
  // nodes and sources have logs.
  for (const auto& f : b.files) out.bytes += static_cast<int64_t>(f.size);
  if (!b.observations_path.empty()) {
    std::error_code ec;
    auto size = std::filesystem::file_size(b.observations_path, ec);
    if (!ec) out.bytes += static_cast<int64_t>(size);
  }
  out.EvidenceSet::merge(std::move(b));
}

// Configuration: the `discovery.static` section (blueprint/connector.h). It lives here,
// with the code that uses it, so that the connector is one file.

std::string StaticDiscoveryConfig::summary() const {
  return fmt::format("{} bundle{}, {} workload{}", bundles.size(), bundles.size() == 1 ? "" : "s", workloads.size(),
                     workloads.size() == 1 ? "" : "s");
}

std::shared_ptr<ConnectorConfig> read_static_discovery_config(ConfigReader& r, const YAML::Node& n) {
  auto config = std::make_shared<StaticDiscoveryConfig>();
  StaticDiscoveryConfig& out = *config;
  r.map(n, "discovery.static", {"bundles", "workloads"}, [&](const std::string& key, const YAML::Node& v) {
    if (key == "bundles") {
      std::vector<std::string> patterns;
      if (!r.strings(v, "bundles", patterns)) return;
      for (const auto& p : patterns) {
        std::string full = r.path(p);
        glob_t g{};
        int rc = glob(full.c_str(), GLOB_MARK, nullptr, &g);
        std::vector<std::string> found;
        bool is_glob = p.find_first_of("*?[") != std::string::npos;
        if (is_glob) out.bundle_globs.push_back(full);
        if (rc == 0)
          for (size_t i = 0; i < g.gl_pathc; ++i) {
            std::string m = g.gl_pathv[i];
            while (m.size() > 1 && m.back() == '/') m.pop_back();
            if (std::filesystem::exists(std::filesystem::path(m) / "context.json")) found.push_back(m);
            else if (!is_glob) r.error("B0104", v, fmt::format("'{}' is not a bundle directory (no context.json)", m));
          }
        globfree(&g);
        if (found.empty() && (is_glob || rc != 0))
          r.warning("B0201", v, fmt::format("'{}' matches no bundle directory", p));
        out.bundles.insert(out.bundles.end(), found.begin(), found.end());
      }
      std::sort(out.bundles.begin(), out.bundles.end());
      out.bundles.erase(std::unique(out.bundles.begin(), out.bundles.end()), out.bundles.end());
    } else if (key == "workloads") {
      if (!v.IsSequence()) {
        r.error("B0103", v, "'workloads' must be a list");
        return;
      }
      for (const auto& w : v) {
        StaticWorkloadConfig wl;
        r.require(w, "workloads[]", {"id", "nodes"});
        r.map(w, "discovery.static.workloads[]",
              {"id", "scheduler", "cluster", "start", "end", "nodes", "state", "exit_code"},
              [&](const std::string& k, const YAML::Node& x) {
                if (k == "id") r.string(x, k, wl.id);
                else if (k == "scheduler") r.oneof(x, k, {"static", "slurm", "kubernetes"}, wl.scheduler);
                else if (k == "cluster") r.string(x, k, wl.cluster);
                else if (k == "start") r.time(x, k, wl.start);
                else if (k == "end") r.time(x, k, wl.end);
                else if (k == "nodes") r.nodes(x, k, wl.nodes);
                else if (k == "state") {
                  std::string s;
                  if (r.scalar(x, k, s)) {
                    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                    if (std::find(terminal_states().begin(), terminal_states().end(), s) == terminal_states().end())
                      r.error("B0104", x, fmt::format("'state' must be one of {}", fmt::join(terminal_states(), ", ")));
                    wl.state = s;
                  }
                } else if (k == "exit_code") {
                  int64_t e = 0;
                  if (r.integer(x, k, e, -1000000, 1000000)) wl.exit_code = e;
                }
              });
        if (wl.start && wl.end && *wl.end < *wl.start) r.error("B0104", w, "'end' is before 'start'");
        if (!wl.id.empty()) out.workloads.push_back(std::move(wl));
      }
    }
  });
  return config;
}

bool make_static_discovery(const ConnectorConfig& config, const ConnectorEnv& env, ConnectorParts& out, std::string&) {
  out.discovery = std::make_unique<StaticDiscovery>(static_cast<const StaticDiscoveryConfig&>(config), env.cluster);
  return true;
}

}  // namespace culprit::blueprint
