// Reading observations from NDJSON: one reader for every carrier.
//
// A bundle's observations.jsonl, a service request body and a collector's
// output all carry observations as NDJSON (one JSON object per line, see
// docs/bundle.md). They all go through NdjsonObservationReader, so every
// carrier accepts exactly the same lines and rejects the others with the
// same messages.
//
// Bytes are fed as they arrive, in chunks of any size; each complete line is
// parsed as soon as its newline is seen: plain log observations by the fast
// path (runtime/observation_fast_parse.h), anything else, and every error
// message, by the reference parser (runtime/observation.h). The parsed
// observation is moved into the caller's sink; the reader keeps only the
// bytes of the one line that is still incomplete, so memory does not grow
// with the stream. Blank lines are skipped (they still count as lines); a
// final line without a newline is read by finish(). A trailing '\r' is
// dropped (CRLF files).
//
// The reader applies no defaults: an observation without "file" or "line"
// reaches the sink with them empty/0, and the sink is told the line number
// in the carrier, so the caller decides (a bundle names its file
// "observations.jsonl" and numbers lines by position; a service session
// numbers them by arrival).
//
// Errors: the first bad line stops the reader; error() then says what and
// where. A line longer than Options::max_line bytes is refused as soon as
// it exceeds the limit, without buffering the rest of it.
//
// Thread-safety: one reader per stream; no shared state.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/limits.h"
#include "runtime/observation.h"

namespace culprit {

struct ObservationReadError {
  enum class Kind {
    None,
    InvalidJson,       // the line is not JSON (`byte` is the 1-based position in the line)
    Schema,            // JSON, but not a valid observation (or context)
    LineTooLong,       // a line over Options::max_line bytes (limit observation_line)
    TooDeep,           // JSON nested deeper than limits::kJsonDepth (limit json_depth)
    Refused,           // the sink returned false (its own reason is the caller's)
  };
  Kind kind = Kind::None;
  int64_t line = 0;    // 1-based line of the carrier
  int64_t byte = 0;    // InvalidJson: where in the line the parser gave up
  std::string message; // a sentence naming the offending key or value (no line prefix)
};

class NdjsonObservationReader {
 public:
  struct Options {
    size_t max_line = limits::kObservationLine;  // bytes per line, newline excluded
    // The first non-blank line is not an observation but a JSON object (a
    // workload context: the service's one-shot NDJSON form); it is parsed as
    // JSON and kept in context() for the caller to validate.
    bool first_line_is_context = false;
  };
  // Receives each observation with its line number in the carrier; returns
  // false to stop reading (the reader's error is then Kind::Refused).
  using Sink = std::function<bool(Observation&& observation, int64_t line)>;

  explicit NdjsonObservationReader(Sink sink) : NdjsonObservationReader(std::move(sink), Options{}) {}
  NdjsonObservationReader(Sink sink, Options options);

  // Feeds the next bytes. False once reading stopped (then see error()).
  bool feed(const char* data, size_t size);
  // Reads the last line if it has no newline. False on an error.
  bool finish();

  const ObservationReadError& error() const { return error_; }
  int64_t lines() const { return line_; }          // lines seen so far, blank ones included
  int64_t observations() const { return count_; }  // observations handed to the sink
  // With Options::first_line_is_context: the context line, once read.
  const std::optional<nlohmann::json>& context() const { return context_; }

 private:
  bool take_line(std::string_view text);
  bool fail(ObservationReadError::Kind kind, std::string message, int64_t byte = 0);

  Sink sink_;
  Options options_;
  std::string partial_;   // the incomplete line
  bool overlong_ = false; // partial_ already exceeded max_line
  int64_t line_ = 0, count_ = 0;
  bool stopped_ = false;
  ObservationReadError error_;
  std::optional<nlohmann::json> context_;
};

// Reads a whole NDJSON file of observations (a bundle's observations.jsonl)
// into `out`, with the bundle defaults: "file" defaults to the file's base
// name, "line" to the line's position. The path must be a regular file (a
// FIFO, a device or a directory is refused: reading one could block or never
// end). False with `error` as "PATH:LINE: invalid observation: ..." or as
// the I/O error; a read error is never taken for the end of the file.
bool read_observations_file(const std::string& path, std::vector<Observation>& out, std::string& error);

}  // namespace culprit
