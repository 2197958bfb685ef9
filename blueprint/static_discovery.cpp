#include "blueprint/static_discovery.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "runtime/bundle.h"
#include "runtime/observation_reader.h"

namespace culprit::blueprint {

WorkloadContext Attempt::context() const {
  WorkloadContext c;
  c.workload_id = workload_id;
  c.scheduler = scheduler;
  c.start = start;
  c.end = end;
  c.nodes = nodes;
  c.terminal.state = state;
  c.terminal.exit_code = exit_code;
  return c;
}

bool StaticDiscovery::discover(const DiscoveryWindow&, DiscoveryResult& out, std::string&) {
  std::set<std::string> keys;
  for (const auto& w : config_.workloads) {
    Attempt a;
    a.scheduler = w.scheduler;
    a.cluster = w.cluster.empty() ? cluster_ : w.cluster;
    a.workload_id = w.id;
    a.job_id = w.id;
    a.start = w.start;
    a.end = w.end;
    a.nodes = w.nodes;
    a.state = w.state;
    a.exit_code = w.exit_code;
    a.key = fmt::format("{}/{}/{}", a.scheduler, a.cluster, w.id);
    if (!keys.insert(a.key).second) {
      out.warnings.push_back(fmt::format("workload '{}' is listed twice; the first one is used", w.id));
      continue;
    }
    out.attempts.push_back(std::move(a));
  }
  for (const auto& dir : config_.bundles) {
    Bundle b;
    std::string err;
    if (!load_bundle(dir, b, err)) {
      out.warnings.push_back(fmt::format("bundle {}: {}", dir, err));
      continue;
    }
    Attempt a;
    const auto& c = b.context;
    a.scheduler = c.scheduler;
    a.cluster = cluster_;
    a.workload_id = c.workload_id;
    a.job_id = c.workload_id;
    a.start = c.start;
    a.end = c.end;
    a.nodes = c.nodes;
    a.state = c.terminal.state;
    a.exit_code = c.terminal.exit_code;
    a.bundle_dir = dir;
    // A bundle is identified by its workload id and where it lives, so two
    // bundles of one job (say, two attempts) stay apart.
    a.key = fmt::format("bundle/{}/{}@{}", cluster_, c.workload_id, std::filesystem::path(dir).filename().string());
    if (!keys.insert(a.key).second) continue;
    out.attempts.push_back(std::move(a));
  }
  std::sort(out.attempts.begin(), out.attempts.end(), [](const Attempt& x, const Attempt& y) { return x.key < y.key; });
  return true;
}

void BundleCollector::collect(const CollectRequest& req, Collected& out) const {
  const Attempt& a = *req.attempt;
  CollectorReport rep;
  rep.collector = "bundle";
  rep.nodes_expected = a.nodes;
  Bundle b;
  std::string err;
  if (!load_bundle(a.bundle_dir, b, err)) {
    rep.status = "failed";
    rep.reason = err;
    out.reports.push_back(std::move(rep));
    return;
  }
  std::set<std::string> covered, nodes(a.nodes.begin(), a.nodes.end());
  for (auto& f : b.files) {
    if (nodes.count(f.host)) covered.insert(f.host);
    rep.bytes += static_cast<int64_t>(f.size);
    out.files.push_back(std::move(f));
  }
  if (!b.observations_path.empty()) {
    std::vector<Observation> obs;
    if (!read_observations_file(b.observations_path, obs, err)) {
      rep.errors.push_back(err);
    } else {
      for (auto& o : obs) {
        if (nodes.count(o.host)) covered.insert(o.host);
        rep.bytes += static_cast<int64_t>(o.text.size());
        out.observations.push_back(std::move(o));
      }
      rep.observations = static_cast<int64_t>(obs.size());
    }
  }
  rep.nodes_covered.assign(covered.begin(), covered.end());
  if (covered.empty() && out.files.empty() && out.observations.empty()) {
    rep.status = "empty";
    rep.reason = "the bundle has no logs and no observations";
  } else if (!rep.errors.empty()) {
    rep.status = "partial";
    rep.reason = "observations.jsonl could not be read";
  } else if (covered.size() < nodes.size()) {
    rep.status = "partial";
    rep.reason = fmt::format("no logs for {} of {} nodes", nodes.size() - covered.size(), nodes.size());
  }
  out.bytes += rep.bytes;
  out.ignored_files = b.ignored_files;
  out.reports.push_back(std::move(rep));
}

}  // namespace culprit::blueprint
