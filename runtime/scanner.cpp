#include "runtime/scanner.h"

#include "runtime/mapped_window_guard.h"

#include <hs/hs.h>
#include <re2/filtered_re2.h>
#include <re2/re2.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <memory>

#include "runtime/interpreter.h"
#include "base/text_util.h"

namespace culprit {

namespace {

struct MatchCollector {
  const char* base = nullptr;
  std::vector<std::pair<unsigned long long, unsigned>> hits;  // (end offset, hyperscan id)
  std::vector<unsigned long long> last_end;                   // by id; coalesces repeats within a line
};

// Hyperscan reports every end offset of every match; a `.*` tail reports one
// per byte. Only the first per line matters, so repeats of an id with no
// newline since its last report are dropped here.
int on_match(unsigned int id, unsigned long long /*from*/, unsigned long long to, unsigned int, void* ctx) {
  auto* c = static_cast<MatchCollector*>(ctx);
  unsigned long long& last = c->last_end[id];
  if (last != ~0ULL && to >= last && std::memchr(c->base + last, '\n', to - last) == nullptr) return 0;
  last = to;
  c->hits.emplace_back(to, id);
  return 0;
}

// A file read as a sequence of windows: window(offset, want) makes the file's
// bytes [offset, offset + want) readable in one piece (fewer at its end).
// Offsets only move forward, and never past the previous window's end.
//
// With `map`, regular files are mapped, one window at a time: the scan then
// reads the page cache in place, where read(2) first copies every byte
// (about 7% of a scan's CPU time). Only one window is mapped at a time, so
// memory stays that of a buffer. (MAP_POPULATE was measured slower: it maps
// every page up front, where a fault maps 64 KiB around it.) Anything that
// cannot be mapped (pipes, /proc files, file systems without mmap) is read.
class FileWindows {
 public:
  // `buffer` backs read mode; it belongs to the Scanner and is reused from file
  // to file (a fresh 4 MiB vector per file was zero-filled each time, most of
  // the CPU time of many small files, and left its pages resident).
  explicit FileWindows(std::vector<char>& buffer) : buf_(buffer) {}
  FileWindows(const FileWindows&) = delete;
  FileWindows& operator=(const FileWindows&) = delete;
  ~FileWindows() {
    unmap();
    if (fd_ >= 0) ::close(fd_);
  }

  bool open(const std::string& path, bool map) {
    // O_NONBLOCK: a file replaced by a FIFO since it was listed must not
    // block the scan; only regular files are read.
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd_ < 0) return false;
    struct stat st{};
    if (::fstat(fd_, &st) != 0) return false;
    if (!S_ISREG(st.st_mode)) {
      not_regular_ = true;
      return false;
    }
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
    mapped_mode_ = map && S_ISREG(st.st_mode) && st.st_size > 0;
    if (mapped_mode_) MappedWindowGuard::install();
    size_ = static_cast<uint64_t>(st.st_size);
    return true;
  }

  // Sets `data` and `have`; false on a read error (errno set).
  bool window(uint64_t offset, size_t want, const char*& data, size_t& have) {
    if (mapped_mode_ && map_window(offset, want, data, have)) return true;
    if (mapped_mode_) {  // mapping failed: read from here on
      mapped_mode_ = false;
      unmap();
      buf_offset_ = offset;
      if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) return false;
    }
    return read_window(offset, want, data, have);
  }

 private:
  bool map_window(uint64_t offset, size_t want, const char*& data, size_t& have) {
    uint64_t end = offset + want;
    if (end > size_) {  // the file may have grown since it was opened, as a read would see
      struct stat st{};
      if (::fstat(fd_, &st) == 0) size_ = std::max<uint64_t>(size_, static_cast<uint64_t>(st.st_size));
      end = std::min(end, size_);
    }
    if (end <= offset) {
      data = nullptr;
      have = 0;
      return true;
    }
    if (!map_ || offset < map_offset_ || end > map_offset_ + map_len_) {
      unmap();
      static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
      const uint64_t from = offset / page * page;
      void* m = ::mmap(nullptr, static_cast<size_t>(end - from), PROT_READ, MAP_PRIVATE, fd_,
                       static_cast<off_t>(from));
      if (m == MAP_FAILED) return false;
      map_ = static_cast<char*>(m);
      map_offset_ = from;
      map_len_ = static_cast<size_t>(end - from);
      MappedWindowGuard::arm(map_, map_len_);
    }
    data = map_ + (offset - map_offset_);
    have = static_cast<size_t>(end - offset);
    return true;
  }

