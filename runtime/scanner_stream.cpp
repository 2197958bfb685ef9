// Scanner::Stream: one file (or in-memory stream) applied in order from
// what Scanner::Window prepared, buffer after buffer. Line numbers, the time
// a line without its own stamp inherits, dmesg boot seconds anchored to wall
// time, the scope (per buffer from its edge stamps, per line only where
// needed), relayed hosts and the cap on events are decided here, and the
// events are kept or dropped when the file ends.
//
// Separate from the Window (runtime/scanner_window.cpp) because all of this
// depends on the lines before a line, so it runs on one thread in file
// order, while a Window's work depends only on its buffer and may run on any.

#include "runtime/scanner_internal.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <set>

#include "base/checked_int.h"
#include "base/text_util.h"

namespace culprit {

namespace {

using scanner_internal::line_time;

// How many lines from each end of a buffer are tried for a timestamp.
constexpr int kEdgeLines = 64;
// How far a line without a timestamp looks ahead for one at the start of a file.
constexpr int kLookAheadLines = 1024;

}  // namespace

Scanner::Stream::Stream(Scanner& scanner, ScanResult& result, const ScanOptions& opt)
    : scanner_(scanner), program_(*scanner.program_), result_(result), opt_(opt), window_(scanner, result.source, opt),
      host_(result.host), source_(result.source), file_(result.file), prepared_(std::move(scanner.spare_prepared_)) {
  if (!prepared_) prepared_ = std::make_unique<Prepared>();
}

// The buffers go back to the Scanner for its next file: a bundle of many
// small files grew (and moved the events of) a fresh one per file.
Scanner::Stream::~Stream() {
  prepared_->clear();
  scanner_.spare_prepared_ = std::move(prepared_);
}

// Scans one buffer (see Window::prepare) and applies it.
void Scanner::Stream::chunk(const char* data, size_t len, int64_t base_offset) {
  window_.prepare(data, len, *prepared_);
  consume(data, len, base_offset, *prepared_);
}

// Applies what was prepared from exactly these bytes, in file order.
// Scope is counted in bulk from the buffer's first and last timestamps
// (logs are written in time order, so a buffer whose first and last stamps
// are both inside or both outside the scope is wholly so; only a buffer
// that straddles a bound, or runs backwards, is parsed line by line).
void Scanner::Stream::consume(const char* data, size_t len, int64_t base_offset, Prepared& p) {
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
void Scanner::Stream::single(std::string_view text, int64_t line_no, std::optional<int64_t> forced_ts, int64_t offset,
                             bool terminated) {
  result_.bytes += static_cast<int64_t>(text.size()) + (terminated ? 1 : 0);
  window_.single_candidates(text, single_ids_);
  line_no_ = line_no;
  line(text, line_no, offset, single_ids_, forced_ts);
}

void Scanner::Stream::finish() {
  assign_ranked_lines();
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
  size_t kept = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (event_extractor_[i] == kSuperseded) continue;
    Event& e = events[i];
    if (!e.where.ts) ++result_.events_without_time;
    if (e.where.ts && !in_scope(*e.where.ts) &&
        !kept_by_extractor(cat.extractors[static_cast<size_t>(event_extractor_[i])], *e.where.ts)) {
      note_out_of_scope(std::move(e));
      continue;
    }
    if (kept != i) events[kept] = std::move(e);
    ++kept;
  }
  events.truncate(kept);
  event_extractor_.clear();
  last_of_extractor_.clear();
  superseded_live_ = 0;
  for (auto& [k, d] : dropped_) result_.out_of_scope_kinds.push_back(d);
  dropped_.clear();
}

// Counts an event that is not kept because of its time (and keeps the first
// few of each kind as samples, so diagnose can name a cause outside the scope).
void Scanner::Stream::note_out_of_scope(Event&& e) {
  ++result_.events_out_of_scope;
  auto& d = dropped_[e.kind];
  d.kind = e.kind;
  d.note(*e.where.ts, opt_.window_start, opt_.window_end);
  if (d.count <= ScanResult::kOutOfScopeSamples) result_.out_of_scope_samples.push_back(std::move(e));
}

// `keep last N`. Returns false when the event is not to be kept at all: its
// time is known and out of scope (it would be dropped when the file ends,
// but it must not replace an event in scope before that). Otherwise the
// caller appends it, and this has already superseded the extractor's oldest
// kept event if N are kept.
bool Scanner::Stream::keep_last(int32_t extractor, std::optional<int64_t> known_time, Event& ev) {
  const ir::Extractor& ex = program_.catalog().extractors[static_cast<size_t>(extractor)];
  if (known_time && !in_scope(*known_time) && !kept_by_extractor(ex, *known_time)) {
    ev.where.ts = known_time;
    note_out_of_scope(std::move(ev));
    return false;
  }
  if (last_of_extractor_.size() <= static_cast<size_t>(extractor))
    last_of_extractor_.resize(program_.catalog().extractors.size());
  auto& kept = last_of_extractor_[static_cast<size_t>(extractor)];
  if (static_cast<int64_t>(kept.size()) >= *ex.keep_last) {
    event_extractor_[kept.front()] = kSuperseded;
    kept.erase(kept.begin());
    ++superseded_live_;
    ++result_.events_superseded;
  }
  kept.push_back(result_.events.size());
  return true;
}

// Drops the superseded events from the middle of result_.events once they
// are as many as the live ones (and at least a few thousand), so memory stays
// proportional to what is kept. Indices held elsewhere move with them.
void Scanner::Stream::compact_superseded() {
  auto& events = result_.events;
  constexpr size_t kGone = SIZE_MAX;
  std::vector<size_t> moved_to(events.size(), kGone);
  size_t kept = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (event_extractor_[i] == kSuperseded) continue;
    moved_to[i] = kept;
    if (kept != i) {
      events[kept] = std::move(events[i]);
      event_extractor_[kept] = event_extractor_[i];
    }
    ++kept;
  }
  events.truncate(kept);
  event_extractor_.resize(kept);
  auto remap = [&](std::vector<size_t>& v) {
    size_t out = 0;
    for (size_t idx : v)
      if (moved_to[idx] != kGone) v[out++] = moved_to[idx];
    v.resize(out);
  };
  remap(pending_leading_);
  remap(pending_boot_);
  for (auto& v : last_of_extractor_) remap(v);
  superseded_live_ = 0;
}

