#include "blueprint/runner.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "base/timestamp.h"
#include "blueprint/files_collector.h"
#include "blueprint/slurm_discovery.h"
#include "blueprint/static_discovery.h"

namespace culprit::blueprint {

using ojson = nlohmann::ordered_json;

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} {}", b, units[u]) : fmt::format("{:.1f} {}", b, units[u]);
}

class Progress {
 public:
  Progress(std::ostream* log, bool terminal) : log_(log), terminal_(terminal), t0_(std::chrono::steady_clock::now()) {}
  RunCounts counts;
  int64_t bytes = 0;
  std::string current;

  void line(const std::string& text) {
    if (!log_) return;
    if (terminal_) *log_ << "\r\033[K";
    int64_t t = now_ns();
    *log_ << fmt::format("{} culprit run: {}\n", format_rfc3339(t - t % 1000000), text);
    if (terminal_) draw();
    log_->flush();
  }
  // One line per stored attempt: the log when not on a terminal (there the
  // status line and stdout show it).
  void attempt_line(const std::string& text) {
    if (terminal_) draw();
    else line(text);
  }
  void draw() {
    if (!log_ || !terminal_) return;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    *log_ << fmt::format("\r\033[Kdiscovered {} · skipped {} · attributed {} · failed {} · {} ({}/s){}", counts.discovered,
                         counts.skipped, counts.attributed, counts.failed, human_bytes(static_cast<double>(bytes)),
                         human_bytes(secs > 0 ? static_cast<double>(bytes) / secs : 0),
                         current.empty() ? "" : " · " + current);
    log_->flush();
  }
  void end() {
    if (log_ && terminal_) {
      *log_ << "\r\033[K";
      log_->flush();
    }
  }

 private:
  std::ostream* log_;
  bool terminal_;
  std::chrono::steady_clock::time_point t0_;
};

ojson attempt_json(const Attempt& a) {
  ojson j;
  j["key"] = a.key;
  j["scheduler"] = a.scheduler;
  j["cluster"] = a.cluster;
  j["workload_id"] = a.workload_id;
  j["attempt"] = a.attempt;
  j["state"] = a.state;
  j["exit_code"] = a.exit_code ? ojson(*a.exit_code) : ojson(nullptr);
  j["start"] = a.start ? ojson(format_rfc3339(*a.start)) : ojson(nullptr);
  j["end"] = a.end ? ojson(format_rfc3339(*a.end)) : ojson(nullptr);
  j["nodes"] = a.nodes;
  return j;
}

std::string verdict_line(const ojson& v) {
  std::string status = v.value("status", "");
  std::string what = status;
  if (v["domain"].is_string()) what += fmt::format(" {}/{}", v["domain"].get<std::string>(),
                                                   v["sub_domain"].is_string() ? v["sub_domain"].get<std::string>() : "");
  if (!v["culprit_nodes"].empty()) {
    std::vector<std::string> n;
    for (const auto& x : v["culprit_nodes"]) n.push_back(x.get<std::string>());
    what += fmt::format(" on {}", fmt::join(n, ","));
  }
  return what;
}

void write_text(std::ostream& out, const Attempt& a, const ojson& v) {
  out << fmt::format("{}  {}{}  nodes {}\n", a.key, a.state.empty() ? "?" : a.state,
                     a.exit_code ? fmt::format(" exit {}", *a.exit_code) : "", fmt::join(a.nodes, ","));
  out << "  " << verdict_line(v) << "\n";
  if (v["root_cause"].is_object()) out << "  " << v["root_cause"].value("summary", "") << "\n";
  for (const auto& w : v["coverage"]["warnings"]) out << "  warning: " << w.get<std::string>() << "\n";
}

}  // namespace

void make_pipeline(const BlueprintConfig& c, RunSetup& s) {
  if (c.static_discovery.enabled) s.discoveries.push_back(std::make_unique<StaticDiscovery>(c.static_discovery, c.cluster));
  if (c.slurm.enabled) s.discoveries.push_back(std::make_unique<SlurmDiscovery>(c.slurm));
  if (!c.files.sources.empty()) s.collectors.push_back(std::make_unique<FilesCollector>(c.files));
}

