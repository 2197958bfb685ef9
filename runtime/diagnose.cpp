#include "runtime/diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <atomic>
#include <chrono>
#include <fcntl.h>
#include <unistd.h>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include "base/limits.h"
#include "base/read_full.h"
#include "compiler/parser.h"
#include "runtime/engine.h"
#include "runtime/hang_location.h"
#include "runtime/interpreter.h"
#include "runtime/observation_reader.h"
#include "runtime/scanner.h"
#include "base/terminal_state.h"
#include "base/timestamp.h"

namespace culprit {

namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

int current_year() {
  auto now = std::chrono::system_clock::now();
  auto days = std::chrono::floor<std::chrono::days>(now);
  return static_cast<int>(std::chrono::year_month_day(days).year());
}

struct ObservationGroupKey {
  std::string host, source, file;
  bool operator<(const ObservationGroupKey& o) const {
    return std::tie(host, source, file) < std::tie(o.host, o.source, o.file);
  }
};

}  // namespace

EngineInfo engine_info(const Program& program) {
  EngineInfo e;
  e.culprit_version = CULPRIT_VERSION;
  e.evaluator = program.evaluator();
  e.catalog_name = program.catalog().name;
  e.catalog_version = program.catalog().version;
  e.catalog_digest = program.catalog().digest;
  for (const auto& part : program.catalog().parts) e.catalog_parts.push_back({part.name, part.version, part.digest});
  e.hyperscan_version = hyperscan_version();
  e.re2_version = re2_version();
  e.antlr_version = antlr_runtime_version();
  return e;
}

DiagnoseRequest request_from_bundle(const Bundle& bundle) {
  DiagnoseRequest r;
  static_cast<EvidenceSet&>(r) = static_cast<const EvidenceSet&>(bundle);
  r.context = bundle.context;
  return r;
}

DiagnoseRequest request_from_bundle(Bundle&& bundle) {
  DiagnoseRequest r;
  static_cast<EvidenceSet&>(r) = std::move(static_cast<EvidenceSet&>(bundle));
  r.context = std::move(bundle.context);
  return r;
}

// The zone a host's clock runs in, as its own logs state it: a line whose
// stamp carries a non-zero offset ("2026-03-14T14:35:42+08:00", journald
// --output=short-iso), or a collector's UTC stamp followed on the same line by
// the application's zone-less local one ("2024-03-14T06:35:42.27Z
// [2024-03-14 14:35:42,274] ..."), rounded to a quarter hour. Only the head
// of each file is read (the zone does not change within a job).
struct HostZone {
  int32_t offset_sec = 0;
  std::string file;  // where it was learned
};

static std::optional<int32_t> zone_from_line(std::string_view line, const YearHint& hint) {
  LineTime lt = parse_line_time(line, hint);
  if (!lt.has_wall || !lt.has_zone) return std::nullopt;
  if (lt.zone_offset_sec != 0) return lt.zone_offset_sec;
  // A UTC stamp: a second, zone-less stamp later on the line is the local time.
  for (size_t i = 1; i + 19 <= line.size(); ++i) {
    if (!(line[i - 1] == ' ' || line[i - 1] == '[') || !std::isdigit(static_cast<unsigned char>(line[i]))) continue;
    LineTime second = parse_line_time(line.substr(i), hint);
    if (!second.has_wall || second.has_zone) continue;
    const int64_t diff_s = (second.wall_ns - lt.wall_ns) / 1'000'000'000;
    const int64_t quarter = (diff_s >= 0 ? diff_s + 450 : diff_s - 450) / 900 * 900;
    if (quarter != 0 && std::llabs(quarter) <= 14 * 3600 && std::llabs(diff_s - quarter) <= 120)
      return static_cast<int32_t>(quarter);
    return std::nullopt;
  }
  return std::nullopt;
}

// The head of every file of a host that has not stated its zone yet is
// read (one read(2) into a buffer reused from file to file; on 4,096 nodes a
// stream and a line string per file made this a second or more).
static std::map<std::string, HostZone> host_zones(const std::vector<LogFile>& files, const YearHint& hint) {
  constexpr size_t kHeadBytes = 256u << 10;
  constexpr int kHeadLines = 2000;
  std::map<std::string, HostZone> out;
  std::vector<char> head(kHeadBytes);
  for (const auto& f : files) {
    if (out.count(f.host)) continue;
    int fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) continue;  // the scan reports it
    const ssize_t got = read_full(fd, head.data(), head.size());
    ::close(fd);
    const size_t have = got > 0 ? static_cast<size_t>(got) : 0;  // an unreadable file: the scan reports it
    std::string_view text(head.data(), have);
    for (int n = 0; n < kHeadLines && !text.empty(); ++n) {
      size_t nl = text.find('\n');
      if (nl == std::string_view::npos && have == head.size()) break;  // a line cut by the buffer's end
      std::string_view line = text.substr(0, nl);
      text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
      if (auto z = zone_from_line(line, hint)) {
        out[f.host] = HostZone{*z, f.display_path};
        break;
      }
    }
  }
  return out;
}

