#include "runtime/scanner.h"

#include "base/checked_int.h"

#include "runtime/file_windows.h"

#include <hs/hs.h>
#include <re2/filtered_re2.h>
#include <re2/re2.h>

#include <algorithm>
#include <map>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <tuple>

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

// How many lines from each end of a buffer are tried for a timestamp.
constexpr int kEdgeLines = 64;
// How far a line without a timestamp looks ahead for one at the start of a file.
constexpr int kLookAheadLines = 1024;

// A line's time, with dmesg -T stamps moved from the host's local time to UTC.
LineTime line_time(std::string_view text, const ScanOptions& opt) {
  LineTime lt = parse_line_time(text, opt.year_hint);
  if (lt.dmesg_local && lt.has_wall) lt.wall_ns -= opt.dmesg_offset_ns;
  return lt;
}

}  // namespace

// What scanning one buffer yields before anything about the rest of its
// file is known: its candidate lines with the events their extractors
// emitted (kind, producer, fields, text), where each line is, and its line
// and byte counts. Computing it is most of a scan (Hyperscan, the filter,
// RE2, field values), and it depends only on the buffer, so another thread
// may compute it (Scanner::Window); what depends on the lines before it
// (line numbers, inherited times, boot anchoring, scope) is applied after,
// in file order (Stream::consume).
struct Scanner::Prepared {
  struct Line {
    size_t start = 0, end = 0;  // bytes of the line in the buffer, without '\n'
    int64_t newlines_before = 0;  // in the buffer, before `start`
    bool truncated = false;       // longer than ScanOptions::max_line
    LineTime lt;                  // its own timestamp, parsed
    size_t first_event = 0, events = 0;  // into `events`
  };
  std::vector<Line> lines;
  std::vector<Event> events;  // kind, producer, fields and where.text set
  std::vector<int32_t> extractors;  // by event: the extractor that emitted it
  int64_t newlines = 0;
  int64_t invalid_utf8 = 0;
  void clear() {
    lines.clear();
    events.clear();
    extractors.clear();
    newlines = invalid_utf8 = 0;
  }
};

// The stateless part of a scan for one source, on one Scanner (its
// Hyperscan scratch and filter caches): buffers -> Prepared.
class Scanner::Window {
 public:
  Window(Scanner& scanner, const std::string& source, const ScanOptions& opt)
      : scanner_(scanner), program_(*scanner.program_), opt_(opt), db_(program_.database_for(source)) {
    if (!db_) return;
    plan_ = &scanner.plan_for(*db_);
    // One slot per Hyperscan id: the atoms, then the unfiltered extractors.
    collector_.last_end.assign(static_cast<size_t>(db_->atom_count) + db_->unfiltered.size(), ~0ULL);
  }

  bool has_database() const { return db_ != nullptr; }

