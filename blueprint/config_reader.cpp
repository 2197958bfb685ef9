// The configuration reader's shared parts (config_reader.h). They live here,
// not in config.cpp, because each connector's reader uses them from its own
// file.
#include "blueprint/config_reader.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/limits.h"
#include "base/suggest.h"
#include "base/text_util.h"
#include "base/vocabulary.h"
#include "blueprint/hostlist.h"
#include "blueprint/node_names.h"

namespace culprit::blueprint {

bool ConfigReader::nodes(const YAML::Node& n, const std::string& key, std::vector<std::string>& out) {
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

const std::vector<std::string>& terminal_states() {
  static const std::vector<std::string> kTerminalStates = vocab::words(vocab::ended_states());
  return kTerminalStates;
}

void read_states(ConfigReader& r, const YAML::Node& v, std::vector<std::string>& out) {
  std::vector<std::string> s;
  if (!r.strings(v, "states", s)) return;
  out.clear();
  for (auto st : s) {
    for (auto& c : st) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (std::find(terminal_states().begin(), terminal_states().end(), st) == terminal_states().end()) {
      std::string near = closest_match(st, terminal_states()).value_or("");
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

bool read_auth(ConfigReader& r, const std::string& k, const YAML::Node& v, HttpAuthConfig& a) {
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

const std::vector<std::string>& auth_keys() {
  static const std::vector<std::string> kAuthKeys = {"token_file", "token_env", "username", "password_file",
                                                     "password_env", "token", "password"};
  return kAuthKeys;
}

void read_tls(ConfigReader& r, const YAML::Node& n, const std::string& where, TlsFilesConfig& t) {
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

bool http_url(ConfigReader& r, const YAML::Node& v, const std::string& key, std::string& out) {
  if (!r.string(v, key, out)) return false;
  if (out.rfind("http://", 0) != 0 && out.rfind("https://", 0) != 0) {
    r.error("B0104", v, fmt::format("'{}' must start with http:// or https://", key));
    return false;
  }
  while (!out.empty() && out.back() == '/') out.pop_back();
  return true;
}

}  // namespace culprit::blueprint