// Which rules lead to a cause and which event kinds they read: a rule over
// events that creates a symptom of priority >= 50 (or of a priority only
// known at run time), or that derives events of a kind that leads to one
// (early rules), to a fixpoint.
struct CauseRules {
  std::vector<bool> kind;  // by event kind id
  std::vector<bool> rule;  // by rule index
};

static CauseRules cause_rules(const ir::Catalog& cat) {
  CauseRules c{std::vector<bool>(cat.event_kinds.size(), false), std::vector<bool>(cat.rules.size(), false)};
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < cat.rules.size(); ++i) {
      const auto& r = cat.rules[i];
      if (c.rule[i] || !r.for_query || r.for_query->symptom) continue;
      bool leads = false;
      for (const auto& a : r.actions) {
        if (a.kind == ir::ActionKind::Symptom)
          leads = leads || !a.priority || a.priority->op != ir::Op::Const || a.priority->constant.i >= 50;
        if (a.kind == ir::ActionKind::Emit && a.kind_id >= 0 && static_cast<size_t>(a.kind_id) < c.kind.size())
          leads = leads || c.kind[static_cast<size_t>(a.kind_id)];
      }
      if (!leads) continue;
      c.rule[i] = changed = true;
      for (int32_t k : r.for_query->kinds) c.kind[static_cast<size_t>(k)] = true;
    }
  }
  return c;
}

// The workload context as a World with no evidence: enough to judge whether
// a rule's filter would take one event (queries find nothing).
class ContextWorld final : public World {
 public:
  explicit ContextWorld(const WorkloadContext& c) : c_(c) {
    for (const auto& n : c.nodes) names_ += (names_.empty() ? "" : ",") + n;
  }
  void candidates(const ir::Query&, Env&, CandidateVisitor) const override {}
  Value terminal(int field) const override {
    if (field == 0) return c_.terminal.state.empty() ? Value::null() : Value::string(c_.terminal.state);
    return c_.terminal.exit_code ? Value::integer(*c_.terminal.exit_code) : Value::null();
  }
  Value outcome(int) const override { return Value::null(); }
  Value workload(int field) const override {
    switch (field) {
      case 0: return Value::integer(static_cast<int64_t>(c_.nodes.size()));
      case 1: return Value::string(c_.workload_id);
      case 2: return c_.start ? Value::time(*c_.start) : Value::null();
      case 3: return c_.end ? Value::time(*c_.end) : Value::null();
      case 4: return Value::string(c_.scheduler);
      case 5: return Value::string(names_);
    }
    return Value::null();
  }
  bool covered(const std::string&, const std::string&) const override { return true; }
  double coverage(const std::string&) const override { return 1.0; }
  bool is_node(std::string_view name) const override {
    return std::find(c_.nodes.begin(), c_.nodes.end(), name) != c_.nodes.end();
  }

 private:
  const WorkloadContext& c_;
  std::string names_;
};

static bool taken_by_a_cause_rule(const Program& program, const CauseRules& cause, const World& world, const Event& ev) {
  const auto& cat = program.catalog();
  for (size_t i = 0; i < cat.rules.size(); ++i) {
    const auto& r = cat.rules[i];
    if (!cause.rule[i]) continue;
    if (!std::binary_search(r.for_query->kinds.begin(), r.for_query->kinds.end(), ev.kind)) continue;
    Env env;
    env.catalog = &cat;
    env.regexes = &program.expression_regexes();
    env.rule = &r;
    env.world = &world;
    env.native = program.native();
    env.slots.resize(static_cast<size_t>(std::max(1, r.slot_count)));
    env.slots[0] = Item{&ev, nullptr};
    if (!passes_filter(*r.for_query, env)) continue;
    bool ok = true;
    for (const auto& w : r.wheres) ok = ok && run_expression(w, env).truthy();
    if (ok) return true;
  }
  return false;
}

// ------------------------------------------------------------ the steps
// diagnose() below is these steps in order; each takes what the ones
// before it produced, so the order a verdict is built in can be read there.

