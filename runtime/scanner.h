// The scanner: log lines -> typed events, one pass over every byte.
//
// For each file, the source's Hyperscan database runs once over whole
// buffers of lines, looking for the atoms of every extractor of that source
// (literal strings each match must contain; see Program::SourceDatabase).
// Only lines with atoms are visited: FilteredRE2 names the extractors that
// may match, the extractor's CaptureRegex confirms and takes the captures
// (PCRE2's JIT where the regex means the same to it, else RE2; see
// runtime/capture_regex.h), and only then are the
// extractor's field expressions evaluated. Other lines are only counted, by
// one vectorized pass per buffer (newlines, and whether any byte is
// non-ASCII, which alone calls for the per-line UTF-8 check).
//
// Not every atom is scanned for: where a regex needs several atoms at once,
// the database holds the long one only, and the filter takes the others as
// present on every candidate line (Program::SourceDatabase::implied_atoms),
// so benign lines holding a frequent word ("step ", " ip") are not
// candidates. The filter is monotone: no line a regex matches is missed.
//
// Time: a candidate line's own timestamp is parsed; a line without one
// inherits the nearest stamp before it in the file (or, at the start of a
// file, the first one after it); dmesg seconds-since-boot are anchored to
// wall time once a line of the file carries both. Scope is decided per
// buffer from its first and last stamps (exact for time-ordered logs) and
// line by line only for a buffer that straddles a bound or runs backwards.
// Files are streamed in windows, read (kReadWindow bytes, more only for a
// line that does not fit, up to kBufferSize) or mapped (ScanOptions::
// map_files; kBufferSize): memory does not depend on file size (see
// kBufferSize and ScanOptions::max_line).
//
// An extractor with `keep last N` (progress lines) keeps only its last N
// events of a file that are in scope: an earlier one is superseded (counted
// in ScanResult::events_superseded) as soon as N later ones are kept, and
// superseded events are compacted away as the file goes on, so a log of a
// million steps holds N of them, and they never count against
// max_events_per_file (which would otherwise drop the failure at the end of
// a long log). Its events that are out of scope when read are dropped then. Line numbers are counted
// only up to the lines that emit events, so the work after Hyperscan grows
// with the candidates, plus that one counting pass.
//
// Thread-safety: a Scanner owns its Hyperscan scratch and per-source caches
// and is used by one thread at a time; create one per worker. The Program is
// shared.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/bundle.h"
#include "runtime/capture_regex.h"
#include "runtime/model.h"
#include "runtime/observation.h"
#include "runtime/program.h"
#include "base/timestamp.h"

