// EvidenceSet: what was gathered for one workload attempt, whoever gathered it.
//
// One record for every carrier. load_bundle (runtime/bundle.h) fills it from
// a bundle directory, each blueprint collector (blueprint/collect/collector.h) from
// the cluster, the service from a request body; diagnose (runtime/diagnose.h)
// consumes it. Because they share the record, what one carrier reports (an
// ignored file, a refused link, a directory it could not list, a collector's
// partial read) reaches the verdict's coverage the same way from each.
//
//   * `files`: local files the scanner streams whole, 4 MiB at a time; the
//     scope is applied line by line and nothing is copied.
//   * `observations_path` / `observations`: normalized observations
//     (runtime/observation.h) from a JSONL file, or already in memory (a
//     window cut out of a larger file, a decompressed rotation, Loki
//     streams, pod logs, PromQL samples), each with its provenance.
//   * `ignored_files`: found but not laid out as evidence; listed in coverage.
//   * `refused_files`: laid out as evidence but not read, with the reason
//     (a link out of the bundle, a FIFO); listed in coverage with a warning.
//   * `warnings`: problems of the carrier itself (a directory that could not
//     be listed); copied into coverage.warnings.
//   * `collectors`: one report per collector (coverage.collectors).
//
// A plain value: no invariants beyond "sorted where the comment says so",
// no thread-safety concerns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/model.h"
#include "runtime/observation.h"

namespace culprit {

// A log file of the evidence, one host and one source.
struct LogFile {
  std::string host, source;
  std::string display_path;   // as reported in evidence: "logs/node-01/app.log"
  std::string path;           // to open
  bool control_plane = false;
  uint64_t size = 0;
};

// A file that looks like evidence but is not read, and why ("a symbolic
// link out of the bundle (to /etc/x)", "it is a FIFO, not a regular file").
struct RefusedFile {
  std::string path;    // as shown in coverage (relative to the bundle)
  std::string reason;
};

struct EvidenceSet {
  std::vector<LogFile> files;              // load_bundle: sorted by (host, source)
  std::string observations_path;           // a JSONL file, or ""
  std::vector<Observation> observations;   // in memory
  std::vector<std::string> ignored_files;
  std::vector<RefusedFile> refused_files;
  std::vector<std::string> warnings;
  std::vector<CollectorReport> collectors;

  // Appends everything `other` holds (its observations_path only when this
  // record has none).
  void merge(EvidenceSet&& other);
};

}  // namespace culprit