namespace {

// Evidence from a node under another name (an FQDN, an alias) is that
// node's evidence: otherwise a GPU fault in logs/node-02.cluster.local/
// would sit on a "control-plane host" and never name node-02. What was
// renamed, and what could not be, is said in coverage.
struct HostNames {
  std::map<std::string, std::string> renamed;  // host -> node, for the coverage note
  std::map<std::string, std::string> how_renamed, ambiguous;
};

HostNames resolve_hosts(const WorkloadContext& ctx, const std::set<std::string>& workload_nodes,
                        std::vector<LogFile>& files, std::vector<Observation>& observations) {
  HostNames names;
  std::map<std::string, std::string> resolved;  // every host looked up once: "" = not a node
  auto resolve = [&](std::string& host) {
    if (workload_nodes.count(host)) return;
    auto it = resolved.find(host);
    if (it == resolved.end()) {
      std::string how;
      std::string node = canonical_host(ctx, host, &how);
      if (node.empty() && how.rfind(kAmbiguousHost, 0) == 0) names.ambiguous[host] = how.substr(kAmbiguousHost.size());
      if (!node.empty()) {
        names.renamed[host] = node;
        names.how_renamed[host] = how;
      }
      it = resolved.emplace(host, node).first;
    }
    if (!it->second.empty()) host = it->second;
  };
  for (auto& f : files) {
    resolve(f.host);
    f.control_plane = !workload_nodes.count(f.host);
  }
  for (auto& o : observations) resolve(o.host);
  return names;
}

// The scope every file and stream is scanned in: the workload's window
// widened by the slack, its nodes, and the year that stamps without one
// belong to. Shared by all scans so that they agree on what is in scope.
ScanOptions scan_scope(const WorkloadContext& ctx, const DiagnoseOptions& opt) {
  ScanOptions scan;
  if (ctx.start) scan.scope_start = *ctx.start - opt.slack_before;
  if (ctx.end) scan.scope_end = *ctx.end + opt.slack_after;
  scan.window_start = ctx.start;
  scan.window_end = ctx.end;
  scan.workload_nodes = ctx.nodes;
  scan.context_ranks = ctx.ranks;
  scan.context_tasks = ctx.tasks;
  std::sort(scan.workload_nodes.begin(), scan.workload_nodes.end());
  for (const auto& [node, aliases] : ctx.aliases)
    for (const auto& a : aliases) scan.node_aliases.emplace_back(a, node);
  std::sort(scan.node_aliases.begin(), scan.node_aliases.end());
  scan.year_hint = make_year_hint(ctx.start, ctx.end, current_year());
  scan.verify_captures = opt.verify_captures;
  return scan;
}

// The lines of in-memory observations of one (host, source, file), scanned
// like a file.
struct Stream {
  ObservationGroupKey key;
  std::vector<std::string> lines;
  std::vector<int64_t> numbers;
  std::vector<std::optional<int64_t>> times;
  std::vector<int64_t> offsets;
};

// In-memory observations, sorted into what the scan reads (line streams)
// and what it does not need to (metric samples, events already).
struct Observed {
  std::map<ObservationGroupKey, Stream> streams;
  std::vector<Event> metric_events;
};

// Metric samples become events here, the scope applied as the scanner would;
// log lines are grouped into streams and put in provenance order within
// each, so that the order observations arrived in does not matter.
Observed sort_observations(const ir::Catalog& cat, const std::set<std::string>& workload_nodes,
                           const ScanOptions& scan, std::vector<Observation> observations) {
  Observed out;
  // Metric events of one series share their host, source and file names.
  std::unordered_map<std::string, SharedString> names;
  auto shared = [&](const std::string& s) -> const SharedString& {
    auto [it, fresh] = names.try_emplace(s);
    if (fresh) it->second = SharedString(s);
    return it->second;
  };
  for (auto& o : observations) {
    if (o.is_metric) {
      Event ev;
      ev.kind = cat.metric_kind;
      ev.host = shared(o.host);
      ev.control_plane = !workload_nodes.count(o.host);
      ev.producer = "observation";
      ev.where = {ev.host, shared(o.source), shared(o.file), o.line, 0, o.ts, "observation",
                  fmt::format("{}{{{}}} {}", o.metric, o.labels, o.value), std::nullopt};
      ev.fields.assign(cat.event_kinds[static_cast<size_t>(cat.metric_kind)].fields.size(), Value::null());
      const auto& schema = cat.event_kinds[static_cast<size_t>(cat.metric_kind)];
      ev.fields[static_cast<size_t>(schema.slot(cat.field_id("name")))] = Value::string(o.metric);
      ev.fields[static_cast<size_t>(schema.slot(cat.field_id("value")))] = Value::real(o.value);
      ev.fields[static_cast<size_t>(schema.slot(cat.field_id("labels")))] = Value::string(o.labels);
      if (!ev.where.ts || ((!scan.scope_start || *ev.where.ts >= *scan.scope_start) &&
                           (!scan.scope_end || *ev.where.ts <= *scan.scope_end)))
        out.metric_events.push_back(std::move(ev));
      continue;
    }
    ObservationGroupKey key{o.host, o.source, o.file};
    auto& s = out.streams[key];
    s.key = key;
    s.lines.push_back(std::move(o.text));  // the observation is not used again
    s.numbers.push_back(o.line);
    s.times.push_back(o.ts);
    s.offsets.push_back(o.offset);
  }
  for (auto& entry : out.streams) {
    Stream& s = entry.second;  // (a named reference: clang 14 cannot capture a structured binding)
    std::vector<size_t> idx(s.lines.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      if (s.numbers[a] != s.numbers[b]) return s.numbers[a] < s.numbers[b];
      return s.lines[a] < s.lines[b];
    });
    Stream sorted;
    sorted.key = s.key;
    for (size_t i : idx) {
      sorted.lines.push_back(std::move(s.lines[i]));
      sorted.numbers.push_back(s.numbers[i]);
      sorted.times.push_back(s.times[i]);
      sorted.offsets.push_back(s.offsets[i]);
    }
    s = std::move(sorted);
  }
  return out;
}

