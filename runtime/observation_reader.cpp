#include "runtime/observation_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "base/limits.h"
#include "runtime/json_input.h"
#include "runtime/observation_fast_parse.h"

namespace culprit {

NdjsonObservationReader::NdjsonObservationReader(Sink sink, Options options)
    : sink_(std::move(sink)), options_(options) {}

bool NdjsonObservationReader::fail(ObservationReadError::Kind kind, std::string message, int64_t byte) {
  stopped_ = true;
  error_.kind = kind;
  error_.line = line_;
  error_.byte = byte;
  error_.message = std::move(message);
  return false;
}

bool NdjsonObservationReader::feed(const char* data, size_t size) {
  if (stopped_) return false;
  size_t pos = 0;
  while (pos < size) {
    const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', size - pos));
    size_t end = nl ? static_cast<size_t>(nl - data) : size;
    // A line that fits in this chunk is parsed where it lies: no copy.
    if (partial_.empty() && nl) {
      if (end - pos > options_.max_line) {
        ++line_;
        return fail(ObservationReadError::Kind::LineTooLong,
                    limits::exceeded("observation_line", options_.max_line, "the line is longer"));
      }
      if (!take_line(std::string_view(data + pos, end - pos))) return false;
      pos = end + 1;
      continue;
    }
    if (partial_.size() + (end - pos) > options_.max_line) {
      ++line_;
      return fail(ObservationReadError::Kind::LineTooLong, limits::exceeded("observation_line", options_.max_line, "the line is longer"));
    }
    partial_.append(data + pos, end - pos);
    if (!nl) break;
    std::string line;
    line.swap(partial_);
    if (!take_line(line)) return false;
    pos = end + 1;
  }
  return true;
}

bool NdjsonObservationReader::finish() {
  if (stopped_) return false;
  if (partial_.empty()) return true;
  std::string line;
  line.swap(partial_);
  return take_line(line);
}

bool NdjsonObservationReader::take_line(std::string_view text) {
  ++line_;
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  if (text.find_first_not_of(" \t") == std::string_view::npos) return true;
  bool want_context = options_.first_line_is_context && !context_;
  Observation o;
  // Most lines are plain log observations: read without building a JSON tree.
  if (!want_context && fast_parse_observation(text, o)) {
    ++count_;
    if (!sink_(std::move(o), line_)) return fail(ObservationReadError::Kind::Refused, "refused by the receiver");
    return true;
  }
  // Bounded depth, no repeated keys (runtime/json_input.h).
  nlohmann::json j;
  JsonInputError je;
  if (!parse_json_input(text, j, je)) {
    if (je.kind == JsonInputError::Kind::Syntax)
      return fail(ObservationReadError::Kind::InvalidJson, je.message, static_cast<int64_t>(je.byte));
    return fail(je.kind == JsonInputError::Kind::TooDeep ? ObservationReadError::Kind::TooDeep : ObservationReadError::Kind::Schema,
                je.message);
  }
  if (want_context) {
    if (!j.is_object()) return fail(ObservationReadError::Kind::Schema, "the first line must be the context, a JSON object");
    context_ = std::move(j);
    return true;
  }
  std::string why;
  if (!parse_observation(j, o, why)) return fail(ObservationReadError::Kind::Schema, why);
  ++count_;
  if (!sink_(std::move(o), line_)) return fail(ObservationReadError::Kind::Refused, "refused by the receiver");
  return true;
}

bool read_observations_file(const std::string& path, std::vector<Observation>& out, std::string& error) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = fmt::format("cannot read {}: {}", path, std::strerror(errno));
    return false;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    error = fmt::format("cannot read {}: not a regular file", path);
    return false;
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string carrier = std::filesystem::path(path).filename().string();
  NdjsonObservationReader reader([&](Observation&& o, int64_t line) {
    if (o.file.empty()) o.file = carrier;
    if (o.line == 0) o.line = line;
    out.push_back(std::move(o));
    return true;
  });
  std::string buf(1 << 20, '\0');
  bool ok = true;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      error = fmt::format("cannot read {} after line {}: {}", path, reader.lines(), std::strerror(errno));
      ok = false;
      break;
    }
    if (n == 0) {
      ok = reader.finish();
      break;
    }
    if (!reader.feed(buf.data(), static_cast<size_t>(n))) {
      ok = false;
      break;
    }
  }
  ::close(fd);
  if (!ok && reader.error().kind != ObservationReadError::Kind::None)
    error = fmt::format("{}:{}: invalid observation: {}", path, reader.error().line, reader.error().message);
  return ok;
}

}  // namespace culprit
