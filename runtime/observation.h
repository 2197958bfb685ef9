// Normalized observations: the evidence model shared by bundles
// (observations.jsonl) and the service API. See docs/bundle.md.
//
// One observation is either a log line or a metric sample:
//   {"host": "node-02", "source": "kernel", "ts": "2026-11-30T02:05:01Z", "text": "NVRM: Xid ..."}
//   {"host": "node-02", "source": "dcgm", "ts": "...", "metric": "DCGM_FI_DEV_XID_ERRORS",
//    "value": 79, "labels": {"gpu": "3"}}
// plus optional provenance "file", "line" and "offset" (docs/bundle.md, "Observations"). `ts` is optional for text (the
// line's own timestamp is parsed as for files) and required for metrics.
//
// Thread-safety: pure functions over their arguments. Errors are values
// naming the key at fault; nothing throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace culprit {

struct Observation {
  std::string host, source;
  std::optional<int64_t> ts;
  bool is_metric = false;
  std::string text;           // log line (text observations)
  std::string metric;         // metric name (metric observations)
  double value = 0;
  std::string labels;         // canonical "k=v,k=v" sorted by key
  std::string file;           // provenance; defaults to the carrier ("observations.jsonl")
  int64_t line = 0;           // provenance line; defaults to the position in the carrier
  int64_t offset = 0;         // provenance: byte offset of the line in `file` (0 when unknown)
};

// Validates and converts one JSON object. On failure returns false with a
// message naming the offending key.
bool parse_observation(const nlohmann::json& j, Observation& out, std::string& error);

}  // namespace culprit