  bool read_window(uint64_t offset, size_t want, const char*& data, size_t& have) {
    if (buf_.size() < want) buf_.resize(want);
    const size_t drop = static_cast<size_t>(offset - buf_offset_);
    std::memmove(buf_.data(), buf_.data() + drop, buf_len_ - drop);
    buf_len_ -= drop;
    buf_offset_ = offset;
    while (buf_len_ < want) {
      ssize_t got = ::read(fd_, buf_.data() + buf_len_, want - buf_len_);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return false;
      if (got == 0) break;
      buf_len_ += static_cast<size_t>(got);
    }
    data = buf_.data();
    have = buf_len_;
    return true;
  }

  void unmap() {
    if (!map_) return;
    note_fault();
    MappedWindowGuard::disarm();
    ::munmap(map_, map_len_);
    map_ = nullptr;
  }
  void note_fault() {
    if (map_ && MappedWindowGuard::take_fault()) shrank_ = true;
  }

 public:
  bool not_regular() const { return not_regular_; }
  // True when the file shrank under a mapped window while it was read (its
  // missing bytes were read as NULs, see MappedWindowGuard).
  bool shrank() {
    note_fault();
    return shrank_;
  }

 private:
  bool shrank_ = false;
  bool not_regular_ = false;

  int fd_ = -1;
  bool mapped_mode_ = false;
  uint64_t size_ = 0;
  char* map_ = nullptr;  // the mapped window: file bytes [map_offset_, map_offset_ + map_len_)
  uint64_t map_offset_ = 0;
  size_t map_len_ = 0;
  std::vector<char>& buf_;  // read mode: file bytes [buf_offset_, buf_offset_ + buf_len_)
  uint64_t buf_offset_ = 0;
  size_t buf_len_ = 0;
};

// How many lines from each end of a buffer are tried for a timestamp.
constexpr int kEdgeLines = 64;
// How far a line without a timestamp looks ahead for one at the start of a file.
constexpr int kLookAheadLines = 1024;

}  // namespace

class Scanner::Stream {
 public:
  Stream(Scanner& scanner, ScanResult& result, const ScanOptions& opt)
      : scanner_(scanner), program_(*scanner.program_), result_(result), opt_(opt),
        db_(program_.database_for(result.source)) {
    if (!db_) return;
    plan_ = &scanner.plan_for(*db_);
    // One slot per Hyperscan id: the atoms, then the unfiltered extractors.
    collector_.last_end.assign(static_cast<size_t>(db_->atom_count) + db_->unfiltered.size(), ~0ULL);
  }

