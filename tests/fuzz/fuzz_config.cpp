// libFuzzer: the blueprint's configuration reader (blueprint/config.h,
// parse_config) on arbitrary text. It must end with a configuration or
// coded diagnostics, never an exception, a crash, a deep recursion or
// unbounded memory; what it accepts is within the limits (durations, node
// lists), and the same text gives the same answer twice.
//
// The configuration's directory does not exist, so relative bundle globs
// match nothing; absolute ones are globbed like in `culprit run`.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/limits.h"
#include "blueprint/collect/loki_collector.h"
#include "blueprint/collect/promql_collector.h"
#include "blueprint/config.h"
#include "blueprint/discovery/kueue_discovery.h"
#include "blueprint/discovery/slurm_discovery.h"
#include "blueprint/discovery/static_discovery.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

bool duration_ok(int64_t d) { return d >= 0 && d <= culprit::limits::kMaxDurationNs; }

// The connector's configuration as read, or its defaults when not given.
template <class T>
T or_default(const culprit::blueprint::BlueprintConfig& cfg) {
  const T* given = cfg.connector<T>();
  return given ? *given : T{};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace culprit;
  using namespace culprit::blueprint;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string path = "/nonexistent-culprit-fuzz/config.yaml";
  BlueprintConfig cfg;
  Diagnostics diags;
  bool ok = parse_config(path, text, cfg, diags);
  FUZZ_CHECK(ok == !diags.has_errors());
  const std::string rendered = diags.render(false);
  FUZZ_CHECK(ok || !rendered.empty());
  for (const auto& d : diags.all()) FUZZ_CHECK(d.code.size() == 5 && d.code[0] == 'B');
  if (ok) {
    FUZZ_CHECK(cfg.connector<StaticDiscoveryConfig>() || cfg.connector<SlurmDiscoveryConfig>() ||
               cfg.connector<KueueDiscoveryConfig>());
    // A section not given reads as its defaults, which must hold too.
    const auto slurm = or_default<SlurmDiscoveryConfig>(cfg);
    const auto kueue = or_default<KueueDiscoveryConfig>(cfg);
    const auto loki = or_default<LokiCollectorConfig>(cfg);
    const auto promql = or_default<PromqlCollectorConfig>(cfg);
    const auto statics = or_default<StaticDiscoveryConfig>(cfg);
    for (int64_t d : {slurm.lookback, slurm.timeout, kueue.lookback, kueue.placement_interval,
                      loki.chunk, loki.timeout, promql.step, promql.timeout,
                      cfg.attribution.slack_before, cfg.attribution.slack_after, cfg.watch.interval, cfg.watch.overlap,
                      cfg.kubernetes.connection.timeout})
      FUZZ_CHECK(duration_ok(d));
    size_t nodes = 0;
    for (const auto& w : statics.workloads) {
      FUZZ_CHECK(!w.id.empty());
      FUZZ_CHECK(w.nodes.size() <= limits::kContextNodes);
      nodes += w.nodes.size();
      for (size_t i = 1; i < w.nodes.size(); ++i) FUZZ_CHECK(w.nodes[i - 1] < w.nodes[i]);
    }
    FUZZ_CHECK(nodes <= limits::kConfigNodes);
  }
  BlueprintConfig again;
  Diagnostics diags2;
  FUZZ_CHECK(parse_config(path, text, again, diags2) == ok);
  FUZZ_CHECK(diags2.render(false) == rendered);
  return 0;
}
