#include "blueprint/collect/files_collector.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <set>

#include "base/limits.h"
#include "base/suggest.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "blueprint/config_reader.h"
#include "runtime/bundle.h"
#include "runtime/flight_recorder.h"
#include "runtime/nccl_ras_report.h"

namespace culprit::blueprint {

void Collected::merge(Collected&& o) {
  EvidenceSet::merge(std::move(o));
  bytes += o.bytes;
  wire_bytes += o.wire_bytes;
  files_out_of_scope += o.files_out_of_scope;
}
namespace {

constexpr int64_t kDayNs = 86400LL * 1000000000;
constexpr size_t kProbe = 64 * 1024;   // bytes read to find a first/last timestamp

// UTC dates "YYYY-MM-DD" from `a` to `b`, inclusive.
std::vector<std::string> dates_between(int64_t a, int64_t b) {
  std::vector<std::string> out;
  for (int64_t d = a - ((a % kDayNs) + kDayNs) % kDayNs; d <= b && out.size() < 366; d += kDayNs)
    out.push_back(format_rfc3339(d).substr(0, 10));
  return out;
}

struct Scope {
  std::optional<int64_t> start, end;
  YearHint hint;
  bool before(int64_t t) const { return start && t < *start; }
  bool after(int64_t t) const { return end && t > *end; }
};

std::optional<int64_t> wall(std::string_view line, const YearHint& hint) {
  LineTime lt = parse_line_time(line, hint);
  if (lt.has_wall) return lt.wall_ns;
  return std::nullopt;
}

// The first timestamp in buf's complete lines (from the start, or, with
// `from_end`, the last one).
std::optional<int64_t> find_stamp(std::string_view buf, const YearHint& hint, bool from_end, bool starts_at_line) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  if (!starts_at_line) {
    size_t nl = buf.find('\n');
    if (nl == std::string_view::npos) return std::nullopt;
    pos = nl + 1;
  }
  while (pos < buf.size()) {
    size_t nl = buf.find('\n', pos);
    if (nl == std::string_view::npos) {
      if (from_end) lines.push_back(buf.substr(pos));  // the file's last line may lack a newline
      break;
    }
    lines.push_back(buf.substr(pos, nl - pos));
    pos = nl + 1;
  }
  if (from_end) std::reverse(lines.begin(), lines.end());
  for (auto l : lines)
    if (auto t = wall(l, hint)) return t;
  return std::nullopt;
}

bool pread_all(int fd, std::string& buf, uint64_t off, size_t len) {
  buf.resize(len);
  size_t got = 0;
  while (got < len) {
    ssize_t n = pread(fd, buf.data() + got, len - got, static_cast<off_t>(off + got));
    if (n < 0) return false;
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  buf.resize(got);
  return true;
}

// What the collector may still hold and decompress for one attempt
// (base/limits.h, "blueprint collection"). One per collect() call.
struct AttemptBudget {
  int64_t observation_bytes = 0;  // held as observations, all files
  int64_t gzip_bytes = 0;         // decompressed, all gzip files
};

// One file's outcome.
struct FileResult {
  bool read = false;        // contributed evidence (or was empty but readable)
  bool out_of_scope = false;
  int64_t bytes = 0;
  int64_t lines = 0;
  int64_t held = 0;         // observation bytes kept from this file (file_observation_bytes)
  int64_t lines_truncated = 0;  // lines cut at log_line
  std::string error;
  std::string cut;          // the limit that stopped reading the file early, as limits::exceeded says it
};

// What one observation costs while it is held: its text, its provenance and
// the observation itself (so empty lines are not free).
int64_t observation_cost(std::string_view text, const std::string& host, const std::string& source,
                         const std::string& file) {
  return static_cast<int64_t>(sizeof(Observation) + text.size() + host.size() + source.size() + file.size());
}

// Charges `cost` against the file's and the attempt's observation limits;
// false (with `r.cut` set) when either would be passed.
bool charge(FileResult& r, AttemptBudget& budget, int64_t cost, const std::string& path) {
  if (r.held + cost > static_cast<int64_t>(limits::kFileObservationBytes)) {
    r.cut = limits::exceeded("file_observation_bytes",
                             limits::kFileObservationBytes,
                             fmt::format("{} lines kept, the rest of the file is not read", r.lines), path);
    return false;
  }
  if (budget.observation_bytes + cost > static_cast<int64_t>(limits::kAttemptObservationBytes)) {
    r.cut = limits::exceeded("attempt_observation_bytes", limits::kAttemptObservationBytes,
                             fmt::format("the attempt's files hold that much; {} lines kept, the rest is not read", r.lines),
                             path);
    return false;
  }
  r.held += cost;
  budget.observation_bytes += cost;
  return true;
}

void refund(FileResult& r, AttemptBudget& budget, int64_t cost) {
  r.held -= cost;
  budget.observation_bytes -= cost;
}

// Keeps one line as an observation, with its provenance, and counts it.
// False (nothing kept, `r.cut` set) when a limit would be passed.
bool emit(Collected& out, FileResult& r, AttemptBudget& budget, const std::string& host, const std::string& source,
          const std::string& file, int64_t line, int64_t offset, std::string_view text) {
  if (!charge(r, budget, observation_cost(text, host, source, file), file)) return false;
  r.bytes += static_cast<int64_t>(text.size());
  ++r.lines;
  Observation o;
  o.host = host;
  o.source = source;
  o.file = file;
  o.line = line;
  o.offset = offset;
  o.text.assign(text.data(), text.size());
  out.observations.push_back(std::move(o));
  return true;
}

// Splits a stream of bytes into lines ('\n' kept) without holding more than
// limits::kLogLine bytes of one: a longer line is kept cut to that length
// (counted) and the rest of it is skipped, so a file without newlines costs
// no more than one such line. Lines wholly inside one fed chunk are passed
// as views into it, without a copy.
class LineSplitter {
 public:
  explicit LineSplitter(uint64_t first_offset) : line_start_(first_offset) {}

  // Calls on_line(text, offset) for every line `data` completes; stops
  // (false) when on_line does.
  template <class OnLine>
  bool feed(std::string_view data, OnLine&& on_line) {
    size_t pos = 0;
    while (pos < data.size()) {
      const void* nlp = std::memchr(data.data() + pos, '\n', data.size() - pos);
      size_t end = nlp ? static_cast<size_t>(static_cast<const char*>(nlp) - data.data()) + 1 : data.size();
      std::string_view piece = data.substr(pos, end - pos);
      pos = end;
      if (nlp && line_bytes_ == 0 && piece.size() <= limits::kLogLine) {
        uint64_t at = line_start_;
        line_start_ += piece.size();
        if (!on_line(piece, at)) return false;
        continue;
      }
      if (held_.size() < limits::kLogLine) {
        size_t room = limits::kLogLine - held_.size();
        held_.append(piece.substr(0, room));
        if (piece.size() > room) ++truncated_;
      }
      line_bytes_ += piece.size();
      if (nlp && !finish_line(on_line)) return false;
    }
    return true;
  }

  // The last line, when the stream ends without a newline.
  template <class OnLine>
  bool finish(OnLine&& on_line) {
    return line_bytes_ == 0 || finish_line(on_line);
  }

  int64_t truncated() const { return truncated_; }

 private:
  template <class OnLine>
  bool finish_line(OnLine& on_line) {
    uint64_t at = line_start_;
    line_start_ += line_bytes_;
    line_bytes_ = 0;
    bool go = on_line(std::string_view(held_), at);
    held_.clear();
    return go;
  }

  uint64_t line_start_;     // offset of the line being assembled
  uint64_t line_bytes_ = 0; // its bytes so far (held_ keeps at most kLogLine of them)
  std::string held_;
  int64_t truncated_ = 0;
};

// Reads the lines of [start, size) of a plain file and keeps those in scope.
FileResult read_plain_range(int fd, uint64_t size, uint64_t start, int64_t first_line, const Scope& scope,
                            const std::string& host, const std::string& source, const std::string& path,
                            Collected& out, AttemptBudget& budget, const std::atomic<bool>* stop) {
  FileResult r;
  r.read = true;
  std::string buf;
  uint64_t off = start;
  int64_t line = first_line;
  bool in_scope = false;  // the state of the last timestamped line
  bool seen_stamp = false;
  bool done = false;
  LineSplitter lines(start);
  auto on_line = [&](std::string_view text, uint64_t at) {
    if (auto t = wall(text, scope.hint)) {
      seen_stamp = true;
      if (scope.after(*t)) {
        done = true;
        return false;
      }
      in_scope = !scope.before(*t);
    }
    // Lines before the first stamp of the range inherit the next stamp's
    // side; since the range starts just before the scope they are kept.
    if ((in_scope || !seen_stamp) && !emit(out, r, budget, host, source, path, line, static_cast<int64_t>(at), text)) {
      done = true;
      return false;
    }
    ++line;
    return true;
  };
  while (off < size && !done) {
    if (stop && stop->load()) break;
    if (!pread_all(fd, buf, off, std::min<uint64_t>(4u << 20, size - off))) {
      r.error = fmt::format("{}: read error: {}", path, std::strerror(errno));
      return r;
    }
    if (buf.empty()) break;
    off += buf.size();
    lines.feed(buf, on_line);
  }
  if (!done && !(stop && stop->load())) lines.finish(on_line);
  r.lines_truncated = lines.truncated();
  return r;
}

// The offset of a line start at or before the first line stamped >= target
// (binary search; the file is in time order). Returns 0 when unsure.
uint64_t seek_time(int fd, uint64_t size, int64_t target, const YearHint& hint) {
  uint64_t lo = 0, hi = size;
  std::string buf;
  while (hi - lo > 2 * kProbe) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (!pread_all(fd, buf, mid, kProbe)) return lo;
    auto t = find_stamp(buf, hint, false, false);
    if (!t) return lo;            // no stamp nearby: stop narrowing
    if (*t < target) lo = mid;
    else hi = mid;
  }
  // Back to the start of the line that contains `lo`.
  if (lo == 0) return 0;
  uint64_t from = lo > kProbe ? lo - kProbe : 0;
  if (!pread_all(fd, buf, from, static_cast<size_t>(lo - from))) return 0;
  size_t nl = buf.rfind('\n');
  return nl == std::string::npos ? from : from + nl + 1;
}

int64_t count_lines_before(int fd, uint64_t end, bool& ok) {
  int64_t n = 0;
  std::string buf;
  for (uint64_t off = 0; off < end;) {
    if (!pread_all(fd, buf, off, std::min<uint64_t>(4u << 20, end - off)) || buf.empty()) {
      ok = false;
      return n;
    }
    n += static_cast<int64_t>(count_newlines(buf));
    off += buf.size();
  }
  ok = true;
  return n;
}

// `fd` is open_confined's (closed here); `path` names it in evidence.
FileResult read_plain(int fd, const std::string& path, const std::string& host, const std::string& source,
                      const Scope& scope, Collected& out, AttemptBudget& budget, const std::atomic<bool>* stop) {
  FileResult r;
  struct stat st {};
  fstat(fd, &st);
  uint64_t size = static_cast<uint64_t>(st.st_size);
  std::string head, tail;
  bool ok = pread_all(fd, head, 0, std::min<uint64_t>(kProbe, size)) &&
            pread_all(fd, tail, size > kProbe ? size - kProbe : 0, std::min<uint64_t>(kProbe, size));
  if (!ok) {
    r.error = fmt::format("{}: read error: {}", path, std::strerror(errno));
    close(fd);
    return r;
  }
  auto first = find_stamp(head, scope.hint, false, true);
  auto last = find_stamp(tail, scope.hint, true, size <= kProbe);
  auto whole = [&]() {
    LogFile f;
    f.host = host;
    f.source = source;
    f.display_path = path;
    f.path = path;
    f.size = size;
    out.files.push_back(std::move(f));
    r.read = true;
    r.bytes = static_cast<int64_t>(size);
  };
  if (!first || !last || *last < *first) {
    whole();  // no timestamps (job output) or not in time order: the scanner scopes it line by line
  } else if (scope.before(*last) || scope.after(*first)) {
    r.out_of_scope = true;  // wholly outside: never read
  } else if (!scope.before(*first) && !scope.after(*last)) {
    whole();
  } else {
    // The scope starts inside the file: seek to it; else it ends inside: read from the top.
    uint64_t start = scope.before(*first) ? seek_time(fd, size, *scope.start, scope.hint) : 0;
    bool counted = true;
    int64_t line = start ? count_lines_before(fd, start, counted) + 1 : 1;
    if (!counted) r.error = fmt::format("{}: read error: {}", path, std::strerror(errno));
    else r = read_plain_range(fd, size, start, line, scope, host, source, path, out, budget, stop);
  }
  close(fd);
  return r;
}

// A gzip file, decompressed as a stream (zlib keeps its window; this keeps
// one 1 MiB chunk and at most one line beyond it), so memory does not grow
// with the decompressed size. The lines in scope are kept as observations;
// reading stops at the first line past the scope, at gzip_file_bytes
// decompressed (or what is left of gzip_attempt_bytes), or when the
// observation limits are reached: the last two are cuts, reported.
// `fd` is open_confined's (closed here); `path` names it in evidence.
FileResult read_gzip(int fd, const std::string& path, const std::string& host, const std::string& source,
                     const Scope& scope, Collected& out, AttemptBudget& budget, const std::atomic<bool>* stop) {
  FileResult r;
  int64_t attempt_left = static_cast<int64_t>(limits::kGzipAttemptBytes) - budget.gzip_bytes;
  if (attempt_left <= 0) {
    r.cut = limits::exceeded("gzip_attempt_bytes", limits::kGzipAttemptBytes,
                             "the attempt's gzip files decompressed to that much; this one is not read", path);
    close(fd);
    return r;
  }
  bool attempt_bound = attempt_left < static_cast<int64_t>(limits::kGzipFileBytes);
  int64_t allowed = std::min<int64_t>(attempt_left, static_cast<int64_t>(limits::kGzipFileBytes));
  gzFile gz = gzdopen(fd, "rb");
  if (!gz) {
    r.error = fmt::format("{}: cannot open: {}", path, std::strerror(errno));
    close(fd);
    return r;
  }
  gzbuffer(gz, 256 * 1024);
  r.read = true;
  std::vector<char> buf(1u << 20);
  int64_t line = 1;  // offsets are in the decompressed text
  int64_t inflated = 0;
  bool in_scope = false, seen_stamp = false, done = false;
  // Unstamped lines before the first stamp: kept (and charged) until a
  // stamp says on which side of the scope they are.
  std::vector<Observation> pending;
  std::vector<int64_t> pending_cost;
  auto keep_pending = [&]() {
    for (size_t k = 0; k < pending.size(); ++k) {
      r.bytes += static_cast<int64_t>(pending[k].text.size());
      ++r.lines;
      out.observations.push_back(std::move(pending[k]));
    }
    pending.clear();
    pending_cost.clear();
  };
  auto drop_pending = [&]() {
    for (int64_t c : pending_cost) refund(r, budget, c);
    pending.clear();
    pending_cost.clear();
  };
  auto on_line = [&](std::string_view text, uint64_t at) {
    if (auto t = wall(text, scope.hint)) {
      if (!seen_stamp) {
        seen_stamp = true;
        // Lines before a file's first stamp take the first one's time.
        if (!scope.before(*t) && !scope.after(*t)) keep_pending();
        else drop_pending();
      }
      if (scope.after(*t)) {
        done = true;
        return false;
      }
      in_scope = !scope.before(*t);
    }
    if (!seen_stamp) {
      int64_t cost = observation_cost(text, host, source, path);
      if (pending.size() >= 10000 || !charge(r, budget, cost, path)) {
        // No timestamp in the first 10,000 lines (or in as many as the
        // limits let the collector hold): the file cannot be windowed;
        // keep what is held and go on keeping lines, within the limits
        // (the scanner still scopes what it can).
        keep_pending();
        seen_stamp = in_scope = true;
        r.cut.clear();
        if (!emit(out, r, budget, host, source, path, line, static_cast<int64_t>(at), text)) {
          done = true;
          return false;
        }
      } else {
        Observation o;
        o.host = host;
        o.source = source;
        o.file = path;
        o.line = line;
        o.offset = static_cast<int64_t>(at);
        o.text.assign(text.data(), text.size());
        pending.push_back(std::move(o));
        pending_cost.push_back(cost);
      }
    } else if (in_scope && !emit(out, r, budget, host, source, path, line, static_cast<int64_t>(at), text)) {
      done = true;
      return false;
    }
    ++line;
    return true;
  };
  LineSplitter lines(0);
  bool eof = false;
  while (!done) {
    if (stop && stop->load()) break;
    // One byte past what is allowed tells a file that ends there from one cut.
    int64_t want = std::min<int64_t>(static_cast<int64_t>(buf.size()), allowed + 1 - inflated);
    int n = gzread(gz, buf.data(), static_cast<unsigned>(want));
    if (n < 0) {
      int errnum = 0;
      const char* msg = gzerror(gz, &errnum);
      r.error = fmt::format("{}: gzip error: {}", path, msg ? msg : "unknown");
      break;
    }
    if (n == 0) {
      eof = true;
      break;
    }
    size_t take = static_cast<size_t>(n);
    bool over = inflated + n > allowed;
    if (over) take = static_cast<size_t>(allowed - inflated);
    inflated += static_cast<int64_t>(take);
    lines.feed(std::string_view(buf.data(), take), on_line);
    if (over && !done) {
      r.cut = attempt_bound ? limits::exceeded("gzip_attempt_bytes", limits::kGzipAttemptBytes,
                                               "the attempt's gzip files decompress to more; the rest is not read", path)
                            : limits::exceeded("gzip_file_bytes", limits::kGzipFileBytes,
                                               "the file decompresses to more; the rest is not read", path);
      done = true;
    }
  }
  if (eof && !done) lines.finish(on_line);
  if (!pending.empty()) keep_pending();  // no timestamp at all: keep it
  r.lines_truncated = lines.truncated();
  budget.gzip_bytes += inflated;
  gzclose(gz);
  return r;
}

// A file read whole, at most `limit` bytes (named `limit_name` in the
// refusal). False with `why` when it cannot be.
bool read_whole(int fd, size_t limit, const char* limit_name, std::string& data, std::string& why) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = fmt::format("read error: {}", std::strerror(errno));
      return false;
    }
    if (n == 0) return true;
    if (data.size() + static_cast<size_t>(n) > limit) {
      why = limits::exceeded(limit_name, limit, "the file is larger");
      return false;
    }
    data.append(buf, static_cast<size_t>(n));
  }
}