  // `data` holds whole lines separated by '\n' (the last may lack it).
  //
  // The work after Hyperscan is proportional to the hits, not the bytes,
  // except for one vectorized pass that counts newlines and spots non-ASCII
  // bytes. Hits are grouped by line with a forward search to the line's end;
  // the atoms of a line turn into extractors (mostly from the plan's
  // per-atom cache), and only a line with extractors is located exactly: its
  // start, its number (newlines are counted from the previous such line),
  // its time.
  // Scope is counted in bulk from the buffer's first and last timestamps
  // (logs are written in time order, so a buffer whose first and last stamps
  // are both inside or both outside the scope is wholly so; only a buffer
  // that straddles a bound, or runs backwards, is parsed line by line).
  void chunk(const char* data, size_t len, int64_t base_offset) {
    result_.bytes += static_cast<int64_t>(len);
    if (len == 0) return;
    collector_.hits.clear();
    if (db_) {
      collector_.base = data;
      std::fill(collector_.last_end.begin(), collector_.last_end.end(), ~0ULL);
      hs_scan(db_->db, data, static_cast<unsigned>(len), 0, scanner_.scratch_, on_match, &collector_);
      // Hyperscan reports in end-offset order nearly always; sort only when it did not.
      auto by_end = [](const auto& a, const auto& b) { return a.first < b.first; };
      if (!std::is_sorted(collector_.hits.begin(), collector_.hits.end(), by_end))
        std::stable_sort(collector_.hits.begin(), collector_.hits.end(), by_end);
    }
    const int64_t first_line = line_no_ + 1;
    std::optional<int64_t> t_first = edge_time(data, len, true), t_last = edge_time(data, len, false);
    account_scope(data, len, t_first, t_last);
    // Events waiting for the first time of the file get the first stamp here.
    if (t_first && !pending_leading_.empty()) resolve_leading(*t_first);

    known_pos_ = 0;                // inheritance within this buffer starts from the previous one's time
    known_time_ = last_wall_;
    bool non_ascii = false;
    size_t counted = 0;            // newlines counted up to here
    int64_t line_no = first_line;
    const auto& hits = collector_.hits;
    for (size_t h = 0; h < hits.size();) {
      size_t p = std::min<size_t>(hits[h].first - 1, len - 1);
      // The line holding byte p: a hit on the '\n' itself belongs to the line it ends.
      const char* nl = static_cast<const char*>(std::memchr(data + p, '\n', len - p));
      size_t end = nl ? static_cast<size_t>(nl - data) : len;
      size_t first_hit = h;
      while (h < hits.size() && hits[h].first - 1 <= end) ++h;
      candidates(first_hit, h, ids_);
      if (ids_.empty()) continue;
      const void* prev = p > 0 ? memrchr(data, '\n', p) : nullptr;
      size_t start = prev ? static_cast<size_t>(static_cast<const char*>(prev) - data) + 1 : 0;
      line_no += static_cast<int64_t>(count_newlines(std::string_view(data + counted, start - counted), &non_ascii));
      counted = start;
      candidate_line(std::string_view(data + start, end - start), line_no, base_offset + static_cast<int64_t>(start), ids_, data,
                     start, len);
    }
    const int64_t newlines =
        (line_no - first_line) + static_cast<int64_t>(count_newlines(std::string_view(data + counted, len - counted), &non_ascii));
    const int64_t lines = newlines + (data[len - 1] != '\n' ? 1 : 0);
    result_.lines += lines;
    // A pure-ASCII buffer (the usual case) needs no per-line UTF-8 check.
    if (non_ascii) count_invalid_utf8(data, len);
    line_no_ += lines;
    if (t_last) learn_wall(*t_last);
  }

  // One line from memory, scanned on its own.
  void single(std::string_view text, int64_t line_no, std::optional<int64_t> forced_ts, int64_t offset = 0,
              bool terminated = false) {
    result_.bytes += static_cast<int64_t>(text.size()) + (terminated ? 1 : 0);
    std::vector<int32_t> ids;
    if (db_) {
      collector_.hits.clear();
      collector_.base = text.data();
      std::fill(collector_.last_end.begin(), collector_.last_end.end(), ~0ULL);
      hs_scan(db_->db, text.data(), static_cast<unsigned>(text.size()), 0, scanner_.scratch_, on_match, &collector_);
      candidates(0, collector_.hits.size(), ids);
    }
    line_no_ = line_no;
    line(text, line_no, offset, ids, forced_ts);
  }

  void set_line_number(int64_t n) { line_no_ = n; }

  void finish() {
    for (size_t idx : pending_boot_) {  // never anchored: order only
      result_.events[idx].where.ts.reset();
      result_.events[idx].where.ts_origin.clear();
    }
    // Events kept only when inside the scope; those without a time stay.
    std::vector<Event> kept;
    kept.reserve(result_.events.size());
    for (auto& e : result_.events) {
      if (!e.where.ts) ++result_.events_without_time;
      if (e.where.ts && !in_scope(*e.where.ts)) {
        ++result_.events_out_of_scope;
        continue;
      }
      kept.push_back(std::move(e));
    }
    result_.events = std::move(kept);
  }

  int64_t line_no_ = 0;

 private:
  bool in_scope(int64_t t) const {
    return (!opt_.scope_start || t >= *opt_.scope_start) && (!opt_.scope_end || t <= *opt_.scope_end);
  }

  void learn_wall(int64_t t) {
    last_wall_ = t;
    resolve_leading(t);
  }

  // Events that came before any time in the file take the first one after them.
  void resolve_leading(int64_t t) {
    for (size_t idx : pending_leading_) {
      result_.events[idx].where.ts = t;
      result_.events[idx].where.ts_origin = "inherited";
    }
    pending_leading_.clear();
  }