// Launchers that gather every rank's output into one file tag each line
// with the rank that printed it, and elsewhere in the same file say where
// that rank ran. Three numbering spaces, never mixed (an srun task is one
// torchrun agent per node when srun starts torchrun, not a GPU rank):
//
//   srun task    tag "22: " at the very start (`srun --label`); placed by
//                srun's own report "srun: error: hkn0606: task 22: Exited
//                with exit code 1" / "srun: error: nid005475: tasks 0-2,5,7:
//                Terminated" (Slurm src/srun, launch and srun_job.c).
//   MPI rank     tag "[1,5]<stderr>:" (Open MPI's --tag-output, "[jobid,
//                rank]<stream>:"), possibly after a --timestamp-output stamp;
//                placed by "[gpu-07:4711] MCW rank 5 bound to socket 0[...]"
//                or "... MCW rank 5 not bound" (--report-bindings: orte/mca/
//                ess/base and prrte, opal_output's "[host:pid] " prefix).
//   torch rank   tag "[rank9]:" (PyTorch's per-rank prefix of torchrun's
//                output); placed by torchrun's failure record, whose
//                "  host      : gpu-07" row is followed by "  rank      : 9
//                (local_rank: 1)" (torch/distributed/elastic/multiprocessing/
//                errors, _FAILURE_FORMAT_TEMPLATE), or by DeepSpeed's
//                launcher, which logs every host's global ranks at start:
//                "global_rank_mapping=defaultdict(<class 'list'>, {'gpu-07':
//                [0, 1, 2, 3], 'gpu-08': [4, 5, 6, 7]})" (deepspeed/launcher/
//                launch.py).
//
// What the file does not place, the context may (WorkloadContext::ranks for
// the torch and MPI numbering, ::tasks for srun's): a layout a collector, a
// hostfile or the operator knows. The file's own placement wins where both
// speak: it was printed by the run itself.
//
// So once the file is read, an event whose line carries a tag that a
// placement in the same file ties to another workload node is that node's.
// A tag no placement names leaves the line on the file's host, and is counted
// (ScanResult::events_rank_unplaced): the mapping was unknown; in a combined
// output such a line is marked unplaced as well (ScanResult::combined_output,
// events_unplaced). Placements are
// read from the file's events: the catalog must extract those lines (the
// bundled one does: slurm.attr, launchers.attr).
namespace {

enum RankSpace : int { kSrunTask, kMpiRank, kTorchRank, kRankSpaces };

std::optional<int64_t> small_number(std::string_view d) {
  if (d.empty() || d.size() > 9 || d.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  return std::stoll(std::string(d));
}

// The rank tag a relayed line starts with, if any.
std::optional<std::pair<RankSpace, int64_t>> rank_tag(std::string_view text) {
  // srun --label: digits, ": " at the very start.
  size_t d = 0;
  while (d < text.size() && d < 9 && std::isdigit(static_cast<unsigned char>(text[d]))) ++d;
  if (d > 0 && text.substr(d, 2) == ": ") return std::pair{kSrunTask, *small_number(text.substr(0, d))};
  // "[rank9]:" or "[1,5]<stderr>:", at the start or after a leading stamp
  // (the first '[' within the first 48 bytes that opens a tag).
  for (size_t at = text.find('['); at != std::string_view::npos && at < 48; at = text.find('[', at + 1)) {
    if (at > 0 && text[at - 1] != ' ' && text[at - 1] != '\t') continue;
    std::string_view rest = text.substr(at + 1);
    size_t close = rest.find(']');
    if (close == std::string_view::npos || close > 24) continue;
    std::string_view inside = rest.substr(0, close), after = rest.substr(close + 1);
    if (inside.substr(0, 4) == "rank" && after.substr(0, 1) == ":")
      if (auto r = small_number(inside.substr(4))) return std::pair{kTorchRank, *r};
    size_t comma = inside.find(',');
    if (comma != std::string_view::npos && small_number(inside.substr(0, comma)) &&
        (after.substr(0, 9) == "<stdout>:" || after.substr(0, 9) == "<stderr>:" || after.substr(0, 10) == "<stddiag>:"))
      if (auto r = small_number(inside.substr(comma + 1))) return std::pair{kMpiRank, *r};
  }
  return std::nullopt;
}

// "0-2,5,7" or "[16-23]": single ranks and ranges, bounded.
template <typename F>
void for_each_listed(std::string_view list, F&& f) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view part = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    while (!part.empty() && (part.front() == '[' || part.front() == ']')) part.remove_prefix(1);
    while (!part.empty() && (part.back() == '[' || part.back() == ']')) part.remove_suffix(1);
    size_t dash = part.find('-');
    auto lo = small_number(part.substr(0, dash)), hi = dash == std::string_view::npos ? lo : small_number(part.substr(dash + 1));
    if (!lo || !hi || *hi < *lo || *hi - *lo > 100000) continue;
    for (int64_t t = *lo; t <= *hi; ++t) f(t);
  }
}

}  // namespace