// A Flight Recorder dump, read whole (at most limits::kPickleBytes): its
// rank from its name, as fr_trace reads it (runtime/flight_recorder.h).
// False with `why` when it cannot be.
bool read_dump(int fd, const std::string& path, const std::string& host, FlightRecorderDump& out, int64_t& bytes,
               std::string& why) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  int64_t rank = flight_recorder_rank_from_name(name);
  if (rank < 0) {
    why = "no rank at the end of its name (PyTorch names a dump PREFIX<rank>, e.g. nccl_trace_rank_3)";
    return false;
  }
  std::string data;
  if (!read_whole(fd, limits::kPickleBytes, "pickle_bytes", data, why)) return false;
  bytes = static_cast<int64_t>(data.size());
  return read_flight_recorder_dump(std::move(data), rank, host, path, out, why);
}

// True when a `ras` file is ncclras's JSON form (runtime/nccl_ras_report.h).
bool is_ras_json(int fd) {
  char buf[4096];
  ssize_t n = pread(fd, buf, sizeof buf, 0);
  return n > 0 && is_nccl_ras_json(std::string_view(buf, static_cast<size_t>(n)));
}

bool is_gzip(int fd) {
  unsigned char m[2] = {0, 0};
  return pread(fd, m, 2, 0) == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

}  // namespace

