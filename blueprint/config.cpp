// Reading the blueprint's YAML configuration. yaml-cpp is used only here and
// all its exceptions stop at this file's functions. Validation walks the
// document once with a table of known keys per mapping, so every unknown
// key, wrong type and bad value is reported with its position, not only the
// first one.
#include "blueprint/config.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>

#include "base/operator_file.h"
#include "base/byte_size.h"
#include "base/limits.h"
#include "base/suggest.h"
#include "base/vocabulary.h"
#include "base/read_full.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "blueprint/hostlist.h"
#include "blueprint/node_names.h"
#include "runtime/bundle.h"
#include "blueprint/yaml_document.h"
#include "blueprint/yaml_reader.h"

namespace culprit::blueprint {

namespace fs = std::filesystem;


namespace {

// The codes of the configuration's diagnostics (docs/blueprint-config.md).
constexpr YamlCodes kConfigCodes = {"B0103", "B0102", "B0108", "B0103", "B0104", "B0104"};

// The configuration's reader: the shared YAML walk plus node lists, whose
// expansion is bounded over the whole file.
class Reader : public YamlReader {
 public:
  Reader(std::shared_ptr<const SourceFile> file, Diagnostics& d, std::string dir)
      : YamlReader(std::move(file), d, kConfigCodes, std::move(dir)) {}

  // The configuration names a mapping by its key path, quoted in messages
  // ("unknown key 'x' in 'discovery.slurm'").
  void map(const YAML::Node& n, const std::string& where, const std::vector<std::string>& known,
           const std::function<void(const std::string&, const YAML::Node&)>& handle) {
    YamlReader::map(n, "'" + where + "'", known, handle);
  }
  void require(const YAML::Node& map_node, const std::string& where, std::initializer_list<const char*> keys) {
    YamlReader::require(map_node, "'" + where + "'", keys, "B0105");
  }