namespace culprit {

struct ScanOptions {
  std::optional<int64_t> scope_start, scope_end;   // evidence outside is counted, not kept
  // The workload window itself (scope_start/end include the slack): an
  // extractor with `keep D before|after` keeps its events up to D outside it.
  std::optional<int64_t> window_start, window_end;
  // The workload's nodes (sorted). An application line that a relay prints for
  // another host belongs to that host when it is one of them: Ray's
  // "(RayWorkerWrapper pid=92234, ip=172.19.24.110) ...", and the "host: "
  // prefix pdsh (DeepSpeed's multi-node launcher) and `srun --label`-style
  // wrappers put before every line of a remote command ("gpu-q-13: ...",
  // "10.0.0.6: ..."). The host is matched by name, by an alias the context
  // gives (`node_aliases`), by its short name, or by the "ip-172-19-24-110"
  // form cloud hosts are named after their address. And a line a launcher tags
  // with its rank (`srun --label`'s "22: ", Open MPI's "[1,5]<stderr>:",
  // PyTorch's "[rank9]:") is the node a placement in the same file gives that
  // rank (srun's "srun: error: hkn0606: task 22: ...", Open MPI's
  // "[gpu-07:4711] MCW rank 5 bound to ...", torchrun's failure record "host :
  // gpu-07" / "rank : 9 (local_rank: 1)"), read from the file's events once the
  // file ends; a tag nothing places stays on the file's host and is counted in
  // ScanResult::events_rank_unplaced. DeepSpeed's launcher line
  // "global_rank_mapping=defaultdict(<class 'list'>, {'gpu-07': [0, 1], ...})"
  // places PyTorch ranks too; and where the file places no rank, the context's
  // layout does (`context_ranks` for PyTorch and MPI ranks, `context_tasks` for
  // srun tasks: WorkloadContext::ranks and ::tasks).
  // A file that holds other nodes' lines is the job's combined output
  // (ScanResult::combined_output); so is one whose srun reports another
  // node's tasks ("srun: error: gpu-02: task 4: Exited ..."), when that node
  // wrote no application log of its own: srun collects every task's output
  // into the batch script's (settle_srun_collected_output). There a line that
  // does not say whose it is (srun's output without --label, or a rank tag
  // nothing places) keeps the file's host but is marked Event::unplaced
  // and counted in ScanResult::events_unplaced: it names no culprit node.
  std::vector<std::string> workload_nodes;
  std::vector<WorkloadContext::RankRange> context_ranks, context_tasks;
  // Other names of the workload's nodes: (alias, node), sorted by alias.
  std::vector<std::pair<std::string, std::string>> node_aliases;
  // The host's zone (local time minus UTC), when its other logs state it:
  // `dmesg -T` stamps, printed in local time, are shifted by it.
  int64_t dmesg_offset_ns = 0;
  YearHint year_hint{};
  size_t max_line = 1 << 20;                        // longer lines are cut (and counted)
  size_t max_events_per_file = 100000;              // beyond it events are counted, not kept
  size_t max_text = 4096;                           // evidence text is truncated to this many bytes
  // Read regular files through mmap(2), a window at a time, instead of
  // read(2); output is identical. Off by default: a read into a small window
  // that stays in the core's cache costs less than the page faults of a
  // mapping, which on virtual machines are dear (a 524 MB bundle: scan 0.62 s
  // mapped, 0.26 s read, bench/README.md). A file truncated by another
  // process while a window of it is mapped does not end the process:
  // MappedWindowGuard reads the vanished bytes as NULs and the result's
  // `error` says the file shrank.
  bool map_files = false;
  // With map_files, smaller files are read even so: they fit one window, and
  // a read copies them faster than mapping faults their pages in and
  // unmapping flushes the TLB of every core the process has threads on (a
  // bundle of 12,000 small node logs spent a sixth of its scan in munmap).
  // Tests set 0 to map all.
  uint64_t map_min_bytes = kReadBelow;
  static constexpr uint64_t kReadBelow = 4 << 20;
  // Take every capture with RE2 as well and count where PCRE2 differed
  // (Scanner::capture_scratch(); runtime/capture_regex.h). For tests.
  bool verify_captures = false;
};

// Events of one kind that fell outside the scope: how many, and how far
// outside the workload window the nearest one was (before its start, after
// its end; null when none was on that side).
struct OutOfScopeKind {
  int32_t kind = 0;
  int64_t count = 0;
  std::optional<int64_t> nearest_before_ns, nearest_after_ns;