bool expand_path_template(const std::string& tmpl, const std::string& node, const std::string& date,
                          const std::string& source, const Attempt& a, PathPattern& out, std::string& error) {
  TemplateValues v;
  v.work_dir = a.work_dir;
  v.node = node;
  v.job_id = a.job_id;
  v.user = a.user;
  v.cluster = a.cluster;
  v.source = source;
  v.date = date;
  return fill_path_template(tmpl, v, out, error);
}

void FilesCollector::collect(const CollectRequest& req, Collected& out) const {
  const Attempt& a = *req.attempt;
  Scope scope{req.scope_start, req.scope_end, make_year_hint(a.context.start, a.context.end, 1970)};
  if (!a.context.start && !a.context.end) {
    auto now = std::chrono::system_clock::now();
    int year = static_cast<int>(std::chrono::year_month_day(std::chrono::floor<std::chrono::days>(now)).year());
    scope.hint = make_year_hint(std::nullopt, std::nullopt, year);
  }
  AttemptBudget budget;  // shared by every source of the attempt
  // One report per source, however many path entries feed it.
  std::map<std::string, std::vector<const FileSourceConfig*>> by_source;
  for (const auto& src : config_.sources) by_source[src.source].push_back(&src);
  for (const auto& [source, entries] : by_source) {
    CollectorReport rep;
    rep.collector = "files";
    rep.source = source;
    std::set<std::string> expected_hosts;
    bool per_node = false;
    for (const auto* e : entries)
      if (e->path.find("{node}") != std::string::npos) per_node = true;
    if (per_node) rep.nodes_expected = a.context.nodes;
    if (!req.wanted_sources.empty() && !req.wanted_sources.count(source)) {
      rep.status = "empty";
      rep.reason = fmt::format("not read: no extractor of the catalog reads source '{}'", source);
      out.collectors.push_back(std::move(rep));
      continue;
    }
    std::set<std::string> covered, read_paths;
    // Source flight_recorder: the files are PyTorch Flight Recorder dumps,
    // rendered as lines once every dump of the attempt is in.
    const bool dumps_source = source == "flight_recorder";
    FlightRecorderSet dumps;
    int64_t obs_before = static_cast<int64_t>(out.observations.size());
    int64_t bytes = 0, skipped = 0, refused = 0, cuts = 0;
    std::vector<std::string> failures;  // entries that could not be expanded at all
    for (const auto* src : entries) {
      std::vector<std::string> dates = {""};
      if (src->path.find("{date}") != std::string::npos) {
        if (!scope.start || !scope.end) {
          failures.push_back(fmt::format("{}: the path has {{date}} but the attempt has no time window", src->path));
          continue;
        }
        dates = dates_between(*scope.start, *scope.end);
      }
      if (src->path.find("{work_dir}") != std::string::npos && a.work_dir.empty()) {
        failures.push_back(fmt::format("{}: the path has {{work_dir}} but the scheduler reported none", src->path));
        continue;
      }
      bool node_path = src->path.find("{node}") != std::string::npos;
      std::vector<std::string> hosts = node_path ? a.context.nodes : std::vector<std::string>{src->host};
      if (!node_path && src->host == "{batch_node}") {
        // The job's own output is written on its first node (Slurm's BatchHost).
        if (a.context.nodes.empty()) continue;
        hosts = {a.context.nodes.front()};
      }
      for (const auto& host : hosts) {
        expected_hosts.insert(host);
        std::map<std::string, std::string> paths;  // match -> its pattern's root
        std::string bad_value;
        for (const auto& date : dates) {
          PathPattern pattern;
          if (!expand_path_template(src->path, host, date, source, a, pattern, bad_value)) break;
          glob_t g{};
          if (glob(pattern.glob.c_str(), 0, nullptr, &g) == 0)
            for (size_t k = 0; k < g.gl_pathc; ++k) paths.emplace(g.gl_pathv[k], pattern.root);
          globfree(&g);
        }
        if (!bad_value.empty()) {
          rep.errors.push_back(fmt::format("{}: {}", escape_for_terminal(host), bad_value));
          continue;
        }
        for (const auto& [path, root] : paths) {
          if (req.stop && req.stop->load()) break;
          // Only regular files inside the template's root, opened without
          // following a link out of it or blocking (blueprint/collect/confined_path.h).
          OpenedFile of = open_confined(path, root);
          if (of.outcome == OpenOutcome::kDirectory) continue;  // not a log
          if (of.outcome != OpenOutcome::kOpened) {
            rep.errors.push_back(fmt::format("{}: {}{}", escape_for_terminal(path),
                                             of.outcome == OpenOutcome::kRefused ? "refused: " : "cannot open: ", of.why));
            if (of.outcome == OpenOutcome::kRefused) ++refused;
            continue;
          }
          if (!read_paths.insert(of.real_path).second) {  // matched by two entries, or two links to one file
            close(of.fd);
            continue;
          }
          if (dumps_source) {
            FlightRecorderDump d;
            std::string why;
            int64_t n = 0;
            bool ok = dumps.size() < limits::kFlightRecorderDumps && read_dump(of.fd, path, host, d, n, why);
            close(of.fd);
            if (!ok) {
              if (why.empty()) why = limits::exceeded("flight_recorder_dumps", limits::kFlightRecorderDumps, "dumps for this attempt");
              rep.errors.push_back(fmt::format("{}: not read: {}", escape_for_terminal(path), why));
              continue;
            }
            dumps.add(std::move(d));
            covered.insert(host);
            bytes += n;
            continue;
          }
          if (source == "ras" && src->format != "gzip" && is_ras_json(of.fd)) {
            // One JSON document, read whole and rendered as the report's lines.
            std::string data, why;
            bool ok = read_whole(of.fd, limits::kRasReportBytes, "ras_report_bytes", data, why) &&
                      read_nccl_ras_json(data, host, path, context_world_size(a.context), out.observations, why);
            close(of.fd);
            if (!ok) {
              rep.errors.push_back(fmt::format("{}: not read: {}", escape_for_terminal(path), why));
              continue;
            }
            covered.insert(host);
            bytes += static_cast<int64_t>(data.size());
            continue;
          }
          bool gz = src->format == "gzip" || (src->format == "auto" && is_gzip(of.fd));
          size_t files_before = out.files.size();
          FileResult fr = gz ? read_gzip(of.fd, path, host, source, scope, out, budget, req.stop)
                             : read_plain(of.fd, path, host, source, scope, out, budget, req.stop);
          // A file streamed whole is opened again by the scanner: by its
          // real path, which has no link to swap.
          for (size_t k = files_before; k < out.files.size(); ++k) out.files[k].path = of.real_path;
          if (!fr.error.empty()) rep.errors.push_back(fr.error);
          if (!fr.cut.empty()) {
            rep.errors.push_back(fr.cut);
            ++cuts;
          }
          if (fr.lines_truncated)
            rep.errors.push_back(limits::exceeded(
                "log_line", limits::kLogLine,
                fmt::format("{} line{} longer, kept cut to that length", fr.lines_truncated, fr.lines_truncated == 1 ? " is" : "s are"),
                path));
          if (fr.out_of_scope) ++skipped;
          if (fr.read) {
            covered.insert(host);
            bytes += fr.bytes;
          }
        }
      }
    }
    if (dumps.size())
      for (auto& o : dumps.observations([&a](int64_t r) { return std::string(rank_node(a.context, r)); })) out.observations.push_back(std::move(o));
    for (auto& f : failures) rep.errors.push_back(std::move(f));
    std::sort(rep.errors.begin(), rep.errors.end());
    for (const auto& h : covered)
      if (std::binary_search(a.context.nodes.begin(), a.context.nodes.end(), h)) rep.nodes_covered.push_back(h);
    rep.observations = static_cast<int64_t>(out.observations.size()) - obs_before;
    rep.bytes = bytes;
    out.bytes += bytes;
    out.files_out_of_scope += skipped;
    std::vector<std::string> missing;
    for (const auto& h : expected_hosts)
      if (!covered.count(h)) missing.push_back(h);
    if (req.stop && req.stop->load()) {
      rep.status = "partial";
      rep.reason = "stopped before every file was read";
    } else if (covered.empty()) {
      rep.status = rep.errors.empty() ? "empty" : "failed";
      if (refused && refused == static_cast<int64_t>(rep.errors.size()))
        rep.reason = fmt::format("nothing read: {} file{} refused (not a regular file inside the path's directory)",
                                 refused, refused == 1 ? "" : "s");
      else if (!rep.errors.empty())
        rep.reason = fmt::format("nothing could be read ({} error{})", rep.errors.size(), rep.errors.size() == 1 ? "" : "s");
      else if (skipped)
        rep.reason = fmt::format("{} file{} found, none inside the workload's window", skipped, skipped == 1 ? "" : "s");
      else
        rep.reason = fmt::format("no file matches {}", entries.front()->path);
    } else if (!missing.empty()) {
      rep.status = "partial";
      rep.reason = fmt::format("no file in the window for {} of {} hosts: {}", missing.size(), expected_hosts.size(),
                               fmt::join(missing, ", "));
    } else if (cuts) {
      // A cut is evidence left unread: it is named before other errors.
      size_t others = rep.errors.size() - static_cast<size_t>(cuts);
      rep.status = "partial";
      rep.reason = fmt::format("{} file{} cut at a limit of what one attempt may read or hold{}", cuts, cuts == 1 ? "" : "s",
                               others ? fmt::format("; {} other error{}", others, others == 1 ? "" : "s") : "");
    } else if (!rep.errors.empty()) {
      rep.status = "partial";
      rep.reason = fmt::format("{} file{} could not be read{}", rep.errors.size(), rep.errors.size() == 1 ? "" : "s",
                               refused ? fmt::format(" ({} refused)", refused) : "");
    }
    out.collectors.push_back(std::move(rep));
  }
}

