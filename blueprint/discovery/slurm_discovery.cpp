#include "blueprint/discovery/slurm_discovery.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/text_util.h"
#include "base/timestamp.h"
#include "blueprint/config_reader.h"
#include "blueprint/hostlist.h"
#include "blueprint/node_names.h"
#include "blueprint/process.h"

namespace culprit::blueprint {

const char* const kSacctFields = "JobID,JobIDRaw,JobName,Partition,User,Cluster,State,ExitCode,Submit,Start,End,NodeList,WorkDir";
const char* const kSacctDelimiter = "\x1f";

namespace {

enum Field { kJobId, kJobIdRaw, kJobName, kPartition, kUser, kCluster, kState, kExitCode, kSubmit, kStart, kEnd, kNodeList, kWorkDir, kFieldCount };

std::optional<int64_t> slurm_time(std::string_view s) {
  if (s.empty() || s == "Unknown" || s == "None" || s == "N/A") return std::nullopt;
  return parse_rfc3339(std::string(s) + "Z");
}

std::string clean_state(std::string_view s) {
  std::string st(s.substr(0, s.find(' ')));  // "CANCELLED by 0"
  for (auto& c : st) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return st;
}

void exit_code(std::string_view s, std::optional<int64_t>& code, std::optional<int64_t>& sig) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos) return;
  try {
    code = std::stoll(std::string(s.substr(0, colon)));
    sig = std::stoll(std::string(s.substr(colon + 1)));
  } catch (...) {
    code.reset();
    sig.reset();
  }
}

int64_t context_exit(std::optional<int64_t> code, std::optional<int64_t> sig) {
  if (code && *code != 0) return *code;
  if (sig && *sig != 0) return 128 + *sig;
  return code.value_or(0);
}

bool wanted(const SlurmDiscoveryConfig& c, const std::string& state) {
  return std::find(c.states.begin(), c.states.end(), state) != c.states.end();
}

bool in_window(const DiscoveryWindow& w, std::optional<int64_t> end) {
  if (!end) return false;
  return (!w.since || *end >= *w.since) && (!w.until || *end <= *w.until);
}

struct JobRun {
  Attempt attempt;
  std::optional<int64_t> exit_raw, signal_raw;
};

}  // namespace