  // Counts one more event, at `t`, against the window [start, end].
  void note(int64_t t, const std::optional<int64_t>& start, const std::optional<int64_t>& end) {
    ++count;
    if (start && t < *start && (!nearest_before_ns || *start - t < *nearest_before_ns)) nearest_before_ns = *start - t;
    if (end && t > *end && (!nearest_after_ns || t - *end < *nearest_after_ns)) nearest_after_ns = t - *end;
  }
};

// What scanning one file (or one in-memory stream) produced.
struct ScanResult {
  std::string host, source, file;
  bool control_plane = false;
  EventList events;               // in file order
  int64_t bytes = 0, lines = 0, lines_out_of_scope = 0, lines_invalid_utf8 = 0, lines_truncated = 0,
          events_without_time = 0, events_out_of_scope = 0, events_over_cap = 0,
          events_superseded = 0,  // events of a `keep last N` extractor that N later ones replaced
          events_rank_unplaced = 0,  // events of a rank-tagged line whose rank no placement in the file names
          events_relayed = 0,  // events of another workload node's line (a relay's prefix or a placed rank tag)
          events_unplaced = 0,  // events of a combined output's lines that do not say whose they are (Event::unplaced)
          dmesg_local_lines = 0;  // lines read with a dmesg -T (local time) stamp
  // The file is the job's combined output: it holds other workload nodes'
  // lines (events_relayed).
  bool combined_output = false;
  // Otherwise, the other workload nodes whose tasks srun reports in it
  // (sorted). The file is then srun's collected output of their tasks
  // unless they wrote their own application logs, which only the whole
  // bundle shows: its events_unplaced are marked provisionally, and
  // settle_srun_collected_output() decides.
  std::vector<std::string> srun_reported_nodes;
  // By extractor id: the lines it matched in this file, kept or not (out of
  // scope, over the cap, superseded): which extractors never fired.
  std::vector<int64_t> extractor_matches;
  std::vector<OutOfScopeKind> out_of_scope_kinds;  // by kind id, for events_out_of_scope
  // The first kOutOfScopeSamples events of each kind that were not kept, so
  // that diagnose can name the lines of a cause found outside the scope.
  static constexpr int64_t kOutOfScopeSamples = 32;
  std::vector<Event> out_of_scope_samples;
  std::string error;              // I/O error, if any (partial results are kept)
};

class Scanner;

// Large files split across threads. One ScanHelpers is shared by the scan
// threads of one diagnosis: a thread scanning a file with
// Scanner::scan_file(file, opt, &helpers) first finds the buffers a
// sequential scan reads (only the end of each window is looked at), then
// publishes them; the other threads, once they have no file of their own,
// call help(), which prepares published buffers (Hyperscan, the filter,
// RE2, field values: most of a scan) while the owner applies them in file
// order (line numbers, inherited times, boot anchoring, scope: all that
// depends on earlier lines). So a 10 GB log uses every core, and the result
// is the sequential one, byte for byte. At most a few buffers per file are
// prepared ahead of the owner (memory stays flat). Thread-safe.
class ScanHelpers {
 public:
  // `split_files`: how many scan_file calls will be given these helpers;
  // help() returns once they have all finished.
  explicit ScanHelpers(size_t split_files);
  ~ScanHelpers();
  ScanHelpers(const ScanHelpers&) = delete;
  ScanHelpers& operator=(const ScanHelpers&) = delete;

  // Prepares buffers of the files being scanned, using `scanner` (this
  // thread's), until every split file is done.
  void help(Scanner& scanner);

 private:
  friend class Scanner;
  struct Job;
  void publish(Job* job);
  void finished(Job* job);  // null: a split file that was scanned on its own (or could not be opened)

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Job*> jobs_;  // published, not finished
  size_t remaining_;        // split files not finished
  uint64_t published_ = 0;
};

class Scanner {
 public:
  explicit Scanner(std::shared_ptr<const Program> program);
  ~Scanner();
  Scanner(const Scanner&) = delete;
  Scanner& operator=(const Scanner&) = delete;

  static constexpr size_t kBufferSize = 4 << 20;
  // The read window: small enough to stay in the core's cache between the
  // copy and Hyperscan's pass (4 MiB read windows were 10 % slower).
  static constexpr size_t kReadWindow = 256 << 10;

  // With `helpers`, the file's buffers are prepared by every thread that
  // calls helpers->help() (see ScanHelpers); the result is the same.
  ScanResult scan_file(const LogFile& file, const ScanOptions& opt, ScanHelpers* helpers = nullptr);

