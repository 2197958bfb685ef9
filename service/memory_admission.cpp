#include "service/memory_admission.h"

#include <string>

#include "base/limits.h"

namespace culprit::service {

size_t context_cost(const WorkloadContext& c, size_t json_bytes) {
  size_t n = sizeof(WorkloadContext) + json_bytes + c.workload_id.capacity() + c.terminal.state.capacity();
  for (const auto& node : c.nodes) n += sizeof(std::string) + (node.capacity() > 15 ? node.capacity() + 17 : 0);
  // The verdict lists nodes per source in its coverage: count them once more.
  return 2 * n;
}

size_t carried_cost(const EvidenceSet& e) {
  auto str = [](const std::string& x) { return sizeof(std::string) + (x.capacity() > 15 ? x.capacity() + 17 : 0); };
  size_t n = 0;
  for (const auto& r : e.collectors) {
    n += sizeof(CollectorReport) + str(r.collector) + str(r.source) + str(r.status) + str(r.reason);
    for (const auto* v : {&r.nodes_expected, &r.nodes_covered, &r.errors})
      for (const auto& x : *v) n += str(x);
  }
  for (const auto* v : {&e.ignored_files, &e.warnings})
    for (const auto& x : *v) n += str(x);
  for (const auto& f : e.refused_files) n += str(f.path) + str(f.reason) + str(f.path);  // a warning is made of it too
  return 2 * n;  // the verdict's coverage holds a copy
}

size_t estimate_parse_cost(const RequestBody& body, bool ndjson) {
  if (body.encoded()) return 0;
  constexpr size_t kTreePerObject = 640;  // std::map nodes, keys and values of ~5 members
  if (ndjson) return body.size() + (body.count('\n') + 1) * observation_overhead();
  return 2 * body.size() + body.count('{') * (observation_overhead() + kTreePerObject);
}

size_t event_allowance(size_t observations, size_t text_bytes) {
  constexpr size_t kEventRecord = 1024;
  if (observations == 0) return 0;
  size_t per_line = std::min(text_bytes / observations + 16, limits::kEvidenceText);
  return std::min(observations, limits::kEventsPerRequest) * (kEventRecord + per_line);
}

}  // namespace culprit::service
