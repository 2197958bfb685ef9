// The scanner's entry points (runtime/scanner.h): a file walked in the read
// windows a scan reads, scanned on this thread or with its buffers prepared
// by other threads (ScanHelpers) and applied here in file order; lines held
// in memory scanned as one stream; the Scanner's own Hyperscan scratch.
//
// The work on the bytes is elsewhere, one job per file (see
// runtime/scanner_internal.h): what a buffer yields on its own in
// runtime/scanner_window.cpp, what depends on the lines before it in
// runtime/scanner_stream.cpp. This file decides which buffers there are and
// who prepares them.

#include "runtime/scanner.h"

#include <hs/hs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>

#include "runtime/file_windows.h"
#include "runtime/scanner_internal.h"

namespace culprit {

Scanner::Scanner(std::shared_ptr<const Program> program) : program_(std::move(program)) {
  if (program_->prototype_scratch()) hs_clone_scratch(program_->prototype_scratch(), &scratch_);
}

Scanner::~Scanner() { hs_free_scratch(scratch_); }

namespace {

// Walks a file in the windows a scan reads: calls chunk(data, len, offset)
// for each run of whole lines (the head of a line longer than the window
// too), counts in `r` the bytes read but not scanned (the rest of such a
// line) and the truncated lines. Both the sequential and the split scan
// walk a file with this, so they see exactly the same buffers.
template <class Chunk>
void walk_windows(FileWindows& in, const LogFile& file, const ScanOptions& opt, ScanResult& r, Chunk&& chunk) {
  const char* buf = nullptr;  // the window: file bytes [offset, offset + have)
  size_t have = 0;
  int64_t offset = 0;
  bool skipping = false;      // inside the unread rest of an over-long line
  bool cr_only = false;       // lines end in CR alone: seen in the first window
  // How much to ask for: a read window starts at Scanner::kReadWindow and
  // doubles, up to kBufferSize, only while it holds no complete line; it is
  // always more than the unconsumed tail it starts with, so that a step that
  // adds nothing means the end of the file.
  const size_t step = in.mapped() ? Scanner::kBufferSize : Scanner::kReadWindow;
  auto first_want = [&](size_t tail) {
    size_t w = step;
    while (w <= tail && w < Scanner::kBufferSize) w *= 2;
    return std::min(w, Scanner::kBufferSize);
  };
  size_t want = step;
  for (;;) {
    // The window grows to `want` bytes (fewer at the end of the file); as
    // with read(2), a step that adds no byte means the end of the file.
    size_t before = have;
    if (!in.window(static_cast<uint64_t>(offset), want, buf, have)) {
      r.error = "read error in " + file.display_path + ": " + std::strerror(errno);
      break;
    }
    bool eof = have <= before;
    if (have == 0) break;
    if (offset == 0 && before == 0) {
      // Old Mac line ends (CR alone) make the whole file one line: say so
      // rather than lose its lines without a word.
      std::string_view head(buf, std::min<size_t>(have, 64u << 10));
      cr_only = head.find('\n') == std::string_view::npos && std::count(head.begin(), head.end(), '\r') >= 2;
    }
    size_t start = 0;
    if (skipping) {
      const char* nl = static_cast<const char*>(std::memchr(buf, '\n', have));
      if (!nl) {
        r.bytes += static_cast<int64_t>(have);  // the rest of an over-long line: read, not scanned
        offset += static_cast<int64_t>(have);
        have = 0;
        if (eof) break;
        continue;
      }
      start = static_cast<size_t>(nl - buf) + 1;
      r.bytes += static_cast<int64_t>(start);
      skipping = false;
    }
    // Process every complete line; the partial tail starts the next window.
    size_t last_nl = std::string_view(buf + start, have - start).rfind('\n');
    size_t upto = last_nl == std::string_view::npos ? start : start + last_nl + 1;
    if (eof && upto < have) upto = have;  // final line without newline
    if (upto == start && start == 0 && have == want && want < Scanner::kBufferSize) {
      want = first_want(have);  // no complete line yet: a bigger window
      continue;
    }
    if (upto == start && have == Scanner::kBufferSize && start == 0) {
      // A line longer than the whole buffer: keep its head, skip the rest.
      const size_t head = std::min(opt.max_line, have);
      chunk(buf, head, offset);
      r.bytes += static_cast<int64_t>(have - head);
      ++r.lines_truncated;
      offset += static_cast<int64_t>(have);
      have = 0;
      skipping = true;
      continue;
    }
    if (upto > start) chunk(buf + start, upto - start, offset + static_cast<int64_t>(start));
    offset += static_cast<int64_t>(upto);
    have -= upto;
    if (eof) break;
    want = first_want(have);
  }
  if (cr_only && r.error.empty())
    r.error = file.display_path +
              ": its lines end in a carriage return alone (CR, no LF), so it reads as one line and its lines are not "
              "matched; convert it (tr '\\r' '\\n')";
}

const char* const kShrankMessage = " shrank while it was being read (truncated in place?); its last lines may be missing";

}  // namespace

// One file split across threads: its buffers, prepared by whoever claims
// them (in file order), applied by the owner in file order.
struct ScanHelpers::Job {
  struct Unit {
    int64_t offset = 0;
    size_t len = 0;
    enum State : uint8_t { Free, Busy, Ready, Done } state = Free;
    Scanner::Prepared prepared;
  };
  uint64_t id = 0;         // set by publish(): distinct for every job of these helpers
  const LogFile* file = nullptr;
  const ScanOptions* opt = nullptr;
  std::vector<Unit> units;
  size_t next_claim = 0;   // units are claimed in order
  size_t consumed = 0;     // units the owner has applied
  bool fault = false;      // a helper read vanished bytes (the file shrank)
  std::string read_error;  // a helper could not read its part
};

ScanHelpers::ScanHelpers(size_t split_files) : remaining_(split_files) {}
ScanHelpers::~ScanHelpers() = default;

// At most this many buffers (read windows, mostly) are prepared and not yet
// applied (per file), so memory stays a few buffers' worth of events
// whatever the file's size.
constexpr size_t kAhead = 16;

void ScanHelpers::help(Scanner& scanner) {
  struct Reader {
    uint64_t job;
    std::unique_ptr<std::vector<char>> buffer;  // read mode (files that cannot be mapped)
    std::unique_ptr<FileWindows> in;
    std::unique_ptr<Scanner::Window> window;
  };
  std::vector<Reader> readers;  // this thread's view of each job it helped
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    Job* job = nullptr;
    for (Job* j : jobs_)
      if (j->next_claim < j->units.size() && j->next_claim < j->consumed + kAhead) {
        job = j;
        break;
      }
    if (!job) {
      if (remaining_ == 0) return;
      changed_.wait(lock);
      continue;
    }
    size_t i = job->next_claim++;
    job->units[i].state = Job::Unit::Busy;
    lock.unlock();
    auto it = std::find_if(readers.begin(), readers.end(), [&](const Reader& r) { return r.job == job->id; });
    if (it == readers.end()) {
      auto buffer = std::make_unique<std::vector<char>>();
      auto in = std::make_unique<FileWindows>(*buffer);
      readers.push_back({job->id, std::move(buffer), std::move(in), nullptr});
      it = readers.end() - 1;
      if (!it->in->open(job->file->path, job->opt->map_files, job->opt->map_min_bytes)) it->in.reset();
      it->window = std::make_unique<Scanner::Window>(scanner, job->file->source, *job->opt);
    }
    Job::Unit& u = job->units[i];
    const char* data = nullptr;
    size_t have = 0;
    bool ok = it->in && it->in->window(static_cast<uint64_t>(u.offset), u.len, data, have);
    std::string error = ok ? std::string() : "read error in " + job->file->display_path + ": " + std::strerror(errno);
    if (ok) it->window->prepare(data, std::min(have, u.len), u.prepared);
    bool shrank = it->in && it->in->shrank();
    lock.lock();
    u.state = Job::Unit::Ready;
    if (shrank) job->fault = true;
    if (!error.empty() && job->read_error.empty()) job->read_error = error;
    changed_.notify_all();
  }
}