  // Scans lines held in memory as one stream (scenario tests, service
  // observations of one host and source). `lines[i]` is reported as line
  // `line_numbers[i]` at byte `offsets[i]` (0 when absent) of `display_file`;
  // `times[i]` overrides the line's own timestamp when set. A trailing '\n'
  // is the line's terminator: counted in `bytes` as a file's would be, not
  // part of the text (so a file sent line by line reads like the file).
  ScanResult scan_lines(const std::string& host, const std::string& source, const std::string& display_file,
                        bool control_plane, const std::vector<std::string>& lines,
                        const std::vector<int64_t>& line_numbers, const std::vector<std::optional<int64_t>>& times,
                        const ScanOptions& opt, const std::vector<int64_t>& offsets = {});

  // Runs one extractor's source database over one line and returns what
  // that extractor emitted (for inline tests: exercises the real scan path).
  std::vector<Event> scan_single_line(const std::string& source, const std::string& line, int32_t only_extractor);

  // The extractors (catalog indexes, sorted) the one-pass scan would try on
  // `line` of `source`: those whose literal atoms it holds, and those with
  // none. An extractor listed here that emits nothing is a near miss (its
  // literals are there, its regex is not satisfied): `culprit match` names
  // them, as the answer to "why did my rule not fire".
  std::vector<int32_t> candidate_extractors(const std::string& source, std::string_view line);

  // This thread's capture state: how many lines PCRE2 and RE2 decided, and
  // (with ScanOptions::verify_captures) where they differed.
  const CaptureScratch& capture_scratch() const { return capture_scratch_; }

 private:
  friend class ScanHelpers;
  struct Prepared;
  class Window;
  class Stream;
  // Per source, what a line holding a single atom may match: nearly every
  // candidate line holds one atom, and FilteredRE2 allocates on every call.
  // Filled as atoms are met, by this Scanner (no locking).
  struct SourcePlan {
    const Program::SourceDatabase* db = nullptr;
    std::vector<std::optional<std::vector<int32_t>>> solo;  // by filter atom: extractors (sorted, unique)
    // Lines of error-heavy logs often hold several atoms, in a few recurring
    // combinations: those are cached too (key: the atom indices' bytes), up
    // to kMaxMulti combinations.
    std::unordered_map<std::string, std::vector<int32_t>> multi;
    static constexpr size_t kMaxMulti = 4096;
  };
  SourcePlan& plan_for(const Program::SourceDatabase& db);
  // Appends to `ids` the filtered extractors that may match a line holding
  // `atoms` (filter atom indices, sorted, unique), the implied atoms included.
  void potentials(SourcePlan& plan, const std::vector<int>& atoms, std::vector<int32_t>& ids);
  const std::vector<int32_t>& solo_potentials(SourcePlan& plan, int atom);
  // The same for several atoms (sorted, unique); `ids` gets the extractors.
  void multi_potentials(SourcePlan& plan, const std::vector<int>& atoms, std::vector<int32_t>& ids);

  std::shared_ptr<const Program> program_;
  struct hs_scratch* scratch_ = nullptr;
  CaptureScratch capture_scratch_;
  std::unique_ptr<Prepared> spare_prepared_;  // a Stream's buffers between files (their capacity is kept)
  std::vector<char> buffer_;  // scan_file's read-mode window (kReadWindow, up to kBufferSize), allocated on first use
  std::vector<std::unique_ptr<SourcePlan>> plans_;
  std::vector<int> query_, found_;  // potentials(): scratch
  std::string multi_key_;          // multi_potentials(): scratch
};

// Decides, for each application file whose srun reports other nodes'
// tasks (ScanResult::srun_reported_nodes), whether it is srun's collected
// output of those tasks: it is when none of those nodes has an application
// file of its own among `results` (with lines). Then the file is marked
// combined_output and keeps its provisional Event::unplaced marks;
// otherwise the marks are cleared (the lines are the file's host's, beside
// the batch script's) and events_unplaced is zero. Call once, after every
// file of the workload was scanned; deterministic whatever the order.
void settle_srun_collected_output(std::vector<ScanResult>& results);

}  // namespace culprit