void Scanner::Stream::assign_ranked_lines() {
  if (result_.source != "app" || opt_.workload_nodes.empty()) return;
  static const re2::RE2 srun_placed(R"(srun: error: ([\w.\-]+): tasks? ([\d,\-\[\]]+): )");
  static const re2::RE2 mpi_placed(R"(\[([\w.\-]+):\d+\] MCW rank (\d+) (?:is )?(?:not )?bound)");
  static const re2::RE2 torch_host_row(R"(^\s*(?:\[rank\d+\]:\s*)?host\s+: ([\w.\-]+)\s*$)");
  static const re2::RE2 torch_rank_row(R"(^\s*(?:\[rank\d+\]:\s*)?rank\s+: (\d+) \(local_rank: \d+\))");
  static const re2::RE2 deepspeed_host_ranks(R"('([\w.\-]+)': \[([\d, ]*)\])");
  std::map<int64_t, const std::string*> placed[kRankSpaces];
  auto node_of = [&](const std::string& host) -> const std::string* {
    const std::string* node = workload_node_named(host);
    // The file's own host, also by its FQDN (workload_node_named gives no
    // node for it: it is not another host's line).
    if (!node && (host == result_.host || (host.find('.') != std::string::npos &&
                                             host.find_first_not_of("0123456789.") != std::string::npos &&
                                             std::string_view(host).substr(0, host.find('.')) == result_.host)))
      node = &result_.host;
    return node;
  };
  const std::string* record_host = nullptr;  // torchrun's record: the host row just read
  int64_t record_line = 0;
  // srun's reports of tasks (events whose node their text names), and
  // whether one names another node than the file's: then the file is srun's
  // collected output of every node's tasks.
  std::vector<size_t> srun_report;
  std::set<std::string> srun_others;
  for (size_t i = 0; i < result_.events.size(); ++i) {
    if (event_extractor_[i] == kSuperseded) continue;
    const Evidence& w = result_.events[i].where;
    std::string_view text = w.text.view();
    std::string host, list;
    if (text.find("srun: error: ") != std::string_view::npos && re2::RE2::PartialMatch(text, srun_placed, &host, &list)) {
      srun_report.push_back(i);
      if (const std::string* node = node_of(host)) {
        for_each_listed(list, [&](int64_t t) { placed[kSrunTask].emplace(t, node); });
        if (*node != result_.host) srun_others.insert(*node);
      }
    } else if (text.find(" MCW rank ") != std::string_view::npos && re2::RE2::PartialMatch(text, mpi_placed, &host, &list)) {
      if (const std::string* node = node_of(host)) for_each_listed(list, [&](int64_t t) { placed[kMpiRank].emplace(t, node); });
    } else if (text.find("host ") != std::string_view::npos && re2::RE2::PartialMatch(text, torch_host_row, &host)) {
      record_host = node_of(host);
      record_line = w.line;
    } else if (record_host && w.line == record_line + 1 && re2::RE2::PartialMatch(text, torch_rank_row, &list)) {
      for_each_listed(list, [&](int64_t t) { placed[kTorchRank].emplace(t, record_host); });
      record_host = nullptr;
    } else if (size_t at = text.find("global_rank_mapping="); at != std::string_view::npos) {
      re2::StringPiece rest(text.data() + at, text.size() - at);
      while (re2::RE2::FindAndConsume(&rest, deepspeed_host_ranks, &host, &list))
        if (const std::string* node = node_of(host)) {
          list.erase(std::remove(list.begin(), list.end(), ' '), list.end());
          for_each_listed(list, [&](int64_t t) { placed[kTorchRank].emplace(t, node); });
        }
    }
  }
  // The context's layout, where the file placed nothing: ranges of the
  // torch/MPI numbering and of srun's.
  auto from_context = [&](RankSpace space, int64_t rank) -> const std::string* {
    const auto& ranges = space == kSrunTask ? opt_.context_tasks : opt_.context_ranks;
    auto it = std::upper_bound(ranges.begin(), ranges.end(), rank, [](int64_t r, const auto& x) { return r < x.first; });
    if (it == ranges.begin()) return nullptr;
    --it;
    return rank <= it->last ? node_of(it->node) : nullptr;
  };
  std::vector<size_t> untagged, tag_unplaced;  // events on the file's host that no tag or prefix placed
  bool srun_labels = false;
  for (size_t i = 0; i < result_.events.size(); ++i) {
    if (event_extractor_[i] == kSuperseded) continue;
    Event& e = result_.events[i];
    if (e.host.view() != result_.host) continue;  // already another host's (Ray, pdsh)
    auto tag = rank_tag(e.where.text.view());
    if (!tag) {
      if (!srun_others.empty()) untagged.push_back(i);  // kept only where srun may have collected them
      continue;
    }
    srun_labels = srun_labels || tag->first == kSrunTask;
    auto it = placed[tag->first].find(tag->second);
    const std::string* node = it != placed[tag->first].end() ? it->second : from_context(tag->first, tag->second);
    if (!node) {
      ++result_.events_rank_unplaced;
      tag_unplaced.push_back(i);
      continue;
    }
    if (*node == result_.host) continue;
    auto r = relayed_.find(node);
    if (r == relayed_.end()) r = relayed_.emplace(node, SharedString(*node)).first;
    e.host = r->second;
    e.control_plane = false;
    ++result_.events_relayed;
  }
  // A file with other nodes' lines is the job's combined output. One whose
  // srun reports other nodes' tasks may be: srun collects every task's
  // output into the batch script's, unless the tasks wrote their own files;
  // which only the bundle as a whole shows (ScanResult::srun_reported_nodes,
  // settled by the caller).
  result_.combined_output = result_.events_relayed > 0;
  if (!result_.combined_output) result_.srun_reported_nodes.assign(srun_others.begin(), srun_others.end());
  if (!result_.combined_output && srun_others.empty()) return;
  // In the job's combined output a rank tag nothing places is some node's,
  // not the file's host's; and where srun collected its tasks' output
  // without --label, no line of theirs says whose it is. (Unlabelled lines
  // beside --label's, or beside a relay's prefixes, are the batch script's
  // or the launcher's own: the file's host is theirs.) srun's own reports
  // name their node in their text.
  auto mark = [&](size_t i) {
    result_.events[i].unplaced = true;
    ++result_.events_unplaced;
  };
  for (size_t i : tag_unplaced) mark(i);
  if (!result_.combined_output && !srun_labels)
    for (size_t i : untagged)
      if (!std::binary_search(srun_report.begin(), srun_report.end(), i)) mark(i);
}