  bool nodes(const YAML::Node& n, const std::string& key, std::vector<std::string>& out) {
    std::vector<std::string> lists;
    if (!strings(n, key, lists)) return false;
    out.clear();
    for (const auto& l : lists) {
      std::vector<std::string> hosts;
      std::string err;
      // A workload is a context: at most kContextNodes nodes; and the whole
      // file expands to at most kConfigNodes names, so a few bytes of
      // hostlist ("n[0-99999]") repeated cannot take gigabytes.
      if (!expand_hostlist(l, hosts, err, limits::kContextNodes)) {
        error("B0104", n, fmt::format("'{}': bad hostlist '{}': {}", key, escape_for_terminal(l), escape_for_terminal(err)));
        return false;
      }
      if (out.size() + hosts.size() > limits::kContextNodes) {
        error("B0104", n, limits::exceeded("context_nodes", limits::kContextNodes, fmt::format("'{}' lists more nodes", key)));
        return false;
      }
      if (total_nodes_ + hosts.size() > limits::kConfigNodes) {
        error("B0104", n, limits::exceeded("config_nodes", limits::kConfigNodes, "the workloads list more node names in all"));
        return false;
      }
      total_nodes_ += hosts.size();
      out.insert(out.end(), hosts.begin(), hosts.end());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    // The context's rules (blueprint/node_names.h): a node name fills path
    // templates and the drain command, so a bad one is an error here.
    std::string problem = node_list_problem(out);
    if (!problem.empty()) {
      error("B0104", n, fmt::format("'{}': {}", key, problem));
      out.clear();
      return false;
    }
    return true;
  }
 private:
  size_t total_nodes_ = 0;  // node names expanded so far (limits::kConfigNodes)
};

const std::vector<std::string> kTerminalStates = vocab::words(vocab::ended_states());

// Upper-cases and checks a list of terminal states.
void read_states(Reader& r, const YAML::Node& v, std::vector<std::string>& out) {
  std::vector<std::string> s;
  if (!r.strings(v, "states", s)) return;
  out.clear();
  for (auto st : s) {
    for (auto& c : st) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (std::find(kTerminalStates.begin(), kTerminalStates.end(), st) == kTerminalStates.end()) {
      std::string near = closest_match(st, kTerminalStates).value_or("");
      r.error("B0104", v, fmt::format("unknown terminal state '{}'{}", st,
                                      near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)));
      continue;
    }
    out.push_back(st);
  }
  std::sort(out.begin(), out.end());
}

bool source_name_ok(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  return true;
}

// The credentials keys of an HTTP connector; true when `k` was one.
bool read_auth(Reader& r, const std::string& k, const YAML::Node& v, HttpAuthConfig& a) {
  if (k == "token_file") {
    if (r.string(v, k, a.token_file)) a.token_file = r.path(a.token_file);
  } else if (k == "token_env") r.string(v, k, a.token_env);
  else if (k == "username") r.string(v, k, a.username);
  else if (k == "password_file") {
    if (r.string(v, k, a.password_file)) a.password_file = r.path(a.password_file);
  } else if (k == "password_env") r.string(v, k, a.password_env);
  else if (k == "token" || k == "password")
    r.error("B0106", v, fmt::format("secrets are never read from the configuration: use '{0}_file' or '{0}_env'", k));
  else return false;
  return true;
}
const std::vector<std::string> kAuthKeys = {"token_file", "token_env", "username", "password_file", "password_env", "token", "password"};

void read_tls(Reader& r, const YAML::Node& n, const std::string& where, TlsFilesConfig& t) {
  r.map(n, where, {"ca_file", "cert_file", "key_file", "server_name", "insecure_skip_verify"},
        [&](const std::string& k, const YAML::Node& v) {
          if (k == "ca_file") {
            if (r.string(v, k, t.ca_file)) t.ca_file = r.path(t.ca_file);
          } else if (k == "cert_file") {
            if (r.string(v, k, t.cert_file)) t.cert_file = r.path(t.cert_file);
          } else if (k == "key_file") {
            if (r.string(v, k, t.key_file)) t.key_file = r.path(t.key_file);
          } else if (k == "server_name") r.string(v, k, t.server_name);
          else r.boolean(v, k, t.insecure_skip_verify);
        });
  if (t.cert_file.empty() != t.key_file.empty())
    r.error("B0105", n, fmt::format("'{}' needs both 'cert_file' and 'key_file' for a client certificate", where));
}

bool http_url(Reader& r, const YAML::Node& v, const std::string& key, std::string& out) {
  if (!r.string(v, key, out)) return false;
  if (out.rfind("http://", 0) != 0 && out.rfind("https://", 0) != 0) {
    r.error("B0104", v, fmt::format("'{}' must start with http:// or https://", key));
    return false;
  }
  while (!out.empty() && out.back() == '/') out.pop_back();
  return true;
}

void read_kubernetes(Reader& r, const YAML::Node& n, KubernetesConfig& out) {
  out.enabled = true;
  auto& c = out.connection;
  r.map(n, "kubernetes", {"kubeconfig", "context", "in_cluster", "service_account_dir", "timeout", "retries", "page_size"},
        [&](const std::string& k, const YAML::Node& v) {
          if (k == "kubeconfig") {
            if (r.string(v, k, c.kubeconfig)) c.kubeconfig = r.path(c.kubeconfig);
          } else if (k == "context") r.string(v, k, c.context);
          else if (k == "in_cluster") r.boolean(v, k, c.in_cluster);
          else if (k == "service_account_dir") {
            if (r.string(v, k, c.service_account_dir)) c.service_account_dir = r.path(c.service_account_dir);
          } else if (k == "timeout") r.duration(v, k, c.timeout, 1000000000LL);
          else if (k == "retries") {
            int64_t x = 0;
            if (r.integer(v, k, x, 0, 20)) c.retries = static_cast<int>(x);
          } else if (k == "page_size") {
            int64_t x = 0;
            if (r.integer(v, k, x, 1, 10000)) c.page_size = static_cast<int>(x);
          }
        });
  if (c.in_cluster && !c.kubeconfig.empty())
    r.error("B0104", n, "'kubernetes' takes either 'in_cluster: true' or 'kubeconfig', not both");
}

void read_kueue(Reader& r, const YAML::Node& n, KueueDiscoveryConfig& out) {
  out.enabled = true;
  r.map(n, "discovery.kueue", {"namespaces", "label_selector", "states", "lookback", "pod_selector", "events", "placement_interval"},
        [&](const std::string& k, const YAML::Node& v) {
          if (k == "namespaces") r.strings(v, k, out.namespaces);
          else if (k == "label_selector") r.string(v, k, out.label_selector);
          else if (k == "states") read_states(r, v, out.states);
          else if (k == "lookback") r.duration(v, k, out.lookback, 1000000000LL);
          else if (k == "pod_selector") {
            if (r.string(v, k, out.pod_selector)) {
              static const std::vector<std::string> kVars = {"owner_name", "owner_uid", "workload"};
              for (size_t i = out.pod_selector.find('{'); i != std::string::npos; i = out.pod_selector.find('{', i + 1)) {
                size_t close = out.pod_selector.find('}', i);
                std::string var = close == std::string::npos ? "" : out.pod_selector.substr(i + 1, close - i - 1);
                if (std::find(kVars.begin(), kVars.end(), var) == kVars.end())
                  r.error("B0104", v, fmt::format("unknown placeholder '{{{}}}' in 'pod_selector' (known: {{owner_name}} "
                                                  "{{owner_uid}} {{workload}})", var));
              }
            }
          } else if (k == "events") r.boolean(v, k, out.events);
          else if (k == "placement_interval") r.duration(v, k, out.placement_interval, 1000000000LL);
        });
}

void read_kube_logs(Reader& r, const YAML::Node& n, KubernetesCollectorConfig& out) {
  out.enabled = true;
  r.map(n, "collectors.kubernetes",
        {"logs", "source", "containers", "previous", "events", "events_source", "max_bytes_per_container"},
        [&](const std::string& k, const YAML::Node& v) {
          if (k == "logs") r.boolean(v, k, out.logs);
          else if (k == "source" || k == "events_source") {
            std::string& dst = k == "source" ? out.source : out.events_source;
            if (r.string(v, k, dst) && !source_name_ok(dst))
              r.error("B0104", v, fmt::format("'{}' must be a lowercase name ([a-z0-9_-]+)", k));
          } else if (k == "containers") r.strings(v, k, out.containers);
          else if (k == "previous") r.boolean(v, k, out.previous);
          else if (k == "events") r.boolean(v, k, out.events);
          else if (k == "max_bytes_per_container") {
            std::string s;
            if (r.scalar(v, k, s)) {
              auto sz = parse_byte_size(s);
              if (!sz) r.error("B0104", v, "'max_bytes_per_container' must be a size such as 256MiB, 1GiB or 0 (no limit)");
              else out.max_bytes_per_container = *sz;
            }
          }
        });
}

// A LogQL stream selector: `{...}` and nothing after it.
bool stream_selector_ok(const std::string& s) {
  if (s.size() < 2 || s.front() != '{') return false;
  bool in_str = false;
  char quote = 0;
  for (size_t i = 1; i < s.size(); ++i) {
    char c = s[i];
    if (in_str) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) in_str = false;
    } else if (c == '"' || c == '`') {
      in_str = true;
      quote = c;
    } else if (c == '}') {
      return i == s.size() - 1;
    }
  }
  return false;
}

