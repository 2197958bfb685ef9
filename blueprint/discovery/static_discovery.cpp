#include "blueprint/discovery/static_discovery.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

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
  for (const auto& dir : config_.bundles) {
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

}  // namespace culprit::blueprint
