#include "blueprint/files_collector.h"

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

#include "base/text_util.h"
#include "base/timestamp.h"

namespace culprit::blueprint {

void Collected::merge(Collected&& o) {
  for (auto& f : o.files) files.push_back(std::move(f));
  for (auto& x : o.observations) observations.push_back(std::move(x));
  for (auto& r : o.reports) reports.push_back(std::move(r));
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

// One file's outcome.
struct FileResult {
  bool read = false;        // contributed evidence (or was empty but readable)
  bool out_of_scope = false;
  int64_t bytes = 0;
  int64_t lines = 0;
  std::string error;
};

// Keeps one line as an observation, with its provenance, and counts it.
void emit(Collected& out, FileResult& r, const std::string& host, const std::string& source, const std::string& file,
          int64_t line, int64_t offset, std::string_view text) {
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
}

// Reads the lines of [start, size) of a plain file and keeps those in scope.
FileResult read_plain_range(int fd, uint64_t size, uint64_t start, int64_t first_line, const Scope& scope,
                            const std::string& host, const std::string& source, const std::string& path,
                            Collected& out, const std::atomic<bool>* stop) {
  FileResult r;
  r.read = true;
  std::string buf, carry;
  uint64_t off = start;
  int64_t line = first_line;
  bool in_scope = false;  // the state of the last timestamped line
  bool seen_stamp = false;
  bool done = false;
  while (off < size && !done) {
    if (stop && stop->load()) break;
    if (!pread_all(fd, buf, off, std::min<uint64_t>(4u << 20, size - off))) {
      r.error = fmt::format("{}: read error: {}", path, std::strerror(errno));
      return r;
    }
    if (buf.empty()) break;
    uint64_t buf_off = off - carry.size();
    off += buf.size();
    std::string data = carry + buf;
    carry.clear();
    size_t pos = 0;
    while (pos < data.size()) {
      size_t nl = data.find('\n', pos);
      if (nl == std::string::npos && off < size) {
        carry = data.substr(pos);
        break;
      }
      size_t end = nl == std::string::npos ? data.size() : nl + 1;
      std::string_view text(data.data() + pos, end - pos);
      if (auto t = wall(text, scope.hint)) {
        seen_stamp = true;
        if (scope.after(*t)) {
          done = true;
          break;
        }
        in_scope = !scope.before(*t);
      }
      // Lines before the first stamp of the range inherit the next stamp's
      // side; since the range starts just before the scope they are kept.
      if (in_scope || !seen_stamp) {
        emit(out, r, host, source, path, line, static_cast<int64_t>(buf_off + pos), text);
      }
      ++line;
      pos = end;
    }
  }
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
                      const Scope& scope, Collected& out, const std::atomic<bool>* stop) {
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
    else r = read_plain_range(fd, size, start, line, scope, host, source, path, out, stop);
  }
  close(fd);
  return r;
}

// `fd` is open_confined's (closed here); `path` names it in evidence.
FileResult read_gzip(int fd, const std::string& path, const std::string& host, const std::string& source,
                     const Scope& scope, Collected& out, const std::atomic<bool>* stop) {
  FileResult r;
  gzFile gz = gzdopen(fd, "rb");
  if (!gz) {
    r.error = fmt::format("{}: cannot open: {}", path, std::strerror(errno));
    close(fd);
    return r;
  }
  gzbuffer(gz, 256 * 1024);
  r.read = true;
  std::string data, carry;
  std::vector<char> buf(1u << 20);
  int64_t line = 1, offset = 0;  // offsets are in the decompressed text
  bool in_scope = false, seen_stamp = false, done = false;
  struct Pending {
    int64_t line, offset;
    std::string text;
  };
  std::vector<Pending> pending;  // unstamped lines before the first stamp
  while (!done) {
    if (stop && stop->load()) break;
    int n = gzread(gz, buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int errnum = 0;
      const char* msg = gzerror(gz, &errnum);
      r.error = fmt::format("{}: gzip error: {}", path, msg ? msg : "unknown");
      break;
    }
    bool eof = n == 0;
    data = carry;
    data.append(buf.data(), static_cast<size_t>(n));
    carry.clear();
    size_t pos = 0;
    while (pos < data.size()) {
      size_t nl = data.find('\n', pos);
      if (nl == std::string::npos && !eof) {
        carry = data.substr(pos);
        break;
      }
      size_t end = nl == std::string::npos ? data.size() : nl + 1;
      std::string_view text(data.data() + pos, end - pos);
      if (auto t = wall(text, scope.hint)) {
        if (!seen_stamp) {
          seen_stamp = true;
          // Lines before a file's first stamp take the first one's time.
          if (!scope.before(*t) && !scope.after(*t))
            for (const auto& pl : pending) emit(out, r, host, source, path, pl.line, pl.offset, pl.text);
          pending.clear();
        }
        if (scope.after(*t)) {
          done = true;
          break;
        }
        in_scope = !scope.before(*t);
      }
      if (!seen_stamp) {
        pending.push_back({line, offset, std::string(text)});
        if (pending.size() >= 10000) {
          // No timestamp in the first 10,000 lines: the file cannot be
          // windowed; keep all of it (the scanner still scopes what it can).
          for (const auto& pl : pending) emit(out, r, host, source, path, pl.line, pl.offset, pl.text);
          pending.clear();
          seen_stamp = in_scope = true;
        }
      } else if (in_scope) {
        emit(out, r, host, source, path, line, offset, text);
      }
      offset += static_cast<int64_t>(text.size());
      ++line;
      pos = end;
    }
    if (eof) break;
  }
  for (const auto& pl : pending) emit(out, r, host, source, path, pl.line, pl.offset, pl.text);  // no timestamp at all: keep it
  gzclose(gz);
  return r;
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
  Scope scope{req.scope_start, req.scope_end, make_year_hint(a.start, a.end, 1970)};
  if (!a.start && !a.end) {
    auto now = std::chrono::system_clock::now();
    int year = static_cast<int>(std::chrono::year_month_day(std::chrono::floor<std::chrono::days>(now)).year());
    scope.hint = make_year_hint(std::nullopt, std::nullopt, year);
  }
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
    if (per_node) rep.nodes_expected = a.nodes;
    if (!req.wanted_sources.empty() && !req.wanted_sources.count(source)) {
      rep.status = "empty";
      rep.reason = fmt::format("not read: no extractor of the catalog reads source '{}'", source);
      out.reports.push_back(std::move(rep));
      continue;
    }
    std::set<std::string> covered, read_paths;
    int64_t obs_before = static_cast<int64_t>(out.observations.size());
    int64_t bytes = 0, skipped = 0, refused = 0;
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
      std::vector<std::string> hosts = node_path ? a.nodes : std::vector<std::string>{src->host};
      if (!node_path && src->host == "{batch_node}") {
        // The job's own output is written on its first node (Slurm's BatchHost).
        if (a.nodes.empty()) continue;
        hosts = {a.nodes.front()};
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
          // following a link out of it or blocking (blueprint/confined_path.h).
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
          bool gz = src->format == "gzip" || (src->format == "auto" && is_gzip(of.fd));
          size_t files_before = out.files.size();
          FileResult fr = gz ? read_gzip(of.fd, path, host, source, scope, out, req.stop)
                             : read_plain(of.fd, path, host, source, scope, out, req.stop);
          // A file streamed whole is opened again by the scanner: by its
          // real path, which has no link to swap.
          for (size_t k = files_before; k < out.files.size(); ++k) out.files[k].path = of.real_path;
          if (!fr.error.empty()) rep.errors.push_back(fr.error);
          if (fr.out_of_scope) ++skipped;
          if (fr.read) {
            covered.insert(host);
            bytes += fr.bytes;
          }
        }
      }
    }
    for (auto& f : failures) rep.errors.push_back(std::move(f));
    std::sort(rep.errors.begin(), rep.errors.end());
    for (const auto& h : covered)
      if (std::binary_search(a.nodes.begin(), a.nodes.end(), h)) rep.nodes_covered.push_back(h);
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
    } else if (!rep.errors.empty()) {
      rep.status = "partial";
      rep.reason = fmt::format("{} file{} could not be read{}", rep.errors.size(), rep.errors.size() == 1 ? "" : "s",
                               refused ? fmt::format(" ({} refused)", refused) : "");
    }
    out.reports.push_back(std::move(rep));
  }
}

}  // namespace culprit::blueprint