void read_loki(Reader& r, const YAML::Node& n, LokiCollectorConfig& out) {
  out.enabled = true;
  r.require(n, "collectors.loki", {"url", "streams"});
  std::vector<std::string> keys = {"url", "tenant", "host_label", "streams", "push_down", "limit", "chunk",
                                   "nodes_per_query", "timeout", "retries", "tls"};
  keys.insert(keys.end(), kAuthKeys.begin(), kAuthKeys.end());
  r.map(n, "collectors.loki", keys, [&](const std::string& k, const YAML::Node& v) {
    if (read_auth(r, k, v, out.auth)) return;
    if (k == "url") http_url(r, v, k, out.url);
    else if (k == "tenant") r.string(v, k, out.tenant);
    else if (k == "host_label") r.string(v, k, out.host_label);
    else if (k == "push_down") r.boolean(v, k, out.push_down);
    else if (k == "limit") {
      int64_t x = 0;
      if (r.integer(v, k, x, 1, 1000000)) out.limit = static_cast<int>(x);
    } else if (k == "chunk") r.duration(v, k, out.chunk, 60LL * 1000000000);
    else if (k == "nodes_per_query") {
      int64_t x = 0;
      if (r.integer(v, k, x, 1, 10000)) out.nodes_per_query = static_cast<int>(x);
    } else if (k == "timeout") r.duration(v, k, out.timeout, 1000000000LL);
    else if (k == "retries") {
      int64_t x = 0;
      if (r.integer(v, k, x, 0, 20)) out.retries = static_cast<int>(x);
    } else if (k == "tls") read_tls(r, v, "collectors.loki.tls", out.tls);
    else if (k == "streams") {
      if (!v.IsSequence()) {
        r.error("B0103", v, "'streams' must be a list of {selector, source} entries");
        return;
      }
      for (const auto& e : v) {
        LokiStreamConfig st;
        st.line = e.Mark().line + 1;
        r.require(e, "collectors.loki.streams[]", {"selector"});
        r.map(e, "collectors.loki.streams[]", {"selector", "source", "source_label", "source_map", "host_label"},
              [&](const std::string& kk, const YAML::Node& x) {
                if (kk == "selector") {
                  if (r.string(x, kk, st.selector) && !stream_selector_ok(st.selector))
                    r.error("B0104", x, "'selector' must be a LogQL stream selector such as {job=\"node-logs\"} "
                                        "(no pipeline: the line filter is added by the collector)");
                } else if (kk == "source") {
                  if (r.string(x, kk, st.source) && !source_name_ok(st.source))
                    r.error("B0104", x, "'source' must be a lowercase name ([a-z0-9_-]+), such as kernel or app");
                } else if (kk == "source_label") r.string(x, kk, st.source_label);
                else if (kk == "host_label") r.string(x, kk, st.host_label);
                else if (kk == "source_map") {
                  if (!x.IsMap()) {
                    r.error("B0103", x, "'source_map' must map label values to source names");
                    return;
                  }
                  for (auto it = x.begin(); it != x.end(); ++it) {
                    const YAML::Node from_node = it->first;
                    if (!from_node.IsScalar() || from_node.Scalar() == "<<") {
                      r.error("B0103", from_node, "the keys of 'source_map' must be label values");
                      continue;
                    }
                    std::string from = from_node.Scalar(), to;
                    if (st.source_map.count(from)) {
                      r.error("B0108", from_node, fmt::format("'{}' is given twice in 'source_map'", from));
                      continue;
                    }
                    if (!r.string(it->second, from, to)) continue;
                    if (!source_name_ok(to)) r.error("B0104", it->second, fmt::format("'{}' is not a source name ([a-z0-9_-]+)", to));
                    st.source_map[from] = to;
                  }
                }
              });
        if (st.source.empty() == st.source_label.empty())
          r.error("B0105", e, "a stream needs exactly one of 'source' (a fixed source) and 'source_label' (a label naming it)");
        if (!st.source_map.empty() && st.source_label.empty())
          r.error("B0104", e, "'source_map' applies only with 'source_label'");
        if (!st.selector.empty()) out.streams.push_back(std::move(st));
      }
    }
  });
}