  // `data` holds whole lines separated by '\n' (the last may lack it).
  //
  // The work after Hyperscan is proportional to the hits, not the bytes,
  // except for one vectorized pass that counts newlines and spots non-ASCII
  // bytes. Hits are grouped by line with a forward search to the line's end;
  // the atoms of a line turn into extractors (mostly from the plan's
  // per-atom cache), and only a line with extractors is located exactly: its
  // start and its number (newlines are counted from the previous such line).
  void prepare(const char* data, size_t len, Prepared& out) {
    out.clear();
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
    bool non_ascii = false;
    size_t counted = 0;  // newlines counted up to here
    int64_t newlines = 0;
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
      newlines += static_cast<int64_t>(count_newlines(std::string_view(data + counted, start - counted), &non_ascii));
      counted = start;
      Prepared::Line line;
      line.start = start;
      line.end = end;
      line.newlines_before = newlines;
      std::string_view text(data + start, end - start);
      if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
      if (text.size() > opt_.max_line) {
        line.truncated = true;
        text = text.substr(0, opt_.max_line);
      }
      line.lt = line_time(text, opt_);
      line.first_event = out.events.size();
      extract_all(text, ids_, out.events, out.extractors);
      line.events = out.events.size() - line.first_event;
      out.lines.push_back(line);
    }
    out.newlines = newlines + static_cast<int64_t>(count_newlines(std::string_view(data + counted, len - counted), &non_ascii));
    // A pure-ASCII buffer (the usual case) needs no per-line UTF-8 check.
    if (non_ascii) out.invalid_utf8 = count_invalid_utf8(data, len);
  }

  // The extractors that may match a line held in memory on its own.
  void single_candidates(std::string_view text, std::vector<int32_t>& ids) {
    ids.clear();
    if (!db_) return;
    collector_.hits.clear();
    collector_.base = text.data();
    std::fill(collector_.last_end.begin(), collector_.last_end.end(), ~0ULL);
    hs_scan(db_->db, text.data(), static_cast<unsigned>(text.size()), 0, scanner_.scratch_, on_match, &collector_);
    candidates(0, collector_.hits.size(), ids);
  }

  // Runs each extractor of `ids` on `text` (its own '\r' and length cut
  // already) and appends the events they emit, once per extractor, in id
  // order (a line can be flagged for one extractor more than once), each
  // with its evidence text (printable, valid UTF-8 whatever the log held);
  // `from` gets each event's extractor.
  void extract_all(std::string_view text, const std::vector<int32_t>& ids, std::vector<Event>& out,
                   std::vector<int32_t>& from) {
    std::vector<int32_t>& unique_ids = unique_ids_;
    unique_ids.assign(ids.begin(), ids.end());
    std::sort(unique_ids.begin(), unique_ids.end());
    unique_ids.erase(std::unique(unique_ids.begin(), unique_ids.end()), unique_ids.end());
    // The evidence text is made once per line and shared by its events; a
    // clean line (nearly all) is copied straight from the read window.
    SharedString line;
    for (int32_t x : unique_ids) {
      Event ev;
      if (!extract(x, text, ev)) continue;
      if (line.empty() && !text.empty()) {
        if (is_clean_text(text)) {
          line = text.size() > opt_.max_text ? SharedString(truncate_utf8(text, opt_.max_text)) : SharedString(text);
        } else {
          std::string fixed = sanitize_utf8(text);
          line = fixed.size() > opt_.max_text ? SharedString(truncate_utf8(fixed, opt_.max_text)) : SharedString(fixed);
        }
      }
      ev.where.text = line;
      out.push_back(std::move(ev));
      from.push_back(x);
    }
  }

 private:
  int64_t count_invalid_utf8(const char* data, size_t len) const {
    int64_t n = 0;
    for (size_t pos = 0; pos < len;) {
      const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', len - pos));
      size_t e = nl ? static_cast<size_t>(nl - data) : len;
      std::string_view line(data + pos, e - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (!is_valid_utf8(line.substr(0, std::min(line.size(), opt_.max_line)))) ++n;
      pos = e + 1;
    }
    return n;
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
        scanner_.multi_potentials(*plan_, atoms_, ids);
      }
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }

  bool extract(int32_t x, std::string_view text, Event& ev) {
    const auto& cat = program_.catalog();
    const auto& ex = cat.extractors[static_cast<size_t>(x)];
    const CaptureRegex& re = program_.extractor_capture(x);
    const int n = re.groups();
    groups_.assign(static_cast<size_t>(n) + 1, re2::StringPiece());
    scanner_.capture_scratch_.verify = opt_.verify_captures;
    if (!re.match(text, scanner_.capture_scratch_, groups_.data(), n + 1)) return false;
    captures_.assign(static_cast<size_t>(n), std::nullopt);
    for (int i = 0; i < n; ++i)
      if (groups_[static_cast<size_t>(i) + 1].data() != nullptr)
        captures_[static_cast<size_t>(i)] = std::string_view(groups_[static_cast<size_t>(i) + 1].data(), groups_[static_cast<size_t>(i) + 1].size());
    ev.kind = ex.kind;
    ev.producer = ex.name;
    ev.fields.assign(cat.event_kinds[static_cast<size_t>(ex.kind)].fields.size(), Value::null());
    Env& env = field_env_;  // kept across events: its slots need not be allocated for each
    if (!env.catalog) {
      env.catalog = &cat;
      env.regexes = &program_.expression_regexes();
      env.captures = &captures_;
      env.native = program_.native();
      env.slots.resize(1);
    }
    for (const auto& f : ex.fields) {
      Value v = run_expression(f.value, env);
      if (v.type == Type::String && !is_valid_utf8(v.s)) v.s = sanitize_utf8(v.s);
      ev.fields[static_cast<size_t>(f.slot)] = std::move(v);
    }
    return true;
  }

  Scanner& scanner_;
  const Program& program_;
  const ScanOptions& opt_;
  const Program::SourceDatabase* db_;
  SourcePlan* plan_ = nullptr;
  MatchCollector collector_;
  std::vector<int32_t> ids_;         // extractors of the current candidate line
  std::vector<int> atoms_;
  std::vector<re2::StringPiece> groups_;
  std::vector<std::optional<std::string_view>> captures_;
  std::vector<int32_t> unique_ids_;  // extract_all(): scratch
  Env field_env_;                    // extract(): evaluates field values
};