bool Scanner::Stream::in_scope(int64_t t) const {
  return (!opt_.scope_start || t >= *opt_.scope_start) && (!opt_.scope_end || t <= *opt_.scope_end);
}

// The workload node a relayed line belongs to, if its text says so (see
// ScanOptions::workload_nodes): Ray's "(<actor or task> pid=N, ip=A.B.C.D)"
// prefix (ray-project/ray's log monitor format), or pdsh's "host: " before
// the remote command's line (pdsh's -S output, as DeepSpeed's multi-node
// runner prints it: "gpu-q-13: torch.cuda.OutOfMemoryError: ...").
const std::string* Scanner::Stream::relayed_host(std::string_view text) const {
  if (opt_.workload_nodes.empty() || result_.source != "app") return nullptr;
  size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  if (i >= text.size()) return nullptr;
  if (text[i] == '(') {
    size_t close = text.find(')', i);
    if (close == std::string_view::npos || close - i > 256) return nullptr;
    std::string_view inside = text.substr(i, close - i);
    size_t ip = inside.find(", ip=");
    if (ip == std::string_view::npos || inside.find(" pid=") == std::string_view::npos) return nullptr;
    return workload_node_named(inside.substr(ip + 5));
  }
  // "host: " at the very start (pdsh writes no indent): a host name or
  // address, then a colon and a space.
  if (i != 0) return nullptr;
  size_t colon = text.find(": ");
  if (colon == std::string_view::npos || colon == 0 || colon > 253) return nullptr;
  std::string_view host = text.substr(0, colon);
  for (char c : host)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) return nullptr;
  return workload_node_named(host);
}