// Hosts known only from observations have no file head to state their
// zone; their first lines stand in for it.
void learn_stream_zones(const std::vector<const Stream*>& streams, const YearHint& hint,
                        std::map<std::string, HostZone>& zones) {
  for (const Stream* s : streams) {
    if (zones.count(s->key.host)) continue;
    for (size_t n = 0; n < s->lines.size() && n < 2000; ++n) {
      if (auto z = zone_from_line(s->lines[n], hint)) {
        zones[s->key.host] = HostZone{*z, s->key.file};
        break;
      }
    }
  }
}

// Every file, then every stream, scanned on the worker threads. Results land
// in fixed slots (files first, in request order, then streams) so that the
// outcome does not depend on which thread ran what.
std::vector<ScanResult> scan_evidence(const std::shared_ptr<const Program>& program,
                                      const std::vector<LogFile>& files,
                                      const std::vector<const Stream*>& stream_list,
                                      const std::map<std::string, HostZone>& zones,
                                      const std::set<std::string>& workload_nodes, ScanOptions scan,
                                      const DiagnoseOptions& opt) {
  size_t jobs = files.size() + stream_list.size();
  std::vector<ScanResult> results(jobs);
  // Largest files first, so one big file does not start last.
  std::vector<size_t> order(jobs);
  for (size_t i = 0; i < jobs; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    uint64_t sa = a < files.size() ? files[a].size : 0, sb = b < files.size() ? files[b].size : 0;
    return sa > sb;
  });
  unsigned threads = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  // A large file is split across the threads that have no file of their
  // own (ScanHelpers): a bundle of one 10 GB log still uses every core.
  std::vector<bool> split(files.size(), false);
  size_t split_files = 0;
  if (threads > 1 && !opt.max_events)
    for (size_t i = 0; i < files.size(); ++i)
      if (files[i].size >= opt.split_bytes) split[i] = true, ++split_files;
  threads = static_cast<unsigned>(std::min<size_t>(threads, std::max<size_t>(1, split_files ? threads : jobs)));
  if (opt.max_events) threads = 1;  // a total cap is applied in job order
  size_t events_left = opt.max_events;
  ScanHelpers helpers(split_files);
  auto t_scan = std::chrono::steady_clock::now();
  std::atomic<size_t> next{0};
  std::mutex captures_mutex;
  auto worker = [&]() {
    Scanner scanner(program);
    for (size_t k; (k = next.fetch_add(1)) < jobs;) {
      size_t i = order[k];
      if (opt.max_events) scan.max_events_per_file = std::min(limits::kEventsPerFile, events_left);
      if (i < files.size()) {
        // A host whose logs state a zone has its dmesg -T times moved to UTC.
        auto z = zones.find(files[i].host);
        std::optional<ScanOptions> local;
        if (z != zones.end()) {
          local = scan;
          local->dmesg_offset_ns = int64_t{z->second.offset_sec} * 1'000'000'000;
        }
        results[i] = scanner.scan_file(files[i], local ? *local : scan, split[i] ? &helpers : nullptr);
      } else {
        const Stream& s = *stream_list[i - files.size()];
        ScanOptions local = scan;
        if (auto z = zones.find(s.key.host); z != zones.end()) local.dmesg_offset_ns = int64_t{z->second.offset_sec} * 1'000'000'000;
        results[i] = scanner.scan_lines(s.key.host, s.key.source, s.key.file, !workload_nodes.count(s.key.host), s.lines,
                                        s.numbers, s.times, local, s.offsets);
      }
      if (opt.max_events) events_left -= std::min(events_left, results[i].events.size());
    }
    if (split_files) helpers.help(scanner);  // nothing of its own left: help with the large files
    if (opt.captures) {
      const CaptureScratch& c = scanner.capture_scratch();
      std::lock_guard<std::mutex> lock(captures_mutex);
      opt.captures->pcre2 += c.fast_matches;
      opt.captures->fallbacks += c.fallbacks;
      opt.captures->mismatches += c.mismatches;
      for (const auto& n : c.notes) opt.captures->notes.push_back(n);
    }
  };
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  if (opt.timings) {
    opt.timings->scan_ms = ms_since(t_scan);
    opt.timings->threads = threads;
  }
  return results;
}

// Which sources had data from which hosts: the verdict's per-source counts,
// and the (source, host) pairs that back covered() and coverage() in rules.
struct SourceTally {
  std::set<std::pair<std::string, std::string>> host_sources;
  std::set<std::string> control_plane, nodes_with_any;
};