// One file (or stream) scanned in order: what depends on the lines before a
// line (its number, an inherited time, boot anchoring, scope) is decided
// here, buffer after buffer, from what a Window prepared.
class Scanner::Stream {
 public:
  Stream(Scanner& scanner, ScanResult& result, const ScanOptions& opt)
      : scanner_(scanner), program_(*scanner.program_), result_(result), opt_(opt), window_(scanner, result.source, opt),
        host_(result.host), source_(result.source), file_(result.file), prepared_(std::move(scanner.spare_prepared_)) {
    if (!prepared_) prepared_ = std::make_unique<Prepared>();
  }
  // The buffers go back to the Scanner for its next file: a bundle of many
  // small files grew (and moved the events of) a fresh one per file.
  ~Stream() {
    prepared_->clear();
    scanner_.spare_prepared_ = std::move(prepared_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Whether this file's source has extractors at all (else nothing to split).
  bool scans() const { return window_.has_database(); }

  // Scans one buffer (see Window::prepare) and applies it.
  void chunk(const char* data, size_t len, int64_t base_offset) {
    window_.prepare(data, len, *prepared_);
    consume(data, len, base_offset, *prepared_);
  }

  // Applies what was prepared from exactly these bytes, in file order.
  // Scope is counted in bulk from the buffer's first and last timestamps
  // (logs are written in time order, so a buffer whose first and last stamps
  // are both inside or both outside the scope is wholly so; only a buffer
  // that straddles a bound, or runs backwards, is parsed line by line).
  void consume(const char* data, size_t len, int64_t base_offset, Prepared& p) {
    result_.bytes += static_cast<int64_t>(len);
    if (len == 0) return;
    const int64_t first_line = line_no_ + 1;
    std::optional<int64_t> t_first = edge_time(data, len, true), t_last = edge_time(data, len, false);
    account_scope(data, len, t_first, t_last);
    // Events waiting for the first time of the file get the first stamp here.
    if (t_first && !pending_leading_.empty()) resolve_leading(*t_first);

    known_pos_ = 0;                // inheritance within this buffer starts from the previous one's time
    known_time_ = last_wall_;
    for (const Prepared::Line& line : p.lines)
      candidate_line(line, first_line + line.newlines_before, base_offset + static_cast<int64_t>(line.start), p, data, len);
    const int64_t lines = p.newlines + (data[len - 1] != '\n' ? 1 : 0);
    result_.lines += lines;
    result_.lines_invalid_utf8 += p.invalid_utf8;
    line_no_ += lines;
    if (t_last) learn_wall(*t_last);
  }

  // One line from memory, scanned on its own.
  void single(std::string_view text, int64_t line_no, std::optional<int64_t> forced_ts, int64_t offset = 0,
              bool terminated = false) {
    result_.bytes += static_cast<int64_t>(text.size()) + (terminated ? 1 : 0);
    window_.single_candidates(text, single_ids_);
    line_no_ = line_no;
    line(text, line_no, offset, single_ids_, forced_ts);
  }

  void set_line_number(int64_t n) { line_no_ = n; }

  void finish() {
    for (size_t idx : pending_boot_) {  // never anchored: order only
      result_.events[idx].where.boot = result_.events[idx].where.ts;
      result_.events[idx].where.ts.reset();
      result_.events[idx].where.ts_origin = {};
    }
    // Events kept only when inside the scope (or the wider window their
    // extractor keeps); those without a time stay. Compacted in place: an
    // event moves only when one before it was dropped.
    auto& events = result_.events;
    const auto& cat = program_.catalog();
    std::map<int32_t, OutOfScopeKind> dropped;
    size_t kept = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      Event& e = events[i];
      if (!e.where.ts) ++result_.events_without_time;
      if (e.where.ts && !in_scope(*e.where.ts) &&
          !kept_by_extractor(cat.extractors[static_cast<size_t>(event_extractor_[i])], *e.where.ts)) {
        ++result_.events_out_of_scope;
        auto& d = dropped[e.kind];
        d.kind = e.kind;
        d.note(*e.where.ts, opt_.window_start, opt_.window_end);
        if (d.count <= ScanResult::kOutOfScopeSamples) result_.out_of_scope_samples.push_back(std::move(e));
        continue;
      }
      if (kept != i) events[kept] = std::move(e);
      ++kept;
    }
    events.truncate(kept);
    event_extractor_.clear();
    for (auto& [k, d] : dropped) result_.out_of_scope_kinds.push_back(d);
  }

  int64_t line_no_ = 0;

 private:
  bool in_scope(int64_t t) const {
    return (!opt_.scope_start || t >= *opt_.scope_start) && (!opt_.scope_end || t <= *opt_.scope_end);
  }

  // Ray prefixes forwarded worker output with "(<actor or task> pid=N,
  // ip=A.B.C.D)": the line is that host's, not the driver's (ray-project/ray's
  // log monitor format). Returns the workload node it names, if any.
  const std::string* relayed_host(std::string_view text) const {
    if (opt_.workload_nodes.empty() || result_.source != "app") return nullptr;
    size_t i = 0;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i >= text.size() || text[i] != '(') return nullptr;
    size_t close = text.find(')', i);
    if (close == std::string_view::npos || close - i > 256) return nullptr;
    std::string_view inside = text.substr(i, close - i);
    size_t ip = inside.find(", ip=");
    if (ip == std::string_view::npos || inside.find(" pid=") == std::string_view::npos) return nullptr;
    std::string addr(inside.substr(ip + 5));
    auto find = [&](const std::string& n) -> const std::string* {
      auto it = std::lower_bound(opt_.workload_nodes.begin(), opt_.workload_nodes.end(), n);
      return it != opt_.workload_nodes.end() && *it == n ? &*it : nullptr;
    };
    if (const std::string* n = find(addr)) return n;
    std::string cloud = "ip-" + addr;
    std::replace(cloud.begin(), cloud.end(), '.', '-');
    return find(cloud);
  }