// The workload node `name` names: itself, an alias the context gives, its
// short name (before the first dot), or a cloud host named after the
// address ("ip-172-19-24-110"). A name of the file's own host is not a relay.
const std::string* Scanner::Stream::workload_node_named(std::string_view name) const {
  auto find = [&](std::string_view n) -> const std::string* {
    auto it = std::lower_bound(opt_.workload_nodes.begin(), opt_.workload_nodes.end(), n);
    return it != opt_.workload_nodes.end() && *it == n ? &*it : nullptr;
  };
  const std::string* node = find(name);
  if (!node) {
    auto it = std::lower_bound(opt_.node_aliases.begin(), opt_.node_aliases.end(), name,
                               [](const auto& a, std::string_view n) { return a.first < n; });
    if (it != opt_.node_aliases.end() && it->first == name) node = find(it->second);
  }
  if (!node) {
    size_t dot = name.find('.');
    bool address = name.find_first_not_of("0123456789.") == std::string_view::npos;
    if (dot != std::string_view::npos && !address) node = find(name.substr(0, dot));
    if (address) {
      std::string cloud = "ip-" + std::string(name);
      std::replace(cloud.begin(), cloud.end(), '.', '-');
      node = find(cloud);
    }
  }
  if (node && *node == result_.host) return nullptr;
  return node;
}

// `keep D before|after`: inside [window start - D, window end + D] on the
// sides the extractor names (the default scope on the others).
bool Scanner::Stream::kept_by_extractor(const ir::Extractor& ex, int64_t t) const {
  if (!ex.keep_before_ns && !ex.keep_after_ns) return false;
  bool lo = !opt_.scope_start || t >= *opt_.scope_start ||
            (ex.keep_before_ns && opt_.window_start && t >= *opt_.window_start - *ex.keep_before_ns);
  bool hi = !opt_.scope_end || t <= *opt_.scope_end ||
            (ex.keep_after_ns && opt_.window_end && t <= *opt_.window_end + *ex.keep_after_ns);
  return lo && hi;
}