SourceTally tally_sources(const ir::Catalog& cat, const WorkloadContext& ctx,
                          const std::set<std::string>& workload_nodes, const std::vector<CollectorReport>& collectors,
                          const std::vector<ScanResult>& results, const std::vector<Event>& metric_events,
                          size_t max_events, Coverage& cov) {
  SourceTally t;
  // Every source the catalog reads is listed, with or without data, so a
  // source that is missing everywhere shows as missing; so is every source
  // that had data or that a collector reported on.
  for (const auto& x : cat.extractors)
    for (const auto& s : x.sources) cov.sources[s];
  for (const auto& c : collectors)
    if (!c.source.empty()) cov.sources[c.source];
  std::vector<std::string> combined_output_files, unplaced_files;
  for (const auto& r : results) {
    auto& sc = cov.sources[r.source];
    ++sc.files;
    sc.bytes_read += r.bytes;
    sc.lines_read += r.lines;
    sc.lines_out_of_scope += r.lines_out_of_scope;
    sc.lines_invalid_utf8 += r.lines_invalid_utf8;
    sc.lines_truncated += r.lines_truncated;
    sc.events_without_time += r.events_without_time;
    sc.events += static_cast<int64_t>(r.events.size());
    sc.events_out_of_scope += r.events_out_of_scope;
    sc.events_superseded += r.events_superseded;
    sc.events_rank_unplaced += r.events_rank_unplaced;
    sc.events_unplaced += r.events_unplaced;
    if (r.events_over_cap)
      sc.errors.push_back(fmt::format("{}: {} events over the {} cap were not kept", r.file, r.events_over_cap,
                                      max_events ? "per-file or per-request" : "per-file"));
    if (!r.error.empty()) sc.errors.push_back(r.error);
    if (r.lines > 0) {
      t.host_sources.insert({r.source, r.host});
      if (r.control_plane) t.control_plane.insert(r.host);
      else t.nodes_with_any.insert(r.host);
    }
    // An application log that holds other nodes' lines (srun --label's
    // tasks, mpirun's ranks, torchrun's or Ray's or pdsh's relays, srun's
    // collected output) is the job's combined output: every rank's failure
    // would be in it. So every node was heard on it, and a failure that
    // shows for one node only shows where it began (the single origin of
    // docs/language.md §1).
    if (r.source == "app" && r.combined_output) combined_output_files.push_back(r.file);
    if (r.events_unplaced > 0) unplaced_files.push_back(fmt::format("{} ({})", r.file, r.events_unplaced));
  }
  // A collector that searched a node's log for a source and returned no
  // line (a remote store that sent only the lines the catalog can match)
  // still covered that node: absence of matches is not absence of the log.
  for (const auto& c : collectors)
    if (!c.source.empty())
      for (const auto& n : c.nodes_covered)
        if (workload_nodes.count(n)) {
          t.host_sources.insert({c.source, n});
          t.nodes_with_any.insert(n);
        }
  if (!combined_output_files.empty()) {
    std::sort(combined_output_files.begin(), combined_output_files.end());
    for (const auto& n : ctx.nodes) {
      t.host_sources.insert({"app", n});
      t.nodes_with_any.insert(n);
    }
    cov.warnings.push_back(fmt::format(
        "{} {} other nodes' lines (a launcher's relay, rank tags or srun's reports of other nodes' tasks): read as the "
        "job's combined output, which holds every node's application output",
        fmt::join(combined_output_files, ", "), combined_output_files.size() == 1 ? "holds" : "hold"));
  }
  if (!unplaced_files.empty()) {
    std::sort(unplaced_files.begin(), unplaced_files.end());
    cov.warnings.push_back(fmt::format(
        "events on combined-output lines that do not say which node wrote them (srun's output without --label, a rank "
        "tag nothing places) name no node: {}",
        fmt::join(unplaced_files, ", ")));
  }
  for (const auto& e : metric_events) {
    t.host_sources.insert({e.where.source.str(), e.host.str()});
    cov.sources[e.where.source.str()].events += 1;
    if (e.control_plane) t.control_plane.insert(e.host.str());
    else t.nodes_with_any.insert(e.host.str());
  }
  // Extractors of a source that had lines, which matched none of them.
  std::vector<int64_t> matched(cat.extractors.size());
  for (const auto& r : results)
    for (size_t i = 0; i < r.extractor_matches.size() && i < matched.size(); ++i) matched[i] += r.extractor_matches[i];
  for (size_t i = 0; i < cat.extractors.size(); ++i) {
    if (matched[i]) continue;
    const auto& x = cat.extractors[i];
    if (std::any_of(x.sources.begin(), x.sources.end(), [&](const std::string& s) {
          auto it = cov.sources.find(s);
          return it != cov.sources.end() && it->second.lines_read > 0;
        }))
      cov.silent_extractors.push_back(x.name);
  }
  std::sort(cov.silent_extractors.begin(), cov.silent_extractors.end());
  for (auto& [source, sc] : cov.sources) {
    sc.nodes_expected = static_cast<int64_t>(ctx.nodes.size());
    for (const auto& n : ctx.nodes) (t.host_sources.count({source, n}) ? sc.nodes_with_data : sc.nodes_missing).push_back(n);
    for (const auto& h : t.control_plane)
      if (t.host_sources.count({source, h})) sc.control_plane_hosts.push_back(h);
    std::sort(sc.errors.begin(), sc.errors.end());
  }
  return t;
}