ScanResult Scanner::scan_file(const LogFile& file, const ScanOptions& opt, ScanHelpers* helpers) {
  ScanResult r;
  r.host = file.host;
  r.source = file.source;
  r.file = file.display_path;
  r.control_plane = file.control_plane;
  FileWindows in(buffer_);
  if (!in.open(file.path, opt.map_files, opt.map_min_bytes)) {
    r.error = "cannot open " + file.display_path + ": " + (in.not_regular() ? "not a regular file" : std::strerror(errno));
    if (helpers) helpers->finished(nullptr);
    return r;
  }
  Stream stream(*this, r, opt);
  if (!helpers || !stream.scans()) {
    walk_windows(in, file, opt, r, [&](const char* data, size_t len, int64_t offset) { stream.chunk(data, len, offset); });
    if (in.shrank() && r.error.empty()) r.error = file.display_path + kShrankMessage;
    stream.finish();
    if (helpers) helpers->finished(nullptr);
    return r;
  }
  // Split: first the buffers a sequential scan would read (a quick pass:
  // only each window's end is looked at), then other threads prepare them
  // while this one applies them in order.
  ScanHelpers::Job job;
  job.file = &file;
  job.opt = &opt;
  walk_windows(in, file, opt, r, [&](const char*, size_t len, int64_t offset) {
    job.units.emplace_back();
    job.units.back().offset = offset;
    job.units.back().len = len;
  });
  helpers->publish(&job);
  FileWindows own(buffer_);  // the unit being applied (its offsets only grow)
  std::vector<char> ahead_buffer;
  FileWindows ahead(ahead_buffer);  // units this thread prepares ahead while helpers work
  bool own_ok = own.open(file.path, opt.map_files, opt.map_min_bytes), ahead_ok = ahead.open(file.path, opt.map_files, opt.map_min_bytes);
  Window window(*this, file.source, opt);
  Prepared mine;
  using Unit = ScanHelpers::Job::Unit;
  // Prepares unit j (claimed by this thread) from `from`, outside the lock.
  auto prepare_unit = [&](FileWindows& from, bool from_ok, Unit& u, Prepared& into) -> std::pair<const char*, size_t> {
    const char* data = nullptr;
    size_t have = 0;
    if (!from_ok || !from.window(static_cast<uint64_t>(u.offset), u.len, data, have)) {
      if (r.error.empty()) r.error = "read error in " + file.display_path + ": " + std::strerror(errno);
      return {nullptr, 0};
    }
    have = std::min(have, u.len);
    window.prepare(data, have, into);
    return {data, have};
  };
  for (size_t i = 0; i < job.units.size(); ++i) {
    Unit& u = job.units[i];
    bool self = false;
    {
      std::unique_lock<std::mutex> lock(helpers->mutex_);
      while (u.state != Unit::Ready) {
        if (u.state == Unit::Free) {  // nobody took it: prepare it here
          u.state = Unit::Busy;
          job.next_claim = i + 1;
          self = true;
          break;
        }
        // A helper is on it: prepare a later unit meanwhile, or wait.
        size_t j = job.next_claim;
        if (j < job.units.size() && j < job.consumed + kAhead) {
          job.next_claim = j + 1;
          job.units[j].state = Unit::Busy;
          lock.unlock();
          prepare_unit(ahead, ahead_ok, job.units[j], job.units[j].prepared);
          lock.lock();
          job.units[j].state = Unit::Ready;
          continue;
        }
        helpers->changed_.wait(lock);
      }
    }
    const char* data = nullptr;
    size_t have = 0;
    if (self) {
      std::tie(data, have) = prepare_unit(own, own_ok, u, mine);
    } else if (own_ok && own.window(static_cast<uint64_t>(u.offset), u.len, data, have)) {
      have = std::min(have, u.len);
      own.rearm();  // `ahead` may have been armed since
    } else {
      if (r.error.empty()) r.error = "read error in " + file.display_path + ": " + std::strerror(errno);
      data = nullptr;
      have = 0;
    }
    if (data) stream.consume(data, have, u.offset, self ? mine : u.prepared);
    std::lock_guard<std::mutex> lock(helpers->mutex_);
    u.state = Unit::Done;
    u.prepared = Prepared();  // its events moved out; give the rest back
    job.consumed = i + 1;
    helpers->changed_.notify_all();
  }
  helpers->finished(&job);
  if ((in.shrank() || own.shrank() || ahead.shrank() || job.fault) && r.error.empty()) r.error = file.display_path + kShrankMessage;
  if (!job.read_error.empty() && r.error.empty()) r.error = job.read_error;
  stream.finish();
  return r;
}