  void line(std::string_view text, int64_t line_no, int64_t offset, const std::vector<int32_t>& ids,
            std::optional<int64_t> forced_ts) {
    ++result_.lines;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    bool truncated = text.size() > opt_.max_line;
    if (truncated) {
      ++result_.lines_truncated;
      text = text.substr(0, opt_.max_line);
    }
    if (!is_valid_utf8(text)) ++result_.lines_invalid_utf8;

    LineTime lt = forced_ts ? LineTime{} : parse_line_time(text, opt_.year_hint);
    std::optional<int64_t> wall;
    std::string origin;
    if (forced_ts) {
      wall = forced_ts;
      origin = "observation";
    } else if (lt.has_wall) {
      wall = lt.wall_ns;
      origin = "line";
      if (lt.has_boot) {
        bool first_anchor = !anchor_;
        anchor_ = lt.wall_ns - lt.boot_ns;
        if (first_anchor) resolve_pending_boot();
      }
    } else if (lt.has_boot && anchor_) {
      wall = *anchor_ + lt.boot_ns;
      origin = "boot-anchored";
    }
    if (wall) learn_wall(*wall);
    std::optional<int64_t> effective = wall ? wall : last_wall_;
    if (effective && !in_scope(*effective)) ++result_.lines_out_of_scope;

    if (ids.empty()) return;
    emit_events(text, line_no, offset, ids, wall, origin.c_str(), lt, last_wall_);
  }

  // Runs each extractor on a line and keeps the events it emits, with their
  // provenance and time: the line's own (`wall`), its boot seconds until the
  // file is anchored, the time it inherits, or none yet (resolved by the
  // first time that follows).
  void emit_events(std::string_view text, int64_t line_no, int64_t offset, const std::vector<int32_t>& ids,
                   std::optional<int64_t> wall, const char* origin, const LineTime& lt, std::optional<int64_t> inherited) {
    // A line can be flagged for the same extractor more than once; emit once
    // per extractor, in id order.
    std::vector<int32_t> unique_ids(ids);
    std::sort(unique_ids.begin(), unique_ids.end());
    unique_ids.erase(std::unique(unique_ids.begin(), unique_ids.end()), unique_ids.end());
    for (int32_t x : unique_ids) {
      Event ev;
      if (!extract(x, text, ev)) continue;
      if (result_.events.size() >= opt_.max_events_per_file) {
        ++result_.events_over_cap;
        continue;
      }
      ev.host = result_.host;
      ev.control_plane = result_.control_plane;
      ev.where.host = result_.host;
      ev.where.source = result_.source;
      ev.where.file = result_.file;
      ev.where.line = line_no;
      ev.where.offset = offset;
      // Evidence text must be printable, valid UTF-8 whatever the log held.
      ev.where.text = truncate_utf8(sanitize_utf8(text), opt_.max_text);
      if (wall) {
        ev.where.ts = wall;
        ev.where.ts_origin = origin;
      } else if (lt.has_boot) {
        ev.where.ts = lt.boot_ns;  // provisional: boot-relative until anchored
        pending_boot_.push_back(result_.events.size());
      } else if (inherited) {
        ev.where.ts = inherited;
        ev.where.ts_origin = "inherited";
      } else {
        pending_leading_.push_back(result_.events.size());
      }
      result_.events.push_back(std::move(ev));
    }
  }

  // The wall time a line carries: its own stamp, or its boot seconds once the
  // file has an anchor. Learns the anchor from a line that carries both.
  std::optional<int64_t> own_time(std::string_view text) {
    LineTime lt = parse_line_time(text, opt_.year_hint);
    if (lt.has_wall) {
      if (lt.has_boot) learn_anchor(lt.wall_ns - lt.boot_ns);
      return lt.wall_ns;
    }
    if (lt.has_boot && anchor_) return *anchor_ + lt.boot_ns;
    return std::nullopt;
  }

  void learn_anchor(int64_t anchor) {
    bool first = !anchor_;
    anchor_ = anchor;
    if (first) resolve_pending_boot();
  }