// Lines that a cause extractor matched but that fell outside the scope are
// named, not only counted: a fault logged just before the window (or a
// clock that is off) is something an operator wants to see. A line counts
// when a rule that leads to a cause would take it (its `for` filter and
// `where`s, judged without the other evidence).
void name_out_of_scope_causes(const Program& program, const WorkloadContext& ctx,
                              const std::vector<ScanResult>& results, Coverage& cov) {
  const auto& cat = program.catalog();
  const auto cause = cause_rules(cat);
  ContextWorld world(ctx);
  std::map<std::tuple<std::string, std::string>, OutOfScopeKind> named;  // (kind name, host)
  for (const auto& r : results) {
    for (const auto& ev : r.out_of_scope_samples) {
      if (!cause.kind[static_cast<size_t>(ev.kind)] || !taken_by_a_cause_rule(program, cause, world, ev)) continue;
      named[{cat.event_kinds[static_cast<size_t>(ev.kind)].name, r.host}].note(*ev.where.ts, ctx.start, ctx.end);
    }
  }
  for (const auto& [key, n] : named) {
    const auto& [kind, host] = key;
    std::string where;
    if (n.nearest_before_ns) where = fmt::format("the nearest {} before the window", format_duration(*n.nearest_before_ns));
    if (n.nearest_after_ns)
      where += fmt::format("{}the nearest {} after it", where.empty() ? "" : ", ", format_duration(*n.nearest_after_ns));
    cov.warnings.push_back(fmt::format("{}{} line{} of a possible cause ({}) on {} outside the scope: {}",
                                       n.count > ScanResult::kOutOfScopeSamples ? "at least " : "", n.count,
                                       n.count == 1 ? "" : "s", kind, host, where));
  }
}

// Times moved to another zone change what the evidence says; say where
// dmesg -T times were moved to the zone a host's other logs state.
void note_zone_shifts(const std::vector<ScanResult>& results, const std::map<std::string, HostZone>& zones,
                      Coverage& cov) {
  std::map<std::string, int64_t> local_lines;
  for (const auto& r : results) local_lines[r.host] += r.dmesg_local_lines;
  for (const auto& [host, z] : zones) {
    if (local_lines[host] == 0) continue;
    const int32_t a = std::abs(z.offset_sec);
    cov.warnings.push_back(fmt::format("dmesg -T times of {} were read as UTC{}{:02d}:{:02d}, the zone its {} states",
                                       host, z.offset_sec < 0 ? '-' : '+', a / 3600, a % 3600 / 60, z.file));
  }
}

// The rest of coverage: what is missing, what was not read, what the
// collectors and the host names said, as lists and as warnings a reader
// of the verdict sees before trusting it.
void note_gaps(const WorkloadContext& ctx, const SourceTally& tally, const HostNames& hosts,
               DiagnoseRequest& req, Coverage& cov) {
  for (const auto& n : ctx.nodes)
    if (!tally.nodes_with_any.count(n)) cov.nodes_without_logs.push_back(n);
  cov.control_plane_hosts.assign(tally.control_plane.begin(), tally.control_plane.end());
  cov.ignored_files = req.ignored_files;
  cov.collectors = std::move(req.collectors);
  for (auto& c : cov.collectors) {
    std::sort(c.nodes_expected.begin(), c.nodes_expected.end());
    std::sort(c.nodes_covered.begin(), c.nodes_covered.end());
    std::sort(c.errors.begin(), c.errors.end());
  }
  std::sort(cov.collectors.begin(), cov.collectors.end(), [](const CollectorReport& a, const CollectorReport& b) {
    return std::tie(a.collector, a.source, a.status, a.reason) < std::tie(b.collector, b.source, b.status, b.reason);
  });
  // A warning names at most limits::kCoverageNodeNames nodes: the complete
  // list is coverage.nodes_without_logs, once.
  auto some_nodes = [](const std::vector<std::string>& names) {
    const size_t shown = std::min(names.size(), limits::kCoverageNodeNames);
    std::string out = fmt::format("{}", fmt::join(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(shown), ", "));
    if (shown < names.size()) out += fmt::format(", … and {} more", names.size() - shown);
    return out;
  };
  if (!cov.nodes_without_logs.empty())
    cov.warnings.push_back(fmt::format("no logs at all from {} of {} nodes: {}", cov.nodes_without_logs.size(), ctx.nodes.size(),
                                       some_nodes(cov.nodes_without_logs)));
  for (const char* s : {"kernel", "app"}) {
    const auto& sc = cov.sources[s];
    if (!sc.nodes_missing.empty() && sc.nodes_missing.size() != cov.nodes_without_logs.size())
      cov.warnings.push_back(fmt::format("no {} log from {} of {} nodes: {}", s, sc.nodes_missing.size(), ctx.nodes.size(),
                                         some_nodes(sc.nodes_missing)));
  }
  for (const auto& [source, sc] : cov.sources)
    for (const auto& e : sc.errors) cov.warnings.push_back(source + ": " + e);
  for (const auto& c : cov.collectors) {
    if (c.status == "ok") continue;
    std::string what = c.source.empty() ? c.collector : fmt::format("{} ({})", c.collector, c.source);
    cov.warnings.push_back(c.reason.empty() ? fmt::format("collector {}: {}", what, c.status)
                                            : fmt::format("collector {}: {}: {}", what, c.status, c.reason));
  }
  for (const auto& [host, node] : hosts.renamed) {
    const std::string& how = hosts.how_renamed.at(host);
    cov.host_aliases.push_back({host, node, how});
    cov.warnings.push_back(fmt::format("evidence from host '{}' is read as {}'s: {}", host, node,
                                       how == "alias" ? "the context gives it as an alias of the node"
                                       : how == "short name" ? "the host's short name is the node's name"
                                                             : "it is the node's short name"));
  }
  for (const auto& [host, nodes] : hosts.ambiguous)
    cov.warnings.push_back(fmt::format("host '{}' could be any of the nodes {}; it is read as a control-plane host "
                                       "(give the node's aliases in the context)", host, nodes));
  if (!ctx.terminal.state.empty() && !is_known_terminal_state(ctx.terminal.state))
    cov.warnings.push_back(fmt::format("terminal state '{}' is not one Culprit knows; only COMPLETED (exit 0) counts as a "
                                       "clean end (known: {})",
                                       ctx.terminal.state, fmt::join(known_terminal_states(), ", ")));
  if (!cov.ignored_files.empty())
    cov.warnings.push_back(fmt::format("{} file{} in the bundle not read (not logs/<host>/<source>.log): {}", cov.ignored_files.size(),
                                       cov.ignored_files.size() == 1 ? "" : "s", fmt::join(cov.ignored_files, ", ")));
  // Files laid out as evidence but refused (links out of the bundle, FIFOs):
  // listed as ignored too, each with its reason.
  for (const auto& f : req.refused_files) {
    cov.warnings.push_back(fmt::format("{} not read: {}", f.path, f.reason));
    cov.ignored_files.push_back(f.path);
  }
  std::sort(cov.ignored_files.begin(), cov.ignored_files.end());
  for (auto& w : req.warnings) cov.warnings.push_back(std::move(w));
}