void Scanner::Stream::learn_wall(int64_t t) {
  last_wall_ = t;
  resolve_leading(t);
}

// Events that came before any time in the file take the first one after them.
void Scanner::Stream::resolve_leading(int64_t t) {
  for (size_t idx : pending_leading_) {
    result_.events[idx].where.ts = t;
    result_.events[idx].where.ts_origin = "inherited";
  }
  pending_leading_.clear();
}

void Scanner::Stream::line(std::string_view text, int64_t line_no, int64_t offset, const std::vector<int32_t>& ids,
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
void Scanner::Stream::emit(Event&& ev, int32_t extractor, int64_t line_no, int64_t offset, std::optional<int64_t> wall,
                           const char* origin, const LineTime& lt, std::optional<int64_t> inherited) {
  if (result_.extractor_matches.empty()) result_.extractor_matches.resize(program_.catalog().extractors.size());
  ++result_.extractor_matches[static_cast<size_t>(extractor)];
  const bool keeps_last = program_.catalog().extractors[static_cast<size_t>(extractor)].keep_last.has_value();
  if (result_.events.size() - superseded_live_ >= opt_.max_events_per_file && !keeps_last) {
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
    ++result_.events_relayed;
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
  // The time known now: the line's own, or the one it inherits. An event
  // whose time is still pending (boot seconds, the file's first stamp) is
  // kept, and judged for scope when the file ends like any other.
  if (keeps_last) {
    std::optional<int64_t> known = wall ? wall : (lt.has_boot ? std::optional<int64_t>{} : inherited);
    if (!keep_last(extractor, known, ev)) return;
  }
  result_.events.push_back(std::move(ev));
  event_extractor_.push_back(extractor);
  if (superseded_live_ >= 4096 && superseded_live_ * 2 >= result_.events.size()) compact_superseded();
}

// The wall time a line carries: its own stamp, or its boot seconds once the
// file has an anchor. Learns the anchor from a line that carries both.
std::optional<int64_t> Scanner::Stream::own_time(std::string_view text) {
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
std::optional<int64_t> Scanner::Stream::anchored(int64_t anchor, int64_t boot_ns) {
  return checked_add(anchor, boot_ns);
}
std::optional<int64_t> Scanner::Stream::anchor_from(int64_t wall_ns, int64_t boot_ns) {
  return checked_sub(wall_ns, boot_ns);
}

void Scanner::Stream::learn_anchor(int64_t anchor) {
  bool first = !anchor_;
  anchor_ = anchor;
  if (first) resolve_pending_boot();
}

// The first (or last) time among the first (or last) kEdgeLines lines.
std::optional<int64_t> Scanner::Stream::edge_time(const char* data, size_t len, bool from_start) {
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

void Scanner::Stream::account_scope(const char* data, size_t len, std::optional<int64_t> t_first,
                                    std::optional<int64_t> t_last) {
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
std::optional<int64_t> Scanner::Stream::time_before(const char* data, size_t start) {
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

std::optional<int64_t> Scanner::Stream::time_after(const char* data, size_t from, size_t len) {
  size_t pos = from;
  for (int n = 0; n < kLookAheadLines && pos < len; ++n) {
    const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', len - pos));
    size_t e = nl ? static_cast<size_t>(nl - data) : len;
    if (auto t = own_time(std::string_view(data + pos, e - pos))) return t;
    pos = e + 1;
  }
  return std::nullopt;
}

void Scanner::Stream::candidate_line(const Prepared::Line& line, int64_t line_no, int64_t offset, Prepared& p,
                                     const char* data, size_t len) {
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

void Scanner::Stream::resolve_pending_boot() {
  for (size_t idx : pending_boot_) {
    auto& e = result_.events[idx];
    e.where.ts = anchored(*anchor_, *e.where.ts);
    e.where.ts_origin = e.where.ts ? "boot-anchored" : "";
  }
  pending_boot_.clear();
}

}  // namespace culprit