int run_blueprint(RunSetup& s, const std::atomic<bool>& stop) {
  const BlueprintConfig& cfg = *s.config;
  Progress p(s.log, s.log_is_terminal);
  BundleCollector bundle;
  int status = 0;
  int polls = 0;
  std::string err;
  p.line(fmt::format("store {} (schema v{}), attribution {}, {}", s.store->url(), s.store->schema_version(),
                     s.attribution->describe(), s.watch ? fmt::format("watching every {}", format_duration(cfg.watch.interval)) : "once"));
  while (!stop.load()) {
    ++polls;
    int64_t run_id = 0;
    if (!s.store->begin_run(s.watch ? "watch" : "once", run_id, err)) {
      p.line("store error: " + err);
      return 3;
    }
    RunCounts before = p.counts;
    int64_t ignored = 0;  // records discovery saw but does not attribute (running, unwanted states)
    bool poll_failed = false;
    for (auto& d : s.discoveries) {
      if (stop.load()) break;
      int64_t until = now_ns();
      DiscoveryWindow w;
      w.until = until;
      std::string cursor_name = "cursor:" + d->name();
      std::optional<int64_t> cursor;
      if (s.watch && !s.store->cursor(cursor_name, cursor, err)) {
        p.line("store error: " + err);
        return 3;
      }
      int64_t lookback = d->name() == "slurm" ? cfg.slurm.lookback : 0;
      w.since = cursor ? *cursor - cfg.watch.overlap : until - lookback;
      DiscoveryResult found;
      if (!d->discover(w, found, err)) {
        p.line(fmt::format("{} discovery failed: {}", d->name(), err));
        poll_failed = true;
        continue;
      }
      for (const auto& warn : found.warnings) p.line(fmt::format("{} discovery: warning: {}", d->name(), warn));
      std::optional<int64_t> retry_from;  // the earliest end among attempts to try again
      for (const auto& a : found.attempts) {
        if (stop.load()) {
          if (a.end) retry_from = std::min(retry_from.value_or(*a.end), *a.end);
          continue;
        }
        ++p.counts.discovered;
        bool done = false;
        if (!s.store->attributed(a.key, done, err)) {
          p.line("store error: " + err);
          return 3;
        }
        if (done) {
          ++p.counts.skipped;
          p.draw();
          continue;
        }
        p.current = a.key;
        p.draw();
        CollectRequest req;
        req.attempt = &a;
        if (a.start) req.scope_start = *a.start - cfg.attribution.slack_before;
        if (a.evidence_after) req.scope_start = std::max(req.scope_start.value_or(*a.evidence_after), *a.evidence_after);
        if (a.end) req.scope_end = *a.end + cfg.attribution.slack_after;
        req.wanted_sources = s.wanted_sources;
        req.stop = &stop;
        Collected ev;
        if (!a.bundle_dir.empty()) bundle.collect(req, ev);
        else
          for (const auto& c : s.collectors) {
            Collected one;
            c->collect(req, one);
            ev.merge(std::move(one));
          }
        p.bytes += ev.bytes;
        ojson verdict;
        AttributionError aerr;
        bool ok = s.attribution->attribute(a, std::move(ev), verdict, aerr);
        bool inserted = false;
        if (ok && !s.store->record_verdict(a, d->name(), verdict, s.attribution->describe(), inserted, err)) {
          p.line(fmt::format("store error for {}: {}", a.key, err));
          return 3;
        }
        if (!ok) {
          ++p.counts.failed;
          status = 1;
          if (a.end) retry_from = std::min(retry_from.value_or(*a.end), *a.end);
          p.line(fmt::format("{}: not attributed ({}): {}", a.key, aerr.retry ? "will retry" : "evidence refused", aerr.message));
          if (!s.store->record_failure(a, d->name(), aerr.message, err)) {
            p.line("store error: " + err);
            return 3;
          }
          continue;
        }
        ++p.counts.attributed;
        std::string latency = a.end ? fmt::format(", {:.1f} s after the job ended", static_cast<double>(now_ns() - *a.end) / 1e9) : "";
        p.attempt_line(fmt::format("{} {}: {}{}{}", a.key, a.state, verdict_line(verdict), inserted ? "" : " (already stored)", latency));
        if (s.out) {
          if (cfg.output.stdout_format == "jsonl") {
            ojson line;
            line["attempt"] = attempt_json(a);
            line["verdict"] = verdict;
            *s.out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
          } else if (cfg.output.stdout_format == "text") {
            write_text(*s.out, a, verdict);
          }
          s.out->flush();
        }
      }
      p.current.clear();
      if (s.watch) {
        int64_t next = retry_from ? std::min(*retry_from - 1, until) : until;
        if (!cursor || next > *cursor)
          if (!s.store->set_cursor(cursor_name, next, err)) {
            p.line("store error: " + err);
            return 3;
          }
      }
      ignored += found.ignored;
    }
    RunCounts delta{p.counts.discovered - before.discovered, p.counts.skipped - before.skipped,
                    p.counts.attributed - before.attributed, p.counts.failed - before.failed};
    std::string run_status = poll_failed ? "discovery failed" : stop.load() ? "stopped" : delta.failed ? "partial" : "ok";
    if (!s.store->finish_run(run_id, delta, run_status, err)) {
      p.line("store error: " + err);
      return 3;
    }
    p.line(fmt::format("poll {}: discovered {}, skipped {} already stored, attributed {}, failed {}{}", polls, delta.discovered,
                       delta.skipped, delta.attributed, delta.failed,
                       ignored ? fmt::format(" ({} other record{} not to attribute)", ignored, ignored == 1 ? "" : "s") : ""));
    if (poll_failed && !s.watch) return 3;
    if (!s.watch || (s.max_polls && polls >= s.max_polls)) break;
    auto wake = std::chrono::steady_clock::now() + std::chrono::nanoseconds(cfg.watch.interval);
    while (!stop.load() && std::chrono::steady_clock::now() < wake) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (stop.load()) p.line("stopped by a signal; progress is in the store");
  p.end();
  return status;
}

}  // namespace culprit::blueprint