void ScanHelpers::publish(Job* job) {
  std::lock_guard<std::mutex> lock(mutex_);
  job->id = ++published_;
  jobs_.push_back(job);
  changed_.notify_all();
}

void ScanHelpers::finished(Job* job) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Every unit of the job was applied, so no helper is still reading it.
  if (job) jobs_.erase(std::remove(jobs_.begin(), jobs_.end(), job), jobs_.end());
  if (remaining_ > 0) --remaining_;
  changed_.notify_all();
}

ScanResult Scanner::scan_lines(const std::string& host, const std::string& source, const std::string& display_file,
                               bool control_plane, const std::vector<std::string>& lines,
                               const std::vector<int64_t>& line_numbers,
                               const std::vector<std::optional<int64_t>>& times, const ScanOptions& opt,
                               const std::vector<int64_t>& offsets) {
  ScanResult r;
  r.host = host;
  r.source = source;
  r.file = display_file;
  r.control_plane = control_plane;
  Stream stream(*this, r, opt);
  std::string joined;  // only for the rare line with a newline inside it
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view text = lines[i];
    bool terminated = !text.empty() && text.back() == '\n';
    if (terminated) text.remove_suffix(1);
    if (text.find('\n') != std::string_view::npos) {
      joined.assign(text);
      std::replace(joined.begin(), joined.end(), '\n', ' ');
      text = joined;
    }
    stream.single(text, i < line_numbers.size() ? line_numbers[i] : static_cast<int64_t>(i) + 1,
                  i < times.size() ? times[i] : std::nullopt, i < offsets.size() ? offsets[i] : 0, terminated);
  }
  stream.finish();
  return r;
}

