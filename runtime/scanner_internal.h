// Private to the scanner (runtime/scanner*.cpp); not part of the runtime's
// interface, which is runtime/scanner.h.
//
// A scan has three jobs, one file each, and this header holds what they
// share: the Prepared result of one buffer and the two classes that make
// and apply it.
//   scanner.cpp         the entry points: a file walked in read windows, its
//                       buffers split across threads (ScanHelpers), lines from memory
//   scanner_window.cpp  Scanner::Window: one buffer -> Prepared (Hyperscan, the
//                       filter and its per-source plan, captures, field values)
//   scanner_stream.cpp  Scanner::Stream: Prepared buffers applied in file order
//                       (line numbers, inherited times, boot anchoring, scope)
#pragma once

#include <re2/re2.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/interpreter.h"
#include "runtime/scanner.h"

namespace culprit {

namespace scanner_internal {

// What Hyperscan reported for one buffer (runtime/scanner_window.cpp on_match).
struct MatchCollector {
  const char* base = nullptr;
  std::vector<std::pair<unsigned long long, unsigned>> hits;  // (end offset, hyperscan id)
  std::vector<unsigned long long> last_end;                   // by id; coalesces repeats within a line
};

// A line's time, with dmesg -T stamps moved from the host's local time to UTC.
inline LineTime line_time(std::string_view text, const ScanOptions& opt) {
  LineTime lt = parse_line_time(text, opt.year_hint);
  if (lt.dmesg_local && lt.has_wall) lt.wall_ns -= opt.dmesg_offset_ns;
  return lt;
}

}  // namespace scanner_internal

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
  Window(Scanner& scanner, const std::string& source, const ScanOptions& opt);

  bool has_database() const { return db_ != nullptr; }
  void prepare(const char* data, size_t len, Prepared& out);
  void single_candidates(std::string_view text, std::vector<int32_t>& ids);
  void extract_all(std::string_view text, const std::vector<int32_t>& ids, std::vector<Event>& out,
                   std::vector<int32_t>& from);

 private:
  int64_t count_invalid_utf8(const char* data, size_t len) const;
  void candidates(size_t first, size_t last, std::vector<int32_t>& ids);
  bool extract(int32_t x, std::string_view text, Event& ev);

  Scanner& scanner_;
  const Program& program_;
  const ScanOptions& opt_;
  const Program::SourceDatabase* db_;
  SourcePlan* plan_ = nullptr;
  scanner_internal::MatchCollector collector_;
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
  Stream(Scanner& scanner, ScanResult& result, const ScanOptions& opt);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Whether this file's source has extractors at all (else nothing to split).
  bool scans() const { return window_.has_database(); }
  void chunk(const char* data, size_t len, int64_t base_offset);
  void consume(const char* data, size_t len, int64_t base_offset, Prepared& p);
  void single(std::string_view text, int64_t line_no, std::optional<int64_t> forced_ts, int64_t offset = 0,
              bool terminated = false);
  void set_line_number(int64_t n) { line_no_ = n; }
  void finish();

  int64_t line_no_ = 0;

 private:
  bool in_scope(int64_t t) const;
  const std::string* relayed_host(std::string_view text) const;
  const std::string* workload_node_named(std::string_view name) const;
  bool kept_by_extractor(const ir::Extractor& ex, int64_t t) const;
  void learn_wall(int64_t t);
  void resolve_leading(int64_t t);
  void line(std::string_view text, int64_t line_no, int64_t offset, const std::vector<int32_t>& ids,
            std::optional<int64_t> forced_ts);
  void emit(Event&& ev, int32_t extractor, int64_t line_no, int64_t offset, std::optional<int64_t> wall, const char* origin,
            const LineTime& lt, std::optional<int64_t> inherited);
  std::optional<int64_t> own_time(std::string_view text);
  static std::optional<int64_t> anchored(int64_t anchor, int64_t boot_ns);
  static std::optional<int64_t> anchor_from(int64_t wall_ns, int64_t boot_ns);
  void learn_anchor(int64_t anchor);
  std::optional<int64_t> edge_time(const char* data, size_t len, bool from_start);
  void account_scope(const char* data, size_t len, std::optional<int64_t> t_first, std::optional<int64_t> t_last);
  std::optional<int64_t> time_before(const char* data, size_t start);
  std::optional<int64_t> time_after(const char* data, size_t from, size_t len);
  void candidate_line(const Prepared::Line& line, int64_t line_no, int64_t offset, Prepared& p, const char* data, size_t len);
  void resolve_pending_boot();
  void note_out_of_scope(Event&& e);
  void assign_ranked_lines();
  bool keep_last(int32_t extractor, std::optional<int64_t> known_time, Event& ev);
  void compact_superseded();

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
                                          // (kSuperseded once `keep last N` replaced the event)
  static constexpr int32_t kSuperseded = -1;
  // `keep last N`: per extractor id, the indices (in result_.events) of its
  // kept events, oldest first; and how many kept events are superseded.
  std::vector<std::vector<size_t>> last_of_extractor_;
  size_t superseded_live_ = 0;
  std::map<int32_t, OutOfScopeKind> dropped_;  // events not kept for scope, by kind
};

}  // namespace culprit