  // `keep D before|after`: inside [window start - D, window end + D] on the
  // sides the extractor names (the default scope on the others).
  bool kept_by_extractor(const ir::Extractor& ex, int64_t t) const {
    if (!ex.keep_before_ns && !ex.keep_after_ns) return false;
    bool lo = !opt_.scope_start || t >= *opt_.scope_start ||
              (ex.keep_before_ns && opt_.window_start && t >= *opt_.window_start - *ex.keep_before_ns);
    bool hi = !opt_.scope_end || t <= *opt_.scope_end ||
              (ex.keep_after_ns && opt_.window_end && t <= *opt_.window_end + *ex.keep_after_ns);
    return lo && hi;
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

    LineTime lt = forced_ts ? LineTime{} : line_time(text, opt_);
    if (lt.dmesg_local) ++result_.dmesg_local_lines;
    std::optional<int64_t> wall;
    const char* origin = "";  // a literal: Evidence::ts_origin keeps a view of it
    if (forced_ts) {
      wall = forced_ts;
      origin = "observation";
    } else if (lt.has_wall) {
      wall = lt.wall_ns;
      origin = "line";
      if (lt.has_boot)
        if (auto a = anchor_from(lt.wall_ns, lt.boot_ns)) learn_anchor(*a);
    } else if (lt.has_boot && anchor_) {
      wall = anchored(*anchor_, lt.boot_ns);
      if (wall) origin = "boot-anchored";
    }
    if (wall) learn_wall(*wall);
    std::optional<int64_t> effective = wall ? wall : last_wall_;
    if (effective && !in_scope(*effective)) ++result_.lines_out_of_scope;

    if (ids.empty()) return;
    single_events_.clear();
    single_extractors_.clear();
    window_.extract_all(text, ids, single_events_, single_extractors_);
    for (size_t i = 0; i < single_events_.size(); ++i)
      emit(std::move(single_events_[i]), single_extractors_[i], line_no, offset, wall, origin, lt, last_wall_);
  }

  // Keeps one extracted event with its provenance and time: the line's own
  // (`wall`), its boot seconds until the file is anchored, the time it
  // inherits, or none yet (resolved by the first time that follows).
  void emit(Event&& ev, int32_t extractor, int64_t line_no, int64_t offset, std::optional<int64_t> wall, const char* origin,
            const LineTime& lt, std::optional<int64_t> inherited) {
    if (result_.events.size() >= opt_.max_events_per_file) {
      ++result_.events_over_cap;
      return;
    }
    ev.host = host_;
    ev.control_plane = result_.control_plane;
    if (const std::string* relayed = relayed_host(ev.where.text)) {
      auto it = relayed_.find(relayed);
      if (it == relayed_.end()) it = relayed_.emplace(relayed, SharedString(*relayed)).first;
      ev.host = it->second;
      ev.control_plane = false;
    }
    ev.where.host = host_;
    ev.where.source = source_;
    ev.where.file = file_;
    ev.where.line = line_no;
    ev.where.offset = offset;
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
    event_extractor_.push_back(extractor);
  }