void parse_sacct(const std::string& text, const SlurmDiscoveryConfig& config, const DiscoveryWindow& window,
                 DiscoveryResult& out) {
  std::vector<JobRun> runs;
  std::map<std::string, size_t> last_run;  // JobIDRaw -> index of its latest job record
  std::set<std::string> refused_jobs;      // JobIDRaw of job records skipped for their node names
  size_t line_no = 0;
  for (auto line : split(text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;
    auto f = split(line, kSacctDelimiter[0]);
    if (f.size() != kFieldCount) {
      out.warnings.push_back(fmt::format("sacct line {}: {} fields instead of {}", line_no, f.size(), static_cast<int>(kFieldCount)));
      continue;
    }
    std::string raw(f[kJobIdRaw]);
    size_t dot = raw.find('.');
    std::string state = clean_state(f[kState]);
    if (dot == std::string::npos) {
      // A job (or array task, or het component) record: one run.
      if (std::string_view(f[kJobId]).find('[') != std::string_view::npos) {
        ++out.ignored;  // a pending array range "42_[4-10]"
        continue;
      }
      JobRun r;
      Attempt& a = r.attempt;
      a.context.scheduler = "slurm";
      a.cluster = std::string(f[kCluster]);
      a.context.workload_id = std::string(f[kJobId]);
      a.job_id = raw;
      a.name = std::string(f[kJobName]);
      a.partition = std::string(f[kPartition]);
      a.user = std::string(f[kUser]);
      a.context.terminal.state = state;
      a.submit = slurm_time(f[kSubmit]);
      a.context.start = slurm_time(f[kStart]);
      a.context.end = slurm_time(f[kEnd]);
      a.work_dir = std::string(f[kWorkDir]);
      exit_code(f[kExitCode], r.exit_raw, r.signal_raw);
      a.context.terminal.exit_code = context_exit(r.exit_raw, r.signal_raw);
      std::string err;
      if (!expand_hostlist(f[kNodeList], a.context.nodes, err)) {
        out.warnings.push_back(fmt::format("sacct line {}: job {}: bad node list '{}': {}", line_no, a.context.workload_id, f[kNodeList], err));
        continue;
      }
      std::sort(a.context.nodes.begin(), a.context.nodes.end());
      a.context.nodes.erase(std::unique(a.context.nodes.begin(), a.context.nodes.end()), a.context.nodes.end());
      // A node name fills path templates and the drain command: one that
      // breaks the context's rule is never passed on (blueprint/node_names.h).
      if (std::string problem = node_list_problem(a.context.nodes); !problem.empty()) {
        out.warnings.push_back(fmt::format("sacct line {}: job {} skipped: {}", line_no, escape_for_terminal(a.context.workload_id), problem));
        refused_jobs.insert(raw);
        last_run.erase(raw);  // its steps that follow belong to this refused run
        continue;
      }
      last_run[raw] = runs.size();
      runs.push_back(std::move(r));
    } else {
      std::string job = raw.substr(0, dot);
      auto it = last_run.find(job);
      if (it == last_run.end() && refused_jobs.count(job)) continue;  // its job record was refused (warned once)
      if (it == last_run.end()) {
        out.warnings.push_back(fmt::format("sacct line {}: step {} without its job record", line_no, raw));
        continue;
      }
      AttemptStep s;
      s.id = raw.substr(dot + 1);
      s.name = std::string(f[kJobName]);
      s.state = state;
      exit_code(f[kExitCode], s.exit_code, s.signal);
      s.start = slurm_time(f[kStart]);
      s.end = slurm_time(f[kEnd]);
      std::string err;
      if (!expand_hostlist(f[kNodeList], s.nodes, err)) s.nodes.clear();
      std::sort(s.nodes.begin(), s.nodes.end());
      if (std::string problem = node_list_problem(s.nodes); !problem.empty()) {
        out.warnings.push_back(fmt::format("sacct line {}: step {}: nodes not used: {}", line_no, escape_for_terminal(raw), problem));
        s.nodes.clear();  // never a step attempt (it needs nodes)
      }
      runs[it->second].attempt.steps.push_back(std::move(s));
    }
  }
  // Number the runs of each job in start order.
  std::map<std::string, std::vector<size_t>> by_job;
  for (size_t i = 0; i < runs.size(); ++i) by_job[runs[i].attempt.cluster + "/" + runs[i].attempt.job_id].push_back(i);
  for (auto& [job, idx] : by_job) {
    std::stable_sort(idx.begin(), idx.end(), [&](size_t x, size_t y) {
      return runs[x].attempt.context.start.value_or(INT64_MAX) < runs[y].attempt.context.start.value_or(INT64_MAX);
    });
    for (size_t k = 0; k < idx.size(); ++k) {
      runs[idx[k]].attempt.attempt = static_cast<int>(k + 1);
      // sacct prints whole seconds; lines logged within the previous run's last second are its own.
      if (k > 0 && runs[idx[k - 1]].attempt.context.end) runs[idx[k]].attempt.evidence_after = *runs[idx[k - 1]].attempt.context.end + 1000000000;
    }
  }
  std::set<std::string> keys;
  auto add = [&](Attempt&& a) {
    if (!keys.insert(a.key).second) return;
    out.attempts.push_back(std::move(a));
  };
  for (auto& r : runs) {
    Attempt& a = r.attempt;
    std::sort(a.steps.begin(), a.steps.end(), [](const AttemptStep& x, const AttemptStep& y) { return x.id < y.id; });
    if (!a.context.start || a.context.nodes.empty()) {
      ++out.ignored;  // never ran: nothing to attribute
      continue;
    }
    std::string start_s = std::to_string(*a.context.start / 1000000000);
    if (config.step_attempts) {
      bool any = false;
      for (const auto& s : a.steps) {
        if (!wanted(config, s.state) || !in_window(window, s.end) || s.nodes.empty() || !s.start) continue;
        Attempt sa = a;
        sa.context.workload_id = a.context.workload_id + "." + s.id;
        sa.context.start = s.start;
        sa.context.end = s.end;
        sa.context.nodes = s.nodes;
        sa.context.terminal.state = s.state;
        sa.context.terminal.exit_code = context_exit(s.exit_code, s.signal);
        sa.steps = {s};
        sa.key = fmt::format("slurm/{}/{}.{}@{}", a.cluster, a.job_id, s.id, start_s);
        add(std::move(sa));
        any = true;
      }
      if (!any) ++out.ignored;
      continue;
    }
    if (!wanted(config, a.context.terminal.state) || !in_window(window, a.context.end)) {
      ++out.ignored;
      continue;
    }
    a.key = fmt::format("slurm/{}/{}@{}", a.cluster, a.job_id, start_s);
    add(std::move(a));
  }
  std::sort(out.attempts.begin(), out.attempts.end(), [](const Attempt& x, const Attempt& y) { return x.key < y.key; });
}

bool SlurmDiscovery::discover(const DiscoveryWindow& window, DiscoveryResult& out, std::string& error) {
  auto fmt_time = [](int64_t ns) { return format_rfc3339(ns - ns % 1000000000).substr(0, 19); };
  std::vector<std::string> argv = {config_.sacct, "-P", "-n", "-D", "-a", std::string("--delimiter=") + kSacctDelimiter,
                                   "-o", kSacctFields};
  // sacct selects jobs that existed in [-S, -E]; the end-time filter is ours.
  argv.push_back("-S");
  argv.push_back(window.since ? fmt_time(*window.since) : "1970-01-01T00:00:00");
  argv.push_back("-E");
  argv.push_back(window.until ? fmt_time(*window.until + 1000000000) : "now");
  if (!config_.clusters.empty()) {
    argv.push_back("-M");
    argv.push_back(fmt::format("{}", fmt::join(config_.clusters, ",")));
  }
  std::map<std::string, std::string> env = {{"TZ", "UTC"}, {"SLURM_TIME_FORMAT", "standard"}};
  if (!config_.slurm_conf.empty()) env["SLURM_CONF"] = config_.slurm_conf;
  ProcessResult pr;
  if (!run_process(argv, env, config_.timeout, pr, error)) return false;
  if (pr.timed_out) {
    error = fmt::format("sacct did not answer within {}", format_duration(config_.timeout));
    return false;
  }
  if (pr.exit_status != 0) {
    std::string msg(trim(pr.err));
    error = fmt::format("sacct failed ({}): {}", pr.signal ? fmt::format("signal {}", pr.signal) : fmt::format("exit {}", pr.exit_status),
                        msg.empty() ? "no message" : msg.substr(0, 500));
    return false;
  }
  parse_sacct(pr.out, config_, window, out);
  return true;
}

// Configuration: the `discovery.slurm` section (blueprint/connector.h). It lives here,
// with the code that uses it, so that the connector is one file.

std::string SlurmDiscoveryConfig::summary() const {
  return fmt::format("{}, {} state{}", clusters.empty() ? "the local cluster" : fmt::format("sacct -M {}", fmt::join(clusters, ",")),
                     states.size(), states.size() == 1 ? "" : "s");
}

std::shared_ptr<ConnectorConfig> read_slurm_discovery_config(ConfigReader& r, const YAML::Node& n) {
  auto config = std::make_shared<SlurmDiscoveryConfig>();
  SlurmDiscoveryConfig& out = *config;
  r.map(n, "discovery.slurm", {"sacct", "slurm_conf", "clusters", "states", "attempts", "lookback", "timeout"},
        [&](const std::string& key, const YAML::Node& v) {
          if (key == "sacct") {
            if (r.string(v, key, out.sacct) && out.sacct.find('/') != std::string::npos) out.sacct = r.path(out.sacct);
          } else if (key == "slurm_conf") {
            if (r.string(v, key, out.slurm_conf)) out.slurm_conf = r.path(out.slurm_conf);
          } else if (key == "clusters") r.strings(v, key, out.clusters);
          else if (key == "states") read_states(r, v, out.states);
          else if (key == "attempts") {
            std::string a;
            if (r.oneof(v, key, {"job", "step"}, a)) out.step_attempts = a == "step";
          } else if (key == "lookback") r.duration(v, key, out.lookback, 1000000000LL);
          else if (key == "timeout") r.duration(v, key, out.timeout, 1000000000LL);
        });
  return config;
}

bool make_slurm_discovery(const ConnectorConfig& config, const ConnectorEnv&, ConnectorParts& out, std::string&) {
  out.discovery = std::make_unique<SlurmDiscovery>(static_cast<const SlurmDiscoveryConfig&>(config));
  return true;
}

}  // namespace culprit::blueprint
