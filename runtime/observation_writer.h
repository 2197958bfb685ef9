// Writing evidence as NDJSON observations: the inverse of
// runtime/observation_reader.h, for every client of `culprit serve`.
//
// `culprit diagnose --server` (a bundle) and `culprit run --service` (what
// the collectors gathered) both send their evidence to the service as the
// NDJSON observation stream described in docs/service.md. They go through
// NdjsonObservationWriter, so both send exactly the same lines for the same
// evidence: each log line becomes a text observation carrying its host,
// source, bundle-relative file, 1-based line number, byte offset and its
// '\n' terminator, so the service scans and counts exactly what local mode
// scans and counts (provenance and coverage are identical).
//
// The writer streams: next() fills a chunk of about the size asked for and
// returns; log files are read line by line as chunks are asked for, so
// memory holds one chunk and one line, not the evidence. Observations given
// up front (a bundle's observations.jsonl, a collector's parsed output) are
// written first, then the log files in the order given.
//
// JSON cannot carry invalid UTF-8: such bytes are sent as U+FFFD and the
// line is counted in invalid_utf8_lines(), so the caller can warn that the
// service's lines_invalid_utf8 will differ from local mode.
//
// Errors: a file that cannot be opened or read stops the writer; next()
// then returns false and error() says which file and why (a read error is
// never taken for the end of a file).
//
// Thread-safety: one writer per stream; no shared state.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/bundle.h"
#include "runtime/observation.h"

namespace culprit {

// One observation as a single NDJSON line (no newline). The inverse of
// parse_observation: parse_observation(json(observation_ndjson(o))) == o
// for every valid observation whose label values hold no ',' (the
// canonical "k=v,k=v" form of Observation::labels cannot tell such a comma
// from a separator).
std::string observation_ndjson(const Observation& o);

class NdjsonObservationWriter {
 public:
  NdjsonObservationWriter(std::vector<Observation> observations, std::vector<LogFile> files);
  // The same over evidence the caller keeps (and must keep alive and
  // unchanged while the writer is used): a request sent again reads it
  // again without a copy.
  struct Borrow {};
  NdjsonObservationWriter(Borrow, const std::vector<Observation>& observations, const std::vector<LogFile>& files);
  NdjsonObservationWriter(const NdjsonObservationWriter&) = delete;  // it points at its own members
  NdjsonObservationWriter& operator=(const NdjsonObservationWriter&) = delete;

  // Replaces `chunk` with the next whole lines, stopping once it holds at
  // least `target` bytes (one line may take it past). False when nothing is
  // left or on an error (then error() is non-empty).
  bool next(std::string& chunk, size_t target);

  const std::string& error() const { return error_; }
  size_t invalid_utf8_lines() const { return invalid_utf8_; }
  // Files that turned out to be empty (the service's coverage cannot count
  // a file it receives no line of).
  const std::vector<std::string>& empty_files() const { return empty_files_; }

 private:
  bool next_file_line(std::string& chunk);

  std::vector<Observation> owned_observations_;  // when given by value
  std::vector<LogFile> owned_files_;
  const std::vector<Observation>* observations_;  // the owned ones or the borrowed ones
  const std::vector<LogFile>* files_;
  size_t observation_i_ = 0, file_i_ = 0;
  std::ifstream in_;
  bool open_ = false;
  int64_t line_ = 0, offset_ = 0;
  size_t invalid_utf8_ = 0;
  std::vector<std::string> empty_files_;
  std::string error_;
};

}  // namespace culprit