  // The first (or last) time among the first (or last) kEdgeLines lines.
  std::optional<int64_t> edge_time(const char* data, size_t len, bool from_start) {
    size_t pos = from_start ? 0 : len;
    for (int n = 0; n < kEdgeLines; ++n) {
      size_t b, e;
      if (from_start) {
        if (pos >= len) break;
        const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', len - pos));
        b = pos;
        e = nl ? static_cast<size_t>(nl - data) : len;
        pos = e + 1;
      } else {
        if (pos == 0) break;
        e = (data[pos - 1] == '\n') ? pos - 1 : pos;
        const void* q = e > 0 ? memrchr(data, '\n', e) : nullptr;
        b = q ? static_cast<size_t>(static_cast<const char*>(q) - data) + 1 : 0;
        pos = b;
      }
      if (auto t = own_time(std::string_view(data + b, e - b))) return t;
    }
    return std::nullopt;
  }

  void account_scope(const char* data, size_t len, std::optional<int64_t> t_first, std::optional<int64_t> t_last) {
    if (!opt_.scope_start && !opt_.scope_end) return;
    if (t_first && t_last && *t_first <= *t_last) {
      if (in_scope(*t_first) && in_scope(*t_last)) return;
      bool before = opt_.scope_start && *t_last < *opt_.scope_start;
      bool after = opt_.scope_end && *t_first > *opt_.scope_end;
      if (before || after) {
        result_.lines_out_of_scope +=
            static_cast<int64_t>(count_newlines(std::string_view(data, len))) + (data[len - 1] != '\n' ? 1 : 0);
        return;
      }
    }
    // Straddles a bound, runs backwards or has no time at its edges: every line.
    std::optional<int64_t> running = last_wall_;
    for (size_t pos = 0; pos < len;) {
      const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', len - pos));
      size_t e = nl ? static_cast<size_t>(nl - data) : len;
      if (auto t = own_time(std::string_view(data + pos, e - pos))) running = t;
      if (running && !in_scope(*running)) ++result_.lines_out_of_scope;
      pos = e + 1;
    }
  }