void read_promql(Reader& r, const YAML::Node& n, PromqlCollectorConfig& out) {
  out.enabled = true;
  r.require(n, "collectors.promql", {"url"});
  std::vector<std::string> keys = {"url", "hostname_label", "source", "step", "queries", "timeout", "retries", "tls"};
  keys.insert(keys.end(), kAuthKeys.begin(), kAuthKeys.end());
  bool queries_given = false;
  r.map(n, "collectors.promql", keys, [&](const std::string& k, const YAML::Node& v) {
    if (read_auth(r, k, v, out.auth)) return;
    if (k == "url") http_url(r, v, k, out.url);
    else if (k == "hostname_label") r.string(v, k, out.hostname_label);
    else if (k == "source") {
      if (r.string(v, k, out.source) && !source_name_ok(out.source))
        r.error("B0104", v, "'source' must be a lowercase name ([a-z0-9_-]+)");
    } else if (k == "step") r.duration(v, k, out.step, 1000000000LL);
    else if (k == "timeout") r.duration(v, k, out.timeout, 1000000000LL);
    else if (k == "retries") {
      int64_t x = 0;
      if (r.integer(v, k, x, 0, 20)) out.retries = static_cast<int>(x);
    } else if (k == "tls") read_tls(r, v, "collectors.promql.tls", out.tls);
    else if (k == "queries") {
      queries_given = true;
      if (!v.IsSequence()) {
        r.error("B0103", v, "'queries' must be a list of metric names or {query, name, labels, hostname_label} entries");
        return;
      }
      for (const auto& e : v) {
        PromQueryConfig q;
        q.line = e.Mark().line + 1;
        if (e.IsScalar()) {
          q.query = e.Scalar();
        } else {
          r.require(e, "collectors.promql.queries[]", {"query"});
          r.map(e, "collectors.promql.queries[]", {"query", "name", "labels", "hostname_label"},
                [&](const std::string& kk, const YAML::Node& x) {
                  if (kk == "query") r.string(x, kk, q.query);
                  else if (kk == "name") r.string(x, kk, q.name);
                  else if (kk == "hostname_label") r.string(x, kk, q.hostname_label);
                  else if (kk == "labels") {
                    q.labels_given = true;
                    if (x.IsSequence() && x.size() == 0) q.labels.clear();
                    else r.strings(x, kk, q.labels);
                  }
                });
        }
        for (size_t i = q.query.find('{'); i != std::string::npos; i = q.query.find('{', i + 1)) {
          size_t close = q.query.find('}', i);
          std::string var = close == std::string::npos ? "" : q.query.substr(i + 1, close - i - 1);
          bool ident = !var.empty() && var.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos;
          if (ident && var != "nodes" && var != "hostname_label")
            r.error("B0104", e, fmt::format("unknown placeholder '{{{}}}' in 'query' (known: {{nodes}} {{hostname_label}})", var));
        }
        if (!q.query.empty()) out.queries.push_back(std::move(q));
      }
    }
  });
  if (!queries_given) out.queries = default_promql_queries();
}

}  // namespace