std::vector<int32_t> Scanner::candidate_extractors(const std::string& source, std::string_view line) {
  ScanOptions opt;
  Window window(*this, source, opt);
  std::vector<int32_t> ids;
  window.single_candidates(line, ids);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::vector<Event> Scanner::scan_single_line(const std::string& source, const std::string& line, int32_t only_extractor) {
  ScanOptions opt;
  opt.verify_captures = true;  // inline tests check the fast capture path against RE2
  auto r = scan_lines("test-host", source, "<test>", false, {line}, {1}, {}, opt);
  std::vector<Event> out;
  for (auto& e : r.events)
    if (only_extractor < 0 || e.producer == program_->catalog().extractors[static_cast<size_t>(only_extractor)].name)
      out.push_back(std::move(e));
  return out;
}

void settle_srun_collected_output(std::vector<ScanResult>& results) {
  std::set<std::string> own_app;  // nodes with an application file of their own
  for (const auto& r : results)
    if (r.source == "app" && r.lines > 0 && !r.control_plane) own_app.insert(r.host);
  for (auto& r : results) {
    if (r.srun_reported_nodes.empty()) continue;
    const bool collected = std::none_of(r.srun_reported_nodes.begin(), r.srun_reported_nodes.end(),
                                        [&](const std::string& n) { return own_app.count(n) > 0; });
    if (collected) {
      r.combined_output = true;
    } else if (r.events_unplaced > 0) {
      for (auto& e : r.events) e.unplaced = false;
      r.events_unplaced = 0;
    }
  }
}

}  // namespace culprit