// Configuration: the `collectors.files` section (blueprint/connector.h). It lives here,
// with the code that uses it, so that the connector is one file.

std::string FilesCollectorConfig::summary() const {
  return fmt::format("{} source{}", sources.size(), sources.size() == 1 ? "" : "s");
}

std::shared_ptr<ConnectorConfig> read_files_collector_config(ConfigReader& r, const YAML::Node& n) {
  auto config = std::make_shared<FilesCollectorConfig>();
  FilesCollectorConfig& out = *config;
  if (!n.IsSequence()) {
    r.error("B0103", n, "'collectors.files' must be a list of {source, path} entries");
    return config;
  }
  for (const auto& e : n) {
    FileSourceConfig f;
    f.line = e.Mark().line + 1;
    r.require(e, "collectors.files[]", {"source", "path"});
    r.map(e, "collectors.files[]", {"source", "path", "host", "format"}, [&](const std::string& k, const YAML::Node& v) {
      if (k == "source") {
        if (r.string(v, k, f.source)) {
          bool ok = true;
          for (char c : f.source) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-');
          if (!ok) r.error("B0104", v, "'source' must be a lowercase name ([a-z0-9_-]+), such as kernel or app");
        }
      } else if (k == "path") {
        if (r.string(v, k, f.path)) {
          // Check the template's placeholders now, not at the first attempt.
          static const std::vector<std::string> kVars = {"node", "job_id", "source", "date", "cluster", "user", "work_dir"};
          for (size_t i = f.path.find('{'); i != std::string::npos; i = f.path.find('{', i + 1)) {
            size_t close = f.path.find('}', i);
            std::string var = close == std::string::npos ? "" : f.path.substr(i + 1, close - i - 1);
            if (std::find(kVars.begin(), kVars.end(), var) == kVars.end()) {
              std::string near = closest_match(var, kVars).value_or("");
              r.error("B0104", v, fmt::format("unknown placeholder '{{{}}}' in 'path' (known: {{{}}}){}", var,
                                              fmt::join(kVars, "} {"),
                                              near.empty() ? "" : fmt::format("; did you mean '{{{}}}'?", near)));
            }
          }
          if (f.path.rfind("{work_dir}", 0) != 0) f.path = r.path(f.path);
        }
      } else if (k == "host") {
        if (r.string(v, k, f.host) && f.host != "{batch_node}" && !valid_host_name(f.host))
          r.error("B0104", v, fmt::format("'host' must be a host name (letters, digits, '-', '.', '_') or {{batch_node}}, not '{}'",
                                          escape_for_terminal(truncate_utf8(f.host, 64))));
      }
      else if (k == "format") r.oneof(v, k, {"auto", "plain", "gzip"}, f.format);
    });
    if (!f.path.empty() && f.path.find("{node}") == std::string::npos && f.host.empty())
      r.error("B0105", e, "a 'path' without {node} needs 'host': the (control-plane) host its lines come from");
    if (!f.path.empty() && f.path.find("{node}") != std::string::npos && !f.host.empty())
      r.error("B0104", e, "'host' applies only to a 'path' without {node}");
    if (!f.source.empty() && !f.path.empty()) out.sources.push_back(std::move(f));
  }
  return config;
}

bool make_files_collector(const ConnectorConfig& config, const ConnectorEnv&, ConnectorParts& out, std::string&) {
  const auto& c = static_cast<const FilesCollectorConfig&>(config);
  if (!c.sources.empty()) out.collector = std::make_unique<FilesCollector>(c);
  return true;
}

}  // namespace culprit::blueprint
