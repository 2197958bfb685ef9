// Static discovery: the workloads listed in the configuration, and bundle
// directories (docs/bundle.md) whose context.json is the attempt and whose
// logs are its evidence (collected by BundleCollector, not by the
// configured collectors).
#pragma once

#include "blueprint/config.h"
#include "blueprint/discovery/discovery.h"

namespace culprit::blueprint {

// The evidence of a bundle attempt: its logs/<host>/<source>.log files,
// observations.jsonl, ignored and refused files and warnings, exactly as
// `culprit diagnose BUNDLE` reads them, so the verdict is diagnose's. Used
// for attempts with a bundle_dir (StaticDiscovery::own_collector()); it adds
// a collector report ("bundle", failed) only when the bundle cannot be read.
class BundleCollector final : public Collector {
 public:
  std::string name() const override { return "bundle"; }
  void collect(const CollectRequest& request, Collected& out) const override;
};

class StaticDiscovery final : public Discovery {
 public:
  StaticDiscovery(StaticDiscoveryConfig config, std::string cluster)
      : config_(std::move(config)), cluster_(std::move(cluster)) {}
  std::string name() const override { return "static"; }
  // Every listed attempt, whatever the window (a static list has no "new").
  bool discover(const DiscoveryWindow& window, DiscoveryResult& out, std::string& error) override;
  // The bundles' evidence (attempts with a bundle_dir).
  const Collector* own_collector() const override { return &bundle_; }

 private:
  StaticDiscoveryConfig config_;
  std::string cluster_;
  BundleCollector bundle_;
};

}  // namespace culprit::blueprint
