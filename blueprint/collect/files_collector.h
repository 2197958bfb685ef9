// The files collector: log files on a shared or local filesystem, found by
// path templates (docs/blueprint-config.md, "collectors.files").
//
// Each configured source has a path template. Placeholders are replaced per
// attempt: {node} by each of its nodes (one host per file), {job_id},
// {source}, {date} (each UTC date YYYY-MM-DD the scope touches), {cluster},
// {user}, {work_dir}; the result is a glob, so `kern.log*` also finds
// `kern.log.1` and `kern.log.2.gz`. A path without {node} belongs to the
// configured `host`: a control-plane host such as the slurmctld machine, or
// `{batch_node}`, the attempt's first node, where a Slurm job's own output
// (slurm-%j.out) is written.
//
// The values come from the scheduler and the job's owner, so they are
// confined (blueprint/collect/confined_path.h): a value with '/', a glob character
// or a control character (for {work_dir}: a relative path, a '..') is
// refused and reported; the glob expands only the template's own wildcards;
// a match is read only when it is a regular file whose real path stays in
// the directory the template's literal prefix names (a job's WorkDir link
// to another user's file is refused), opened without following links and
// without blocking. A refused file (a link out, a FIFO, a device, a procfs
// file) is listed in the report's errors as "PATH: refused: WHY".
//
// Only the scope is read. For each file the first and last timestamped lines
// decide: wholly before or after the scope, skipped unread; wholly inside (or
// without timestamps, like most job output), streamed whole by the scanner
// with no copy; straddling a bound, the start is found by a binary search on
// line timestamps (the file is taken to be written in time order, as logs
// are) and only the lines from there to the end of the scope are read, as
// observations that keep the file's own line numbers and byte offsets.
// Gzip files (rotations) cannot be seeked: they are decompressed as a stream
// and only the lines in scope are kept; reading stops at the first line past
// the scope.
//
// Bounds (base/limits.h, "blueprint collection"; docs/robustness.md): memory
// never grows with a file's size or its decompressed size. At most
// gzip_file_bytes are decompressed from one file and gzip_attempt_bytes for
// one attempt; at most file_observation_bytes of observations are kept from
// one file and attempt_observation_bytes for one attempt (a gzip file, a
// range of a plain file, or a file without timestamps that the scope could
// not window); a line keeps at most log_line bytes. Reaching one stops that
// file (or, for the attempt's limits, what is left of it) and is a cut: an
// error in the source's report, whose status is then "partial" with the
// reason saying so. The attempt is attributed on what was kept.
//
// Source `flight_recorder` is not lines but PyTorch Flight Recorder dumps
// (runtime/flight_recorder.h): each match is read whole (at most
// limits::kPickleBytes), and the attempt's dumps are rendered together into
// observations of that source, as a bundle's traces/ are; a dump that cannot
// be read is an error of the report with its coded reason. A file of source
// `ras` that is ncclras's JSON form (runtime/nccl_ras_report.h) is read
// whole too (at most limits::kRasReportBytes) and rendered as the report's
// lines; ncclras's text form is read as lines like any log.
//
// Thread-safety: immutable after construction; collect() may run
// concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "blueprint/collect/collector.h"
#include "blueprint/collect/confined_path.h"
#include "blueprint/connector.h"

namespace culprit::blueprint {

// One `collectors.files` entry: where one log source lives.
struct FileSourceConfig {
  std::string source;                 // log source name: kernel, app, fabricmanager, ...
  std::string path;                   // template with {node} {job_id} {source} {date} {cluster} {user} {work_dir}, globs
  std::string host;                   // the host of files whose path has no {node}: a control-plane host, or "{batch_node}"
  std::string format = "auto";        // auto | plain | gzip
  int line = 0;                       // where it was configured (for messages)
};

struct FilesCollectorConfig : ConnectorConfig {
  std::vector<FileSourceConfig> sources;
  uint64_t max_file_bytes = 0;        // 0: no limit; larger files are read up to this many bytes of the window
  std::string summary() const override;
};

// The `collectors.files` section (registered in blueprint/connectors.cpp): its reader,
// which validates as it reads, and its factory.
std::shared_ptr<ConnectorConfig> read_files_collector_config(ConfigReader& r, const YAML::Node& n);
bool make_files_collector(const ConnectorConfig& config, const ConnectorEnv& env, ConnectorParts& out, std::string& error);

class FilesCollector final : public Collector {
 public:
  explicit FilesCollector(FilesCollectorConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "files"; }
  void collect(const CollectRequest& request, Collected& out) const override;

 private:
  FilesCollectorConfig config_;
};

// The template filled with the attempt's values and these `node`, `date`
// and `source` (blueprint/collect/confined_path.h: the glob pattern, the root every
// match must stay in). False with `error` when a value is refused (a '/'
// in {node}, a glob character or a relative {work_dir}, ...).
bool expand_path_template(const std::string& tmpl, const std::string& node, const std::string& date,
                          const std::string& source, const Attempt& attempt, PathPattern& out, std::string& error);

}  // namespace culprit::blueprint
