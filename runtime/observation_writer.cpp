// NDJSON encoding of evidence for the service's clients. See the header for
// the contract; the comments here say why it is done this way.
#include "runtime/observation_writer.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/text_util.h"
#include "base/timestamp.h"

namespace culprit {

namespace {

using ojson = nlohmann::ordered_json;

// Invalid UTF-8 cannot be written as JSON; the replacement keeps the line
// (and its position) rather than dropping it.
std::string dump(const ojson& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

}  // namespace

std::string observation_ndjson(const Observation& o) {
  ojson j;
  j["host"] = o.host;
  j["source"] = o.source;
  if (o.ts) j["ts"] = format_rfc3339(*o.ts);
  if (o.is_metric) {
    j["metric"] = o.metric;
    j["value"] = o.value;
    ojson labels = ojson::object();
    for (auto kv : split(o.labels, ',')) {
      size_t eq = kv.find('=');
      if (eq != std::string_view::npos) labels[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
    }
    j["labels"] = std::move(labels);
  } else {
    j["text"] = o.text;
  }
  if (!o.file.empty()) j["file"] = o.file;
  if (o.line > 0) j["line"] = o.line;
  if (o.offset > 0) j["offset"] = o.offset;
  return dump(j);
}

NdjsonObservationWriter::NdjsonObservationWriter(std::vector<Observation> observations, std::vector<LogFile> files)
    : owned_observations_(std::move(observations)), owned_files_(std::move(files)),
      observations_(&owned_observations_), files_(&owned_files_) {}

NdjsonObservationWriter::NdjsonObservationWriter(Borrow, const std::vector<Observation>& observations,
                                                 const std::vector<LogFile>& files)
    : observations_(&observations), files_(&files) {}

bool NdjsonObservationWriter::next(std::string& chunk, size_t target) {
  chunk.clear();
  if (!error_.empty()) return false;
  while (chunk.size() < target) {
    if (observation_i_ < observations_->size()) {
      const Observation& o = (*observations_)[observation_i_++];
      if (!o.is_metric && !is_valid_utf8(o.text)) ++invalid_utf8_;
      chunk += observation_ndjson(o);
      chunk += '\n';
      continue;
    }
    if (file_i_ >= files_->size()) break;
    if (!next_file_line(chunk)) {
      if (!error_.empty()) return false;
    }
  }
  return !chunk.empty();
}

// Appends the current file's next line; false when the file ended (the
// writer has then moved to the next one) or could not be read.
bool NdjsonObservationWriter::next_file_line(std::string& chunk) {
  const LogFile& f = (*files_)[file_i_];
  if (!open_) {
    in_.clear();
    in_.open(f.path, std::ios::binary);
    if (!in_) {
      error_ = fmt::format("cannot read {}: {}", f.path, std::strerror(errno));
      return false;
    }
    open_ = true;
    line_ = 0;
    offset_ = 0;
  }
  std::string text;
  if (!std::getline(in_, text)) {
    if (in_.bad()) {
      error_ = fmt::format("cannot read {} after line {}: {}", f.path, line_, std::strerror(errno));
      return false;
    }
    if (line_ == 0) empty_files_.push_back(f.display_path);
    in_.close();
    open_ = false;
    ++file_i_;
    return false;
  }
  // The terminator is part of the line, as in local mode's byte counts; a
  // last line without one is sent without one.
  if (!in_.eof()) text += '\n';
  if (!is_valid_utf8(text)) ++invalid_utf8_;
  ojson j;
  j["host"] = f.host;
  j["source"] = f.source;
  j["file"] = f.display_path;
  j["line"] = ++line_;
  j["offset"] = offset_;
  offset_ += static_cast<int64_t>(text.size());
  j["text"] = std::move(text);
  chunk += dump(j);
  chunk += '\n';
  return true;
}

}  // namespace culprit
