#include "runtime/diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "base/limits.h"
#include "compiler/parser.h"
#include "runtime/engine.h"
#include "runtime/observation_reader.h"
#include "runtime/scanner.h"
#include "base/terminal_state.h"
#include "base/timestamp.h"

namespace culprit {

namespace {

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
  r.context = bundle.context;
  r.files = bundle.files;
  r.ignored_files = bundle.ignored_files;
  r.refused_files = bundle.refused_files;
  r.warnings = bundle.warnings;
  r.observations_path = bundle.observations_path;
  return r;
}

DiagnoseRequest request_from_bundle(Bundle&& bundle) {
  DiagnoseRequest r;
  r.context = std::move(bundle.context);
  r.files = std::move(bundle.files);
  r.ignored_files = std::move(bundle.ignored_files);
  r.refused_files = std::move(bundle.refused_files);
  r.warnings = std::move(bundle.warnings);
  r.observations_path = std::move(bundle.observations_path);
  return r;
}

bool diagnose(std::shared_ptr<const Program> program, const DiagnoseRequest& req, const DiagnoseOptions& opt,
              Verdict& out, std::string& error) {
  DiagnoseRequest copy = req;
  return diagnose(std::move(program), std::move(copy), opt, out, error);
}

bool diagnose(std::shared_ptr<const Program> program, DiagnoseRequest&& req, const DiagnoseOptions& opt, Verdict& out,
              std::string& error) {
  const auto& ctx = req.context;
  std::set<std::string> workload_nodes(ctx.nodes.begin(), ctx.nodes.end());

  std::vector<Observation> observations = std::move(req.observations);
  if (!req.observations_path.empty() && !read_observations_file(req.observations_path, observations, error)) return false;

  // Evidence from a node under another name (an FQDN, an alias) is that
  // node's evidence: otherwise a GPU fault in logs/node-02.cluster.local/
  // would sit on a "control-plane host" and never name node-02.
  std::map<std::string, std::string> renamed;  // host -> node, for the coverage note
  std::map<std::string, std::string> how_renamed, ambiguous;
  std::map<std::string, std::string> resolved;  // every host looked up once: "" = not a node
  auto resolve = [&](std::string& host) {
    if (workload_nodes.count(host)) return;
    auto it = resolved.find(host);
    if (it == resolved.end()) {
      std::string how;
      std::string node = canonical_host(ctx, host, &how);
      if (node.empty() && how.rfind("ambiguous", 0) == 0) ambiguous[host] = how.substr(11);
      if (!node.empty()) {
        renamed[host] = node;
        how_renamed[host] = how;
      }
      it = resolved.emplace(host, node).first;
    }
    if (!it->second.empty()) host = it->second;
  };
  for (auto& f : req.files) {
    resolve(f.host);
    f.control_plane = !workload_nodes.count(f.host);
  }
  for (auto& o : observations) resolve(o.host);

  ScanOptions scan;
  if (ctx.start) scan.scope_start = *ctx.start - opt.slack_before;
  if (ctx.end) scan.scope_end = *ctx.end + opt.slack_after;
  scan.year_hint = make_year_hint(ctx.start, ctx.end, current_year());

  // Work list: files, then in-memory observation streams. Results land in
  // fixed slots so the outcome does not depend on which thread ran what.
  struct Stream {
    ObservationGroupKey key;
    std::vector<std::string> lines;
    std::vector<int64_t> numbers;
    std::vector<std::optional<int64_t>> times;
    std::vector<int64_t> offsets;
  };
  std::map<ObservationGroupKey, Stream> streams;
  std::vector<Event> metric_events;
  const auto& cat = program->catalog();
  for (auto& o : observations) {
    if (o.is_metric) {
      Event ev;
      ev.kind = cat.metric_kind;
      ev.host = o.host;
      ev.control_plane = !workload_nodes.count(o.host);
      ev.producer = "observation";
      ev.where = {o.host, o.source, o.file, o.line, 0, o.ts, "observation",
                  fmt::format("{}{{{}}} {}", o.metric, o.labels, o.value)};
      ev.fields.assign(cat.event_kinds[static_cast<size_t>(cat.metric_kind)].fields.size(), Value::null());
      const auto& schema = cat.event_kinds[static_cast<size_t>(cat.metric_kind)];
      ev.fields[static_cast<size_t>(schema.slot(cat.field_id("name")))] = Value::string(o.metric);
      ev.fields[static_cast<size_t>(schema.slot(cat.field_id("value")))] = Value::real(o.value);
      ev.fields[static_cast<size_t>(schema.slot(cat.field_id("labels")))] = Value::string(o.labels);
      if (!ev.where.ts || ((!scan.scope_start || *ev.where.ts >= *scan.scope_start) &&
                           (!scan.scope_end || *ev.where.ts <= *scan.scope_end)))
        metric_events.push_back(std::move(ev));
      continue;
    }
    ObservationGroupKey key{o.host, o.source, o.file};
    auto& s = streams[key];
    s.key = key;
    s.lines.push_back(std::move(o.text));  // the observation is not used again
    s.numbers.push_back(o.line);
    s.times.push_back(o.ts);
    s.offsets.push_back(o.offset);
  }
  // Within a stream, lines are taken in provenance order so that the order
  // observations arrived in does not matter.
  for (auto& entry : streams) {
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
  observations = {};
  std::vector<const Stream*> stream_list;
  for (const auto& [k, s] : streams) stream_list.push_back(&s);

  size_t jobs = req.files.size() + stream_list.size();
  std::vector<ScanResult> results(jobs);
  // Largest files first, so one big file does not start last.
  std::vector<size_t> order(jobs);
  for (size_t i = 0; i < jobs; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    uint64_t sa = a < req.files.size() ? req.files[a].size : 0, sb = b < req.files.size() ? req.files[b].size : 0;
    return sa > sb;
  });
  unsigned threads = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, std::max<size_t>(1, jobs)));
  if (opt.max_events) threads = 1;  // a total cap is applied in job order
  size_t events_left = opt.max_events;
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    Scanner scanner(program);
    for (size_t k; (k = next.fetch_add(1)) < jobs;) {
      size_t i = order[k];
      if (opt.max_events) scan.max_events_per_file = std::min(limits::kEventsPerFile, events_left);
      if (i < req.files.size()) {
        results[i] = scanner.scan_file(req.files[i], scan);
        // The scanner sizes a file's vector for every event it emitted, and
        // those out of scope are dropped afterwards (often half of them):
        // all files' events stay alive together, so give the room back now.
        results[i].events.shrink_to_fit();
      } else {
        const Stream& s = *stream_list[i - req.files.size()];
        results[i] = scanner.scan_lines(s.key.host, s.key.source, s.key.file, !workload_nodes.count(s.key.host), s.lines,
                                        s.numbers, s.times, scan, s.offsets);
      }
      if (opt.max_events) events_left -= std::min(events_left, results[i].events.size());
    }
  };
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }

  // Coverage.
  Coverage cov;
  std::set<std::pair<std::string, std::string>> host_sources;
  std::set<std::string> control_plane, nodes_with_any;
  // Every source the catalog reads is listed, with or without data, so a
  // source that is missing everywhere shows as missing; so is every source
  // that had data or that a collector reported on.
  for (const auto& x : cat.extractors)
    for (const auto& s : x.sources) cov.sources[s];
  for (const auto& c : req.collectors)
    if (!c.source.empty()) cov.sources[c.source];
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
    if (r.events_over_cap)
      sc.errors.push_back(fmt::format("{}: {} events over the {} cap were not kept", r.file, r.events_over_cap,
                                      opt.max_events ? "per-file or per-request" : "per-file"));
    if (!r.error.empty()) sc.errors.push_back(r.error);
    if (r.lines > 0) {
      host_sources.insert({r.source, r.host});
      if (r.control_plane) control_plane.insert(r.host);
      else nodes_with_any.insert(r.host);
    }
  }
  for (const auto& e : metric_events) {
    host_sources.insert({e.where.source, e.host});
    cov.sources[e.where.source].events += 1;
    if (e.control_plane) control_plane.insert(e.host);
    else nodes_with_any.insert(e.host);
  }
  for (auto& [source, sc] : cov.sources) {
    sc.nodes_expected = static_cast<int64_t>(ctx.nodes.size());
    for (const auto& n : ctx.nodes) (host_sources.count({source, n}) ? sc.nodes_with_data : sc.nodes_missing).push_back(n);
    for (const auto& h : control_plane)
      if (host_sources.count({source, h})) sc.control_plane_hosts.push_back(h);
    std::sort(sc.errors.begin(), sc.errors.end());
  }
  for (const auto& n : ctx.nodes)
    if (!nodes_with_any.count(n)) cov.nodes_without_logs.push_back(n);
  cov.control_plane_hosts.assign(control_plane.begin(), control_plane.end());
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
  if (!cov.nodes_without_logs.empty())
    cov.warnings.push_back(fmt::format("no logs at all from {} of {} nodes: {}", cov.nodes_without_logs.size(), ctx.nodes.size(),
                                       fmt::join(cov.nodes_without_logs, ", ")));
  for (const char* s : {"kernel", "app"}) {
    const auto& sc = cov.sources[s];
    if (!sc.nodes_missing.empty() && sc.nodes_missing.size() != cov.nodes_without_logs.size())
      cov.warnings.push_back(fmt::format("no {} log from {} of {} nodes: {}", s, sc.nodes_missing.size(), ctx.nodes.size(),
                                         fmt::join(sc.nodes_missing, ", ")));
  }
  for (const auto& [source, sc] : cov.sources)
    for (const auto& e : sc.errors) cov.warnings.push_back(source + ": " + e);
  for (const auto& c : cov.collectors) {
    if (c.status == "ok") continue;
    std::string what = c.source.empty() ? c.collector : fmt::format("{} ({})", c.collector, c.source);
    cov.warnings.push_back(c.reason.empty() ? fmt::format("collector {}: {}", what, c.status)
                                            : fmt::format("collector {}: {}: {}", what, c.status, c.reason));
  }
  for (const auto& [host, node] : renamed) {
    const std::string& how = how_renamed[host];
    cov.host_aliases.push_back({host, node, how});
    cov.warnings.push_back(fmt::format("evidence from host '{}' is read as {}'s: {}", host, node,
                                       how == "alias" ? "the context gives it as an alias of the node"
                                       : how == "short name" ? "the host's short name is the node's name"
                                                             : "it is the node's short name"));
  }
  for (const auto& [host, nodes] : ambiguous)
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

  // Each file's events stay in the vector the scanner filled (exactly sized
  // by Scanner's finish()); the engine takes them as batches, so no event is
  // copied or moved on the way.
  std::vector<std::vector<Event>> batches;
  batches.reserve(results.size() + 1);
  batches.push_back(std::move(metric_events));
  for (auto& r : results)
    if (!r.events.empty()) batches.push_back(std::move(r.events));
  results = {};
  std::vector<std::pair<std::string, std::string>> hs(host_sources.begin(), host_sources.end());
  host_sources.clear();
  EngineResult er = run_engine(*program, ctx, hs, std::move(batches), opt.trail);

  Verdict v;
  v.workload = ctx;
  v.outcome = std::move(er.outcome);
  v.affected_nodes = std::move(er.affected_nodes);
  v.symptoms = std::move(er.symptoms);
  v.coverage = std::move(cov);
  v.engine = engine_info(*program);
  v.trail = std::move(er.trail);
  v.slack_before_ns = opt.slack_before;
  v.slack_after_ns = opt.slack_after;
  out = std::move(v);
  return true;
}

}  // namespace culprit
