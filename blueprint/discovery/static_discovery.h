// Static discovery: the workloads listed in the configuration, and bundle
// directories (docs/bundle.md) whose context.json is the attempt and whose
// logs are its evidence (collected by BundleCollector, not by the
// configured collectors).
//
// Thread-safety: as every Discovery, discover() from one thread at a time.
// Errors are values (false and `error`); nothing throws.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blueprint/connector.h"
#include "blueprint/discovery/discovery.h"

namespace culprit::blueprint {

// A workload listed in the configuration (static discovery).
struct StaticWorkloadConfig {
  std::string id;
  std::string scheduler = "static";
  std::string cluster;
  std::optional<int64_t> start, end;  // ns since the epoch
  std::vector<std::string> nodes;     // expanded from the hostlist(s) given
  std::string state;                  // upper case, "" when not given
  std::optional<int64_t> exit_code;
};

struct StaticDiscoveryConfig : ConnectorConfig {
  std::vector<std::string> bundles;   // bundle directories (globs already expanded, sorted)
  // The patterns among `bundles:` (with * ? or [), as absolute paths: each
  // poll expands them again, so a bundle that appears in a spool directory
  // while `culprit run --watch` runs is discovered at the next poll.
  std::vector<std::string> bundle_globs;
  std::vector<StaticWorkloadConfig> workloads;
  std::string summary() const override;
};

// The `discovery.static` section (registered in blueprint/connectors.cpp): its reader,
// which validates as it reads, and its factory.
std::shared_ptr<ConnectorConfig> read_static_discovery_config(ConfigReader& r, const YAML::Node& n);
bool make_static_discovery(const ConnectorConfig& config, const ConnectorEnv& env, ConnectorParts& out, std::string& error);

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