// The rule engine over everything scanned. Each file's events stay where
// the scanner made them (an EventList never moves its elements, and the
// scanner frees the chunks of dropped ones); the engine takes them as
// batches, so no event is copied or moved on the way. A catalog that ran
// out of evaluation steps is said in coverage.
EngineResult evaluate(const Program& program, const WorkloadContext& ctx, std::vector<ScanResult> results,
                      std::vector<Event> metric_events, SourceTally tally, const DiagnoseOptions& opt,
                      Coverage& cov) {
  std::vector<EventList> batches;
  batches.reserve(results.size() + 1);
  batches.emplace_back();
  for (auto& e : metric_events) batches.back().push_back(std::move(e));
  metric_events = {};
  for (auto& r : results)
    if (!r.events.empty()) batches.push_back(std::move(r.events));
  results = {};
  std::vector<std::pair<std::string, std::string>> hs(tally.host_sources.begin(), tally.host_sources.end());
  tally.host_sources.clear();
  int64_t event_count = 0;
  for (const auto& b : batches) event_count += static_cast<int64_t>(b.size());
  auto t_engine = std::chrono::steady_clock::now();
  EngineResult er = run_engine(program, ctx, hs, std::move(batches), opt.trail, opt.use_indexes, opt.eval_steps);
  if (!er.budget_exhausted_by.empty()) {
    // Not a problem of the evidence but of the catalog on it: said where
    // every reader of the verdict looks for what could not be done.
    cov.warnings.push_back(limits::exceeded(
        "eval_steps", er.step_budget,
        fmt::format("rule {} ran out of evaluation steps on {} events; evaluation stopped and nothing is attributed",
                    er.budget_exhausted_by, event_count),
        fmt::format("rule {}", er.budget_exhausted_by)));
  }
  if (opt.timings) {
    opt.timings->engine_ms = ms_since(t_engine);
    opt.timings->eval_steps = er.steps;
    opt.timings->eval_budget = er.step_budget;
    opt.timings->events = event_count;
    opt.timings->symptoms = static_cast<int64_t>(er.symptoms.size());
    auto& slow = opt.timings->slowest_rules;
    slow.clear();
    for (size_t i = 0; i < er.rule_ms.size(); ++i) slow.emplace_back(program.catalog().rules[i].name, er.rule_ms[i]);
    std::sort(slow.begin(), slow.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    if (slow.size() > 5) slow.resize(5);
    std::vector<double> by_stage(ir::kStageNames.size(), 0.0);
    std::vector<char> has_rules(ir::kStageNames.size(), 0);
    for (size_t i = 0; i < er.rule_ms.size(); ++i) {
      const auto st = static_cast<size_t>(program.catalog().rules[i].stage);
      by_stage[st] += er.rule_ms[i];
      has_rules[st] = 1;
    }
    opt.timings->stage_ms.clear();
    for (size_t st = 0; st < by_stage.size(); ++st)
      if (has_rules[st]) opt.timings->stage_ms.emplace_back(ir::kStageNames[st], by_stage[st]);
  }
  return er;
}

// The verdict: the engine's findings with the coverage they were made on
// and the versions that made them, so a reader can judge and reproduce it.
Verdict make_verdict(const Program& program, const WorkloadContext& ctx, EngineResult&& er, Coverage&& cov,
                     const DiagnoseOptions& opt) {
  Verdict v;
  v.workload = ctx;
  v.outcome = std::move(er.outcome);
  v.affected_nodes = std::move(er.affected_nodes);
  v.symptoms = std::move(er.symptoms);
  v.hang = locate_hang(v.symptoms);
  v.coverage = std::move(cov);
  v.engine = engine_info(program);
  v.trail = std::move(er.trail);
  v.slack_before_ns = opt.slack_before;
  v.slack_after_ns = opt.slack_after;
  return v;
}

}  // namespace