  void count_invalid_utf8(const char* data, size_t len) {
    for (size_t pos = 0; pos < len;) {
      const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', len - pos));
      size_t e = nl ? static_cast<size_t>(nl - data) : len;
      std::string_view line(data + pos, e - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (!is_valid_utf8(line.substr(0, std::min(line.size(), opt_.max_line)))) ++result_.lines_invalid_utf8;
      pos = e + 1;
    }
  }

  // Hyperscan hits [first, last) of one line -> the extractors that may match
  // it: atom hits go through FilteredRE2 (with the atoms not scanned for
  // taken as present), unfiltered extractors hit directly. A line with a single distinct atom
  // (most hit lines) is answered from the plan's per-atom cache, because
  // FilteredRE2 allocates on every call.
  void candidates(size_t first, size_t last, std::vector<int32_t>& ids) {
    ids.clear();
    atoms_.clear();
    for (size_t k = first; k < last; ++k) {
      auto id = static_cast<int32_t>(collector_.hits[k].second);
      if (id < db_->atom_count) atoms_.push_back(db_->atom_index[static_cast<size_t>(id)]);
      else ids.push_back(db_->extractors[static_cast<size_t>(db_->unfiltered[static_cast<size_t>(id - db_->atom_count)])]);
    }
    if (!atoms_.empty()) {
      std::sort(atoms_.begin(), atoms_.end());
      atoms_.erase(std::unique(atoms_.begin(), atoms_.end()), atoms_.end());
      if (atoms_.size() == 1) {
        const auto& solo = scanner_.solo_potentials(*plan_, atoms_[0]);
        if (ids.empty()) {
          ids = solo;  // already sorted and unique
          return;
        }
        ids.insert(ids.end(), solo.begin(), solo.end());
      } else {
        scanner_.potentials(*plan_, atoms_, ids);
      }
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }

  // The time a line without its own inherits: the nearest stamp before it in
  // this buffer, else the time carried in from earlier buffers. Each byte is
  // looked at once per buffer (known_pos_ only moves forward).
  std::optional<int64_t> time_before(const char* data, size_t start) {
    size_t pos = start;
    while (pos > known_pos_) {
      size_t e = pos - 1;  // the '\n' ending the previous line
      const void* q = e > 0 ? memrchr(data, '\n', e) : nullptr;
      size_t b = q ? static_cast<size_t>(static_cast<const char*>(q) - data) + 1 : 0;
      if (b < known_pos_) break;
      if (auto t = own_time(std::string_view(data + b, e - b))) {
        known_time_ = t;
        break;
      }
      pos = b;
    }
    known_pos_ = start;
    return known_time_;
  }

  std::optional<int64_t> time_after(const char* data, size_t from, size_t len) {
    size_t pos = from;
    for (int n = 0; n < kLookAheadLines && pos < len; ++n) {
      const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', len - pos));
      size_t e = nl ? static_cast<size_t>(nl - data) : len;
      if (auto t = own_time(std::string_view(data + pos, e - pos))) return t;
      pos = e + 1;
    }
    return std::nullopt;
  }

  void candidate_line(std::string_view raw, int64_t line_no, int64_t offset, const std::vector<int32_t>& ids,
                      const char* data, size_t start, size_t len) {
    std::string_view text = raw;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.size() > opt_.max_line) {
      ++result_.lines_truncated;
      text = text.substr(0, opt_.max_line);
    }
    LineTime lt = parse_line_time(text, opt_.year_hint);
    std::optional<int64_t> wall;
    const char* origin = "line";
    if (lt.has_wall) {
      wall = lt.wall_ns;
      if (lt.has_boot) learn_anchor(lt.wall_ns - lt.boot_ns);
    } else if (lt.has_boot && anchor_) {
      wall = *anchor_ + lt.boot_ns;
      origin = "boot-anchored";
    }
    std::optional<int64_t> inherited;
    if (!wall && !lt.has_boot) {
      inherited = time_before(data, start);
      if (!inherited) inherited = time_after(data, start + raw.size() + 1, len);
    }
    if (wall) known_time_ = wall;
    known_pos_ = std::min(len, start + raw.size() + 1);
    emit_events(text, line_no, offset, ids, wall, origin, lt, inherited);
  }

  void resolve_pending_boot() {
    for (size_t idx : pending_boot_) {
      auto& e = result_.events[idx];
      e.where.ts = *anchor_ + *e.where.ts;
      e.where.ts_origin = "boot-anchored";
    }
    pending_boot_.clear();
  }

  bool extract(int32_t x, std::string_view text, Event& ev) {
    const auto& cat = program_.catalog();
    const auto& ex = cat.extractors[static_cast<size_t>(x)];
    const RE2& re = program_.extractor_regex(x);
    int n = re.NumberOfCapturingGroups();
    groups_.assign(static_cast<size_t>(n) + 1, re2::StringPiece());
    if (!re.Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), RE2::UNANCHORED, groups_.data(), n + 1))
      return false;
    captures_.assign(static_cast<size_t>(n), std::nullopt);
    for (int i = 0; i < n; ++i)
      if (groups_[static_cast<size_t>(i) + 1].data() != nullptr)
        captures_[static_cast<size_t>(i)] = std::string_view(groups_[static_cast<size_t>(i) + 1].data(), groups_[static_cast<size_t>(i) + 1].size());
    ev.kind = ex.kind;
    ev.producer = ex.name;
    ev.fields.assign(cat.event_kinds[static_cast<size_t>(ex.kind)].fields.size(), Value::null());
    Env env;
    env.catalog = &cat;
    env.regexes = &program_.expression_regexes();
    env.captures = &captures_;
    env.native = program_.native();
    env.slots.resize(1);
    for (const auto& f : ex.fields) {
      Value v = run_expression(f.value, env);
      if (v.type == Type::String && !is_valid_utf8(v.s)) v.s = sanitize_utf8(v.s);
      ev.fields[static_cast<size_t>(f.slot)] = std::move(v);
    }
    return true;
  }

  Scanner& scanner_;
  const Program& program_;
  ScanResult& result_;
  const ScanOptions& opt_;
  const Program::SourceDatabase* db_;
  SourcePlan* plan_ = nullptr;
  MatchCollector collector_;
  std::vector<int32_t> ids_;              // extractors of the current candidate line
  size_t known_pos_ = 0;                  // lines before this offset of the buffer were examined for time
  std::optional<int64_t> known_time_;     // the latest time among them (or carried in)
  std::vector<int> atoms_;
  std::optional<int64_t> last_wall_, anchor_;
  std::vector<size_t> pending_leading_, pending_boot_;
  std::vector<re2::StringPiece> groups_;
  std::vector<std::optional<std::string_view>> captures_;
};