std::vector<PromQueryConfig> default_promql_queries() {
  // DCGM exporter fields (dcgm-exporter default-counters.csv names) and the
  // node exporter's InfiniBand counters; stdlib-rules/metrics.attr reads them.
  std::vector<PromQueryConfig> q;
  for (const char* m : {"DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
                        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE"}) {
    PromQueryConfig c;
    c.query = m;
    c.labels = {"gpu"};
    c.labels_given = true;
    q.push_back(c);
  }
  for (const char* m : {"node_infiniband_symbol_error_total", "node_infiniband_link_downed_total",
                        "node_infiniband_link_error_recovery_total", "node_infiniband_port_errors_received_total",
                        "node_infiniband_local_link_integrity_errors_total",
                        "node_infiniband_port_receive_remote_physical_errors_total"}) {
    PromQueryConfig c;
    c.query = m;
    c.labels = {"device", "port"};
    c.labels_given = true;
    q.push_back(c);
  }
  return q;
}

namespace {

void read_static(Reader& r, const YAML::Node& n, StaticDiscoveryConfig& out) {
  out.enabled = true;
  r.map(n, "discovery.static", {"bundles", "workloads"}, [&](const std::string& key, const YAML::Node& v) {
    if (key == "bundles") {
      std::vector<std::string> patterns;
      if (!r.strings(v, "bundles", patterns)) return;
      for (const auto& p : patterns) {
        std::string full = r.path(p);
        glob_t g{};
        int rc = glob(full.c_str(), GLOB_MARK, nullptr, &g);
        std::vector<std::string> found;
        bool is_glob = p.find_first_of("*?[") != std::string::npos;
        if (rc == 0)
          for (size_t i = 0; i < g.gl_pathc; ++i) {
            std::string m = g.gl_pathv[i];
            while (m.size() > 1 && m.back() == '/') m.pop_back();
            if (fs::exists(fs::path(m) / "context.json")) found.push_back(m);
            else if (!is_glob) r.error("B0104", v, fmt::format("'{}' is not a bundle directory (no context.json)", m));
          }
        globfree(&g);
        if (found.empty() && (is_glob || rc != 0))
          r.warning("B0201", v, fmt::format("'{}' matches no bundle directory", p));
        out.bundles.insert(out.bundles.end(), found.begin(), found.end());
      }
      std::sort(out.bundles.begin(), out.bundles.end());
      out.bundles.erase(std::unique(out.bundles.begin(), out.bundles.end()), out.bundles.end());
    } else if (key == "workloads") {
      if (!v.IsSequence()) {
        r.error("B0103", v, "'workloads' must be a list");
        return;
      }
      for (const auto& w : v) {
        StaticWorkloadConfig wl;
        r.require(w, "workloads[]", {"id", "nodes"});
        r.map(w, "discovery.static.workloads[]",
              {"id", "scheduler", "cluster", "start", "end", "nodes", "state", "exit_code"},
              [&](const std::string& k, const YAML::Node& x) {
                if (k == "id") r.string(x, k, wl.id);
                else if (k == "scheduler") r.oneof(x, k, {"static", "slurm", "kubernetes"}, wl.scheduler);
                else if (k == "cluster") r.string(x, k, wl.cluster);
                else if (k == "start") r.time(x, k, wl.start);
                else if (k == "end") r.time(x, k, wl.end);
                else if (k == "nodes") r.nodes(x, k, wl.nodes);
                else if (k == "state") {
                  std::string s;
                  if (r.scalar(x, k, s)) {
                    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                    if (std::find(kTerminalStates.begin(), kTerminalStates.end(), s) == kTerminalStates.end())
                      r.error("B0104", x, fmt::format("'state' must be one of {}", fmt::join(kTerminalStates, ", ")));
                    wl.state = s;
                  }
                } else if (k == "exit_code") {
                  int64_t e = 0;
                  if (r.integer(x, k, e, -1000000, 1000000)) wl.exit_code = e;
                }
              });
        if (wl.start && wl.end && *wl.end < *wl.start) r.error("B0104", w, "'end' is before 'start'");
        if (!wl.id.empty()) out.workloads.push_back(std::move(wl));
      }
    }
  });
}

void read_slurm(Reader& r, const YAML::Node& n, SlurmDiscoveryConfig& out) {
  out.enabled = true;
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
}

void read_files(Reader& r, const YAML::Node& n, FilesCollectorConfig& out) {
  if (!n.IsSequence()) {
    r.error("B0103", n, "'collectors.files' must be a list of {source, path} entries");
    return;
  }
  for (const auto& e : n) {
    FileSourceConfig f;
    f.line = e.Mark().line + 1;
    r.require(e, "collectors.files[]", {"source", "path"});
    r.map(e, "collectors.files[]", {"source", "path", "host", "format"}, [&](const std::string& k, const YAML::Node& v) {
      if (k == "source") {
        if (r.string(v, k, f.source)) {
          bool ok = true;
          for (char c : f.source) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-');
          if (!ok) r.error("B0104", v, "'source' must be a lowercase name ([a-z0-9_-]+), such as kernel or app");
        }
      } else if (k == "path") {
        if (r.string(v, k, f.path)) {
          // Check the template's placeholders now, not at the first attempt.
          static const std::vector<std::string> kVars = {"node", "job_id", "source", "date", "cluster", "user", "work_dir"};
          for (size_t i = f.path.find('{'); i != std::string::npos; i = f.path.find('{', i + 1)) {
            size_t close = f.path.find('}', i);
            std::string var = close == std::string::npos ? "" : f.path.substr(i + 1, close - i - 1);
            if (std::find(kVars.begin(), kVars.end(), var) == kVars.end()) {
              std::string near = closest_match(var, kVars).value_or("");
              r.error("B0104", v, fmt::format("unknown placeholder '{{{}}}' in 'path' (known: {{{}}}){}", var,
                                              fmt::join(kVars, "} {"),
                                              near.empty() ? "" : fmt::format("; did you mean '{{{}}}'?", near)));
            }
          }
          if (f.path.rfind("{work_dir}", 0) != 0) f.path = r.path(f.path);
        }
      } else if (k == "host") {
        if (r.string(v, k, f.host) && f.host != "{batch_node}" && !valid_host_name(f.host))
          r.error("B0104", v, fmt::format("'host' must be a host name (letters, digits, '-', '.', '_') or {{batch_node}}, not '{}'",
                                          escape_for_terminal(truncate_utf8(f.host, 64))));
      }
      else if (k == "format") r.oneof(v, k, {"auto", "plain", "gzip"}, f.format);
    });
    if (!f.path.empty() && f.path.find("{node}") == std::string::npos && f.host.empty())
      r.error("B0105", e, "a 'path' without {node} needs 'host': the (control-plane) host its lines come from");
    if (!f.path.empty() && f.path.find("{node}") != std::string::npos && !f.host.empty())
      r.error("B0104", e, "'host' applies only to a 'path' without {node}");
    if (!f.source.empty() && !f.path.empty()) out.sources.push_back(std::move(f));
  }
}

void read_service(Reader& r, const YAML::Node& n, ServiceClientConfig& out) {
  r.require(n, "attribution.service", {"url"});
  r.map(n, "attribution.service", {"url", "token_file", "token_env", "timeout", "token"},
        [&](const std::string& k, const YAML::Node& v) {
          if (k == "url") {
            if (r.string(v, k, out.url) && out.url.rfind("http://", 0) != 0 && out.url.rfind("https://", 0) != 0)
              r.error("B0104", v, "'url' must start with http:// or https://");
          } else if (k == "token_file") {
            if (r.string(v, k, out.token_file)) out.token_file = r.path(out.token_file);
          } else if (k == "token_env") r.string(v, k, out.token_env);
          else if (k == "timeout") r.duration(v, k, out.timeout, 1000000000LL);
          else if (k == "token")
            r.error("B0106", v, "secrets are never read from the configuration: use 'token_file' or 'token_env'");
        });
}

void read_store(Reader& r, const YAML::Node& n, StoreConfig& out) {
  auto url = [&](const YAML::Node& v) {
    if (!r.string(v, "url", out.url)) return;
    if (out.url.rfind("sqlite:", 0) == 0) {
      std::string p = out.url.substr(7);
      if (p.empty()) r.error("B0104", v, "'sqlite:' needs a path, such as sqlite:culprit.db");
      else out.url = "sqlite:" + r.path(p);
    } else if (out.url.rfind("postgresql://", 0) == 0 || out.url.rfind("postgres://", 0) == 0) {
      std::string rest = out.url.substr(out.url.find("://") + 3);
      size_t at = rest.find('@'), slash = rest.find('/');
      std::string userinfo = at != std::string::npos && (slash == std::string::npos || at < slash) ? rest.substr(0, at) : "";
      if (userinfo.find(':') != std::string::npos || out.url.find("password=") != std::string::npos)
        r.error("B0106", v, "the store URL carries a password: put it in 'password_file' or 'password_env' "
                            "(or libpq's PGPASSFILE/PGPASSWORD) instead");
    } else {
      r.error("B0104", v, "'url' must be sqlite:PATH or postgresql://[user@]host[:port]/database");
    }
  };
  if (n.IsScalar()) {
    url(n);
    return;
  }
  r.map(n, "store", {"url", "password_file", "password_env", "password"}, [&](const std::string& k, const YAML::Node& v) {
    if (k == "url") url(v);
    else if (k == "password_file") {
      if (r.string(v, k, out.password_file)) out.password_file = r.path(out.password_file);
    } else if (k == "password_env") r.string(v, k, out.password_env);
    else if (k == "password")
      r.error("B0106", v, "secrets are never read from the configuration: use 'password_file' or 'password_env'");
  });
}

}  // namespace

bool parse_config(const std::string& path, const std::string& text, BlueprintConfig& out, Diagnostics& diags) {
  auto file = make_source_file(path, text);
  diags.keep(file);
  out = BlueprintConfig{};
  out.path = path;
  std::error_code ec;
  out.dir = fs::absolute(fs::path(path).parent_path(), ec).lexically_normal().string();
  if (out.dir.empty()) out.dir = fs::current_path(ec).string();
  Reader r(file, diags, out.dir);
  YAML::Node root;
  if (!load_yaml_document(file, "B0101", diags, root)) return false;
  if (root.IsNull()) {
    diags.error("B0103", SourceRange{file.get(), 1, 1, 1, 2},
                "the configuration is empty: it needs keys such as discovery, collectors, store");
    return false;
  }
  if (!root.IsMap()) {
    diags.error("B0103", r.at(root), "the configuration must be a mapping with keys such as discovery, collectors, store");
    return false;
  }
  try {
    r.map(root, "the configuration", {"cluster", "kubernetes", "discovery", "collectors", "attribution", "store", "output", "watch"},
          [&](const std::string& key, const YAML::Node& v) {
            if (key == "cluster") r.string(v, key, out.cluster);
            else if (key == "kubernetes") read_kubernetes(r, v, out.kubernetes);
            else if (key == "discovery") {
              r.map(v, "discovery", {"static", "slurm", "kueue"}, [&](const std::string& k, const YAML::Node& x) {
                if (k == "static") read_static(r, x, out.static_discovery);
                else if (k == "slurm") read_slurm(r, x, out.slurm);
                else read_kueue(r, x, out.kueue);
              });
            } else if (key == "collectors") {
              r.map(v, "collectors", {"files", "kubernetes", "loki", "promql"}, [&](const std::string& k, const YAML::Node& x) {
                if (k == "files") read_files(r, x, out.files);
                else if (k == "kubernetes") read_kube_logs(r, x, out.kube_logs);
                else if (k == "loki") read_loki(r, x, out.loki);
                else read_promql(r, x, out.promql);
              });
            } else if (key == "attribution") {
              r.map(v, "attribution", {"rules", "stdlib", "engine", "threads", "slack_before", "slack_after", "service"},
                    [&](const std::string& k, const YAML::Node& x) {
                      auto& a = out.attribution;
                      if (k == "rules") {
                        if (r.strings(x, k, a.rules))
                          for (auto& p : a.rules) p = r.path(p);
                      } else if (k == "stdlib") r.boolean(x, k, a.stdlib);
                      else if (k == "engine") r.oneof(x, k, {"jit", "interp"}, a.engine);
                      else if (k == "threads") {
                        int64_t t = 0;
                        if (r.integer(x, k, t, 1, 1024)) a.threads = static_cast<unsigned>(t);
                      } else if (k == "slack_before") r.duration(x, k, a.slack_before);
                      else if (k == "slack_after") r.duration(x, k, a.slack_after);
                      else if (k == "service") {
                        a.service.emplace();
                        read_service(r, x, *a.service);
                      }
                    });
            } else if (key == "store") read_store(r, v, out.store);
            else if (key == "output") {
              r.map(v, "output", {"stdout", "explain"}, [&](const std::string& k, const YAML::Node& x) {
                if (k == "stdout") r.oneof(x, k, {"jsonl", "text", "none"}, out.output.stdout_format);
                else r.boolean(x, k, out.output.explain);
              });
            } else if (key == "watch") {
              r.map(v, "watch", {"interval", "overlap"}, [&](const std::string& k, const YAML::Node& x) {
                if (k == "interval") r.duration(x, k, out.watch.interval, 1000000000LL);
                else r.duration(x, k, out.watch.overlap);
              });
            }
          });
  } catch (const std::exception& e) {
    // yaml-cpp's conversions throw; the walk uses none, but nothing may
    // leave this file as an exception.
    diags.error("B0101", SourceRange{file.get(), 1, 1, 1, 2}, std::string("cannot read the configuration: ") + e.what());
    return false;
  }
  if (!diags.has_errors() && !out.static_discovery.enabled && !out.slurm.enabled && !out.kueue.enabled)
    diags.error("B0105", SourceRange{file.get(), 1, 1, 1, 2},
                "nothing to discover: add 'discovery.static', 'discovery.slurm' or 'discovery.kueue'");
  if (!diags.has_errors() && (out.kueue.enabled || out.kube_logs.enabled) && !out.kubernetes.enabled)
    out.kubernetes.enabled = true;  // the defaults: $KUBECONFIG or ~/.kube/config
  return !diags.has_errors();
}

bool load_config(const std::string& path, BlueprintConfig& out, Diagnostics& diags, std::string& io_error) {
  std::string text;
  if (!read_regular_file(path, limits::kConfigFileBytes, "config_file_bytes", "the configuration", text, io_error))
    return false;
  return parse_config(path, text, out, diags);
}

}  // namespace culprit::blueprint