bool diagnose(std::shared_ptr<const Program> program, const DiagnoseRequest& req, const DiagnoseOptions& opt,
              Verdict& out, std::string& error) {
  DiagnoseRequest copy = req;
  return diagnose(std::move(program), std::move(copy), opt, out, error);
}

// A log under a name no extractor reads (a job's "slurm-4242.log", a
// collector's "launcher.log") would be read by nothing: it is the job's output
// by every other account, so it is read as `app`, from a bundle's file or from
// the lines a collector sent alike, and coverage says so. The standard sources
// keep their names, and a custom source the catalog reads (a site's
// "healthcheck") keeps its own. Returns the files so read ("path (source
// 'name')"), sorted and unique.
static std::vector<std::string> read_unknown_sources_as_app(const Program& program, std::vector<LogFile>& files,
                                                            std::vector<Observation>& observations) {
  static const std::set<std::string, std::less<>> standard = {"app", "kernel", "scheduler", "fabricmanager", "network"};
  auto unread = [&](const std::string& source) { return !standard.count(source) && !program.database_for(source); };
  std::set<std::string> read;
  for (auto& f : files)
    if (unread(f.source)) {
      read.insert(fmt::format("{} (source '{}')", f.display_path, f.source));
      f.source = "app";
    }
  for (auto& o : observations)
    if (!o.is_metric && unread(o.source)) {
      read.insert(fmt::format("{} (source '{}')", o.file, o.source));
      o.source = "app";
    }
  return {read.begin(), read.end()};
}

bool diagnose(std::shared_ptr<const Program> program, DiagnoseRequest&& req, const DiagnoseOptions& opt, Verdict& out,
              std::string& error) {
  const auto& ctx = req.context;
  const auto& cat = program->catalog();
  std::set<std::string> workload_nodes(ctx.nodes.begin(), ctx.nodes.end());
  auto t_start = std::chrono::steady_clock::now();

  std::vector<Observation> observations = std::move(req.observations);
  if (!req.observations_path.empty() && !read_observations_file(req.observations_path, observations, error)) return false;
  const HostNames hosts = resolve_hosts(ctx, workload_nodes, req.files, observations);

  std::vector<std::string> read_as_app = read_unknown_sources_as_app(*program, req.files, observations);

  const ScanOptions scan = scan_scope(ctx, opt);
  auto zones = host_zones(req.files, scan.year_hint);
  Observed observed = sort_observations(cat, workload_nodes, scan, std::move(observations));
  std::vector<const Stream*> stream_list;
  for (const auto& [k, s] : observed.streams) stream_list.push_back(&s);
  learn_stream_zones(stream_list, scan.year_hint, zones);
  if (opt.timings) opt.timings->read_ms = ms_since(t_start);
  std::vector<ScanResult> results = scan_evidence(program, req.files, stream_list, zones, workload_nodes, scan, opt);
  settle_srun_collected_output(results);

  Coverage cov;
  SourceTally tally = tally_sources(cat, ctx, workload_nodes, req.collectors, results, observed.metric_events,
                                    opt.max_events, cov);
  if (!read_as_app.empty())
    cov.warnings.push_back(fmt::format("{} read as the application's output (app): no extractor reads {}: {}",
                                       read_as_app.size() == 1 ? "1 file" : fmt::format("{} files", read_as_app.size()),
                                       read_as_app.size() == 1 ? "its source" : "their sources", fmt::join(read_as_app, ", ")));
  name_out_of_scope_causes(*program, ctx, results, cov);
  note_zone_shifts(results, zones, cov);
  note_gaps(ctx, tally, hosts, req, cov);

  EngineResult er = evaluate(*program, ctx, std::move(results), std::move(observed.metric_events), std::move(tally), opt, cov);
  out = make_verdict(*program, ctx, std::move(er), std::move(cov), opt);
  return true;
}

}  // namespace culprit
