// PyTorch Flight Recorder dumps: read, and rendered as evidence lines.
//
// With TORCH_NCCL_TRACE_BUFFER_SIZE > 0 and TORCH_NCCL_DUMP_ON_TIMEOUT, each
// rank of a job that times out writes its last collectives to
// TORCH_NCCL_DEBUG_INFO_TEMP_FILE (TORCH_FR_DUMP_TEMP_FILE in newer
// releases) followed by its global rank: /tmp/nccl_trace_rank_0,
// /tmp/nccl_trace_rank_1, ... The file is a pickle by default
// (runtime/pickle_reader.h) and JSON with TORCH_NCCL_USE_JSON_TRACE_FORMAT or
// torch's _dump_nccl_trace_json. Both hold the layout of
// torch/csrc/distributed/c10d/FlightRecorderDetail.hpp (dump_dict /
// dump_json), which torch/distributed/flight_recorder (fr_trace) reads:
//
//   version            "2.4" (older dumps: "2.0" ... "2.3")
//   pg_config          {group name: {name, desc, ranks: "[0, 1, 2]"}}
//   pg_status          {pg id: {last_enqueued_collective, last_started_collective,
//                               last_completed_collective}}
//   entries            [{record_id, pg_id, process_group: (name, desc),
//                        collective_seq_id, p2p_seq_id, op_id, profiling_name,
//                        time_created_ns, input_sizes, output_sizes, state
//                        ("scheduled" | "started" | "completed"),
//                        time_discovered_started_ns, time_discovered_completed_ns,
//                        retired, timeout_ms, is_p2p, frames: [{name, filename, line}]}]
//
// The rank is not in the dump: like fr_trace, it is read from the trailing
// digits of the file's name. Keys a release does not write are optional
// (older releases: `seq_id` for collective_seq_id, no is_p2p, no pg_status);
// a key of the wrong type is an error naming it.
//
// The dumps are evidence of source `flight_recorder`: each dump becomes lines
// the catalog's extractors read like any log's (stdlib-rules/flight_recorder.attr),
// so rules reason over them across ranks. The rendering is Culprit's own,
// stable, and documented in docs/bundle.md ("Flight Recorder dumps").
//
// Thread-safety: pure functions. Errors are values; nothing throws.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/observation.h"

namespace culprit {

struct FlightRecorderEntry {
  int64_t record_id = 0;
  int64_t pg_id = -1;
  std::string pg_name, pg_desc;            // process_group: (name, desc)
  int64_t collective_seq_id = 0, p2p_seq_id = 0, op_id = 0;
  std::string profiling_name;              // "nccl:all_reduce"
  bool is_p2p = false;
  std::string state;                       // scheduled | started | completed
  std::string input_sizes, output_sizes;   // "[[1024, 8]]"
  std::optional<int64_t> time_created_ns;  // epoch nanoseconds
  int64_t timeout_ms = 0;
  std::string frame;                       // where the job called it: "train_step at /x/train.py:88"
};

struct FlightRecorderGroup {
  std::string name, desc;
  std::vector<int64_t> ranks;              // global ranks of its members (FlightRecorderSet::add moves them out)
  size_t size = 0;                         // how many members it has (0: unknown)
  int64_t pg_id = -1;                      // from the entries or pg_status; -1 when unknown
  std::optional<int64_t> last_enqueued, last_started, last_completed;
};

struct FlightRecorderDump {
  int64_t rank = -1;
  std::string host;                        // where it was collected (a node or host name)
  std::string file;                        // as shown in evidence: "traces/node-01/nccl_trace_rank_3"
  std::string version, comm_lib_version;
  std::vector<FlightRecorderGroup> groups; // sorted by (pg_id, name)
  std::vector<FlightRecorderEntry> entries;  // in recording order, the newest kept
  uint64_t entries_dropped = 0;            // beyond limits::kFlightRecorderEntries
};

// The global rank a dump's file name carries (its trailing digits, as
// fr_trace reads them), or -1.
int64_t flight_recorder_rank_from_name(std::string_view file_name);

// Reads one dump (pickle or JSON, told apart by its first bytes). `rank`,
// `host` and `file` are copied into `out`. False with `error` (a sentence
// starting with a stable code: PKnnn from the pickle reader, FRnnn for the
// layout) when it cannot be read.
bool read_flight_recorder_dump(std::string bytes, int64_t rank, std::string host, std::string file,
                               FlightRecorderDump& out, std::string& error);

// The dumps of one job, gathered one by one. Each member of a group lists
// the same members (a dump of a 8,192-rank job holds the world's 8,192 in
// each), so add() merges a group's members into the set once and drops them
// from the dump: memory grows with the entries, not with dumps x members.
class FlightRecorderSet {
 public:
  void add(FlightRecorderDump dump);
  size_t size() const { return dumps_.size(); }

  // The evidence lines, in a stable order whatever the order of add(): per
  // dump (by rank, then file) a header, one line per process group (with
  // the group's members that left no dump in the set: a rank that hung in a
  // CUDA call may never write one) and one line per entry. `node_of_rank`
  // names the node of a rank that left no dump when the context's layout
  // says it ("" otherwise).
  std::vector<Observation> observations(const std::function<std::string(int64_t)>& node_of_rank) const;

 private:
  std::vector<FlightRecorderDump> dumps_;
  std::map<std::string, std::set<int64_t>> members_;                 // by group name
  std::map<std::string, std::vector<std::vector<int64_t>>> lists_;   // the distinct member lists met, by group name
};

// The same for dumps already in memory.
std::vector<Observation> flight_recorder_observations(std::vector<FlightRecorderDump> dumps,
                                                      const std::function<std::string(int64_t)>& node_of_rank);

}  // namespace culprit