Scanner::SourcePlan& Scanner::plan_for(const Program::SourceDatabase& db) {
  for (auto& p : plans_)
    if (p->db == &db) return *p;
  auto plan = std::make_unique<SourcePlan>();
  plan->db = &db;
  plan->solo.resize(db.atoms.size());
  plans_.push_back(std::move(plan));
  return *plans_.back();
}

void Scanner::potentials(SourcePlan& plan, const std::vector<int>& atoms, std::vector<int32_t>& ids) {
  const auto& db = *plan.db;
  query_.clear();
  std::merge(atoms.begin(), atoms.end(), db.implied_atoms.begin(), db.implied_atoms.end(), std::back_inserter(query_));
  db.filter->AllPotentials(query_, &found_);
  for (int local : found_) {
    // Unfiltered extractors always "pass" the filter; they count only on their own hits.
    if (std::binary_search(db.unfiltered.begin(), db.unfiltered.end(), local)) continue;
    ids.push_back(db.extractors[static_cast<size_t>(local)]);
  }
}

const std::vector<int32_t>& Scanner::solo_potentials(SourcePlan& plan, int atom) {
  auto& entry = plan.solo[static_cast<size_t>(atom)];
  if (!entry) {
    std::vector<int32_t> ids;
    potentials(plan, {atom}, ids);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    entry = std::move(ids);
  }
  return *entry;
}

Scanner::Scanner(std::shared_ptr<const Program> program) : program_(std::move(program)) {
  if (program_->prototype_scratch()) hs_clone_scratch(program_->prototype_scratch(), &scratch_);
}

Scanner::~Scanner() { hs_free_scratch(scratch_); }

ScanResult Scanner::scan_file(const LogFile& file, const ScanOptions& opt) {
  ScanResult r;
  r.host = file.host;
  r.source = file.source;
  r.file = file.display_path;
  r.control_plane = file.control_plane;
  FileWindows in(buffer_);
  if (!in.open(file.path, opt.map_files)) {
    r.error = "cannot open " + file.display_path + ": " + (in.not_regular() ? "not a regular file" : std::strerror(errno));
    return r;
  }
  bool cr_only = false;  // lines end in CR alone: seen in the first window
  Stream stream(*this, r, opt);
  const char* buf = nullptr;  // the window: file bytes [offset, offset + have)
  size_t have = 0;
  int64_t offset = 0;
  bool skipping = false;      // inside the unread rest of an over-long line
  for (;;) {
    // The window grows to kBufferSize bytes (fewer at the end of the file);
    // as with read(2), a step that adds no byte means the end of the file.
    size_t before = have;
    if (!in.window(static_cast<uint64_t>(offset), kBufferSize, buf, have)) {
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
    if (upto == start && have == kBufferSize && start == 0) {
      // A line longer than the whole buffer: keep its head, skip the rest.
      const size_t head = std::min(opt.max_line, have);
      stream.chunk(buf, head, offset);
      r.bytes += static_cast<int64_t>(have - head);
      ++r.lines_truncated;
      offset += static_cast<int64_t>(have);
      have = 0;
      skipping = true;
      continue;
    }
    if (upto > start) stream.chunk(buf + start, upto - start, offset + static_cast<int64_t>(start));
    offset += static_cast<int64_t>(upto);
    have -= upto;
    if (eof) break;
  }
  if (in.shrank() && r.error.empty())
    r.error = file.display_path + " shrank while it was being read (truncated in place?); its last lines may be missing";
  if (cr_only && r.error.empty())
    r.error = file.display_path +
              ": its lines end in a carriage return alone (CR, no LF), so it reads as one line and its lines are not "
              "matched; convert it (tr '\\r' '\\n')";
  stream.finish();
  return r;
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

std::vector<Event> Scanner::scan_single_line(const std::string& source, const std::string& line, int32_t only_extractor) {
  ScanOptions opt;
  auto r = scan_lines("test-host", source, "<test>", false, {line}, {1}, {}, opt);
  std::vector<Event> out;
  for (auto& e : r.events)
    if (only_extractor < 0 || e.producer == program_->catalog().extractors[static_cast<size_t>(only_extractor)].name)
      out.push_back(std::move(e));
  return out;
}

}  // namespace culprit