  // The wall time a line carries: its own stamp, or its boot seconds once the
  // file has an anchor. Learns the anchor from a line that carries both.
  std::optional<int64_t> own_time(std::string_view text) {
    LineTime lt = line_time(text, opt_);
    if (lt.has_wall) {
      if (lt.has_boot)
        if (auto a = anchor_from(lt.wall_ns, lt.boot_ns)) learn_anchor(*a);
      return lt.wall_ns;
    }
    if (lt.has_boot && anchor_) return anchored(*anchor_, lt.boot_ns);
    return std::nullopt;
  }

  // Wall stamps and boot seconds each fit in int64 nanoseconds, their sums
  // need not (a stamp near 2262 plus a long uptime): a line whose boot time
  // cannot be placed on the wall clock gets no anchored time, and a pair
  // whose difference overflows anchors nothing.
  static std::optional<int64_t> anchored(int64_t anchor, int64_t boot_ns) { return checked_add(anchor, boot_ns); }
  static std::optional<int64_t> anchor_from(int64_t wall_ns, int64_t boot_ns) { return checked_sub(wall_ns, boot_ns); }

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

  void candidate_line(const Prepared::Line& line, int64_t line_no, int64_t offset, Prepared& p, const char* data, size_t len) {
    if (line.truncated) ++result_.lines_truncated;
    const LineTime& lt = line.lt;
    if (lt.dmesg_local) ++result_.dmesg_local_lines;
    std::optional<int64_t> wall;
    const char* origin = "line";
    if (lt.has_wall) {
      wall = lt.wall_ns;
      if (lt.has_boot)
        if (auto a = anchor_from(lt.wall_ns, lt.boot_ns)) learn_anchor(*a);
    } else if (lt.has_boot && anchor_) {
      wall = anchored(*anchor_, lt.boot_ns);
      if (wall) origin = "boot-anchored";
    }
    std::optional<int64_t> inherited;
    if (!wall && !lt.has_boot) {
      inherited = time_before(data, line.start);
      if (!inherited) inherited = time_after(data, line.end + 1, len);
    }
    if (wall) known_time_ = wall;
    known_pos_ = std::min(len, line.end + 1);
    for (size_t i = 0; i < line.events; ++i)
      emit(std::move(p.events[line.first_event + i]), p.extractors[line.first_event + i], line_no, offset, wall, origin, lt,
           inherited);
  }

  void resolve_pending_boot() {
    for (size_t idx : pending_boot_) {
      auto& e = result_.events[idx];
      e.where.ts = anchored(*anchor_, *e.where.ts);
      e.where.ts_origin = e.where.ts ? "boot-anchored" : "";
    }
    pending_boot_.clear();
  }

  Scanner& scanner_;
  const Program& program_;
  ScanResult& result_;
  const ScanOptions& opt_;
  Window window_;
  // The file's names, shared by every event of it (Evidence holds SharedStrings).
  const SharedString host_, source_, file_;
  std::unordered_map<const std::string*, SharedString> relayed_;  // workload node -> its shared name
  std::unique_ptr<Prepared> prepared_;    // chunk(): kept across buffers (and files: Scanner::spare_prepared_)
  std::vector<int32_t> single_ids_;       // single(): extractors of the line
  std::vector<Event> single_events_;
  std::vector<int32_t> single_extractors_;
  size_t known_pos_ = 0;                  // lines before this offset of the buffer were examined for time
  std::optional<int64_t> known_time_;     // the latest time among them (or carried in)
  std::optional<int64_t> last_wall_, anchor_;
  std::vector<size_t> pending_leading_, pending_boot_;
  std::vector<int32_t> event_extractor_;  // by index in result_.events: the extractor that made it
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

void Scanner::multi_potentials(SourcePlan& plan, const std::vector<int>& atoms, std::vector<int32_t>& ids) {
  multi_key_.assign(reinterpret_cast<const char*>(atoms.data()), atoms.size() * sizeof(int));
  auto it = plan.multi.find(multi_key_);
  if (it == plan.multi.end()) {
    std::vector<int32_t> found;
    potentials(plan, atoms, found);
    if (plan.multi.size() >= SourcePlan::kMaxMulti) {
      ids.insert(ids.end(), found.begin(), found.end());
      return;
    }
    it = plan.multi.emplace(multi_key_, std::move(found)).first;
  }
  ids.insert(ids.end(), it->second.begin(), it->second.end());
}

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

}  // namespace culprit
