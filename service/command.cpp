// `culprit serve` and `culprit diagnose --server`: argument parsing, help,
// and the bundle client. The server itself is service/server.cpp.
#include <fmt/format.h>
#include <httplib.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/args.h"
#include "compiler/catalog_loader.h"
#include "runtime/bundle.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "service/server.h"
#include "service/service.h"

namespace culprit::service {

namespace {

const char* kServeHelp = R"(Usage: culprit serve [options]

Serves attributions over HTTP (docs/service.md, docs/openapi.json). At start-up
the catalog (the bundled one plus every --rules PATH) is compiled and all its
inline tests run; if one fails the service prints which and exits 1 without
ever answering an attribution. Stops on SIGTERM/SIGINT after finishing the
requests in flight.

Options:
  --listen HOST:PORT       address to bind (default 127.0.0.1:8080; port 0 = any)
  --rules PATH             add a rule directory or .attr file (repeatable)
  --no-stdlib              do not load the bundled catalog
  --threads N              HTTP worker threads (default 8)
  --token-file FILE        require "Authorization: Bearer <token>" (the file's
                           first line); /healthz, /readyz and /v1/openapi.json stay open
  --max-body SIZE          largest request body (default 64M) -> 413
  --max-session-bytes SIZE evidence held per session (default 256M) -> 413
  --max-total-bytes SIZE   evidence held by all sessions and requests (default 1G) -> 429
  --max-sessions N         open sessions (default 1000) -> 429
  --session-ttl DUR        idle time before a session expires (default 15m)
  --read-timeout DUR       per-read socket timeout (default 10s)
  --write-timeout DUR      per-write socket timeout (default 10s)
  --no-access-log          do not write one JSON line per request to stderr
  --port-file FILE         write the bound port to FILE once ready (for scripts)
  --engine jit|interp      run rules as native code (default jit; also $CULPRIT_ENGINE)
  --no-cache               neither read nor write the compile cache
  --cache-dir DIR          compile cache (default: $CULPRIT_CACHE_DIR, else
                           $XDG_CACHE_HOME/culprit, else ~/.cache/culprit)
  -h, --help               this help

SIZE: bytes with an optional K, M or G suffix (powers of 1024). DUR: 90s, 15m, 1h.
Exit status: 0 stopped by a signal, 1 the catalog fails its tests, 2 bad usage,
rules that do not compile or an address that cannot be bound.
)";

const char* kRemoteHelp = R"(Usage: culprit diagnose --server URL BUNDLE [options]

Sends the bundle's evidence to a running `culprit serve` and prints its
verdict: the same output as `culprit diagnose BUNDLE` run locally with the
service's catalog. Every log line is sent as a text observation carrying its
file, line number and byte offset, so provenance and coverage are identical.

Options:
  --format text|json     output format (default: text on a terminal, else json)
  --explain              include the derivation trail
  --color auto|always|never
  --token-file FILE      bearer token for a service started with --token-file
  -h, --help             this help

Exit status: 0 verdict printed, 2 bad input or an error answer from the
service, 3 the service could not be reached.
)";

int usage(const std::string& cmd, const std::string& msg) {
  std::cerr << fmt::format("culprit {}: {}\nTry 'culprit {} --help'.\n", cmd, msg, cmd);
  return 2;
}

bool parse_size(const std::string& s, size_t& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return false;
  std::string suffix(end);
  unsigned long long mult = 1;
  if (suffix == "K" || suffix == "k") mult = 1ULL << 10;
  else if (suffix == "M" || suffix == "m") mult = 1ULL << 20;
  else if (suffix == "G" || suffix == "g") mult = 1ULL << 30;
  else if (!suffix.empty()) return false;
  if (v == 0 || v > (1ULL << 50) / mult) return false;
  out = static_cast<size_t>(v * mult);
  return true;
}

bool read_token(const std::string& path, std::string& token, std::string& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err = "cannot read the token file " + path;
    return false;
  }
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t')) token.pop_back();
  if (token.empty()) {
    err = "the token file " + path + " is empty";
    return false;
  }
  return true;
}

}  // namespace

int serve_command(int argc, char** argv) {
  cli::ArgSpec spec{{"no-stdlib", "no-cache", "no-access-log", "help"},
                    {"listen", "rules", "threads", "token-file", "max-body", "max-session-bytes", "max-total-bytes",
                     "max-sessions", "session-ttl", "read-timeout", "write-timeout", "port-file", "engine", "cache-dir"}};
  cli::Args a;
  std::string err;
  if (!cli::parse_args(argc, argv, 2, spec, a, err)) return usage("serve", err);
  if (a.has("help")) {
    std::cout << kServeHelp;
    return 0;
  }
  if (!a.positionals.empty()) return usage("serve", "unexpected argument '" + a.positionals[0] + "'");
  ServiceConfig cfg;
  if (auto l = a.last("listen")) {
    size_t colon = l->rfind(':');
    if (colon == std::string::npos || colon == 0) return usage("serve", "--listen must be HOST:PORT");
    cfg.host = l->substr(0, colon);
    char* end = nullptr;
    long p = std::strtol(l->c_str() + colon + 1, &end, 10);
    if (*end || p < 0 || p > 65535 || colon + 1 == l->size()) return usage("serve", "--listen: bad port");
    cfg.port = static_cast<int>(p);
  }
  if (auto t = a.last("threads")) {
    char* end = nullptr;
    long n = std::strtol(t->c_str(), &end, 10);
    if (t->empty() || *end || n < 1 || n > 1024) return usage("serve", "--threads must be an integer from 1 to 1024");
    cfg.threads = static_cast<unsigned>(n);
  }
  for (auto [name, field] : {std::pair<const char*, size_t*>{"max-body", &cfg.max_body},
                             {"max-session-bytes", &cfg.max_session_bytes},
                             {"max-total-bytes", &cfg.max_total_bytes}, {"max-sessions", &cfg.max_sessions}})
    if (auto v = a.last(name))
      if (!parse_size(*v, *field)) return usage("serve", fmt::format("--{} must be a positive size such as 64M", name));
  for (auto [name, field] : {std::pair<const char*, int*>{"read-timeout", &cfg.read_timeout_s},
                             {"write-timeout", &cfg.write_timeout_s}})
    if (auto v = a.last(name)) {
      auto d = parse_duration(*v);
      if (!d || *d < 1000000000LL) return usage("serve", fmt::format("--{} must be a duration of at least 1s", name));
      *field = static_cast<int>(*d / 1000000000LL);
    }
  if (auto v = a.last("session-ttl")) {
    auto d = parse_duration(*v);
    if (!d || *d < 1000000000LL) return usage("serve", "--session-ttl must be a duration of at least 1s");
    cfg.session_ttl = std::chrono::seconds(*d / 1000000000LL);
  }
  if (auto f = a.last("token-file"))
    if (!read_token(*f, cfg.token, err)) return usage("serve", err);
  cfg.access_log = !a.has("no-access-log");
  cfg.port_file = a.last("port-file").value_or("");

  std::string engine = a.last("engine").value_or("");
  if (engine.empty())
    if (const char* e = std::getenv("CULPRIT_ENGINE"); e && *e) engine = e;
  if (engine.empty()) engine = "jit";
  if (engine != "jit" && engine != "interp" && engine != "interpreter") return usage("serve", "--engine must be jit or interp");
  cfg.jit = engine == "jit";
  cfg.jit_options.use_cache = !a.has("no-cache");
  if (auto d = a.last("cache-dir")) cfg.jit_options.cache_dir = *d;
  cfg.cache_dir = resolved_cache_dir(cfg.jit_options);

  // The bundled catalog first, then --rules; naming the bundled one again
  // must not load it twice (as in the CLI).
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string std_dir = stdlib_directory();
  if (!a.has("no-stdlib")) cfg.rule_paths.push_back(std_dir);
  for (const auto& p : a.all("rules"))
    if (a.has("no-stdlib") || fs::weakly_canonical(p, ec) != fs::weakly_canonical(std_dir, ec)) cfg.rule_paths.push_back(p);
  if (cfg.rule_paths.empty()) return usage("serve", "no rules to load (give --rules or drop --no-stdlib)");
  return run_server(cfg);
}

// ------------------------------------------------------------ the client

bool wants_remote_diagnose(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "diagnose") != 0) return false;
  for (int i = 2; i < argc; ++i)
    if (std::strcmp(argv[i], "--server") == 0 || std::strncmp(argv[i], "--server=", 9) == 0) return true;
  return false;
}

namespace {

using ojson = nlohmann::ordered_json;

// Turns a bundle into NDJSON observation lines. Each log line keeps its
// bundle-relative file, 1-based line number and byte offset, and its '\n'
// terminator (counted in coverage bytes as the file's is), so the service
// scans exactly what local mode scans.
bool bundle_observations(const Bundle& b, std::vector<std::string>& out, std::string& err) {
  size_t bad_utf8 = 0;
  for (const auto& f : b.files) {
    std::ifstream in(f.path, std::ios::binary);
    if (!in) {
      err = "cannot read " + f.path;
      return false;
    }
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (data.empty())
      std::cerr << fmt::format("culprit diagnose: warning: {} is empty; the service's coverage will not count it as a file\n",
                               f.display_path);
    size_t pos = 0;
    int64_t line = 0;
    while (pos < data.size()) {
      size_t nl = data.find('\n', pos);
      size_t end = nl == std::string::npos ? data.size() : nl + 1;
      ++line;
      ojson o;
      o["host"] = f.host;
      o["source"] = f.source;
      o["file"] = f.display_path;
      o["line"] = line;
      o["offset"] = pos;
      std::string text = data.substr(pos, end - pos);
      if (!is_valid_utf8(text)) ++bad_utf8;
      o["text"] = std::move(text);
      // JSON cannot carry invalid UTF-8: such bytes become U+FFFD.
      out.push_back(o.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      pos = end;
    }
  }
  if (bad_utf8)
    std::cerr << fmt::format("culprit diagnose: warning: {} line{} with invalid UTF-8 sent with U+FFFD replacements; "
                             "coverage lines_invalid_utf8 will differ from local mode\n",
                             bad_utf8, bad_utf8 == 1 ? "" : "s");
  if (!b.ignored_files.empty())
    std::cerr << fmt::format("culprit diagnose: warning: {} file{} ignored by the bundle layout are not sent; the "
                             "service's coverage will not list them\n",
                             b.ignored_files.size(), b.ignored_files.size() == 1 ? "" : "s");
  if (!b.observations_path.empty()) {
    std::ifstream in(b.observations_path, std::ios::binary);
    std::string l;
    int64_t n = 0;
    while (std::getline(in, l)) {
      ++n;
      if (l.find_first_not_of(" \t\r") == std::string::npos) continue;
      auto j = nlohmann::ordered_json::parse(l, nullptr, false);
      if (j.is_discarded() || !j.is_object()) {
        err = fmt::format("{}:{}: invalid observation: not a JSON object", b.observations_path, n);
        return false;
      }
      // The defaults local mode gives them (runtime/diagnose.cpp).
      if (!j.contains("file")) j["file"] = "observations.jsonl";
      if (!j.contains("line")) j["line"] = n;
      out.push_back(j.dump());
    }
  }
  return true;
}

// Prints the service's error answer; returns the exit status.
int report_error(const httplib::Result& r) {
  if (!r) {
    std::cerr << "culprit diagnose: cannot reach the service: " << httplib::to_string(r.error()) << "\n";
    return 3;
  }
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  std::string msg = r->body;
  if (!j.is_discarded() && j.contains("error") && j["error"].contains("message")) {
    msg = j["error"]["message"].get<std::string>();
    if (j["error"].contains("details") && !j["error"]["details"].empty()) msg += " " + j["error"]["details"].dump();
  }
  std::cerr << fmt::format("culprit diagnose: the service answered {}: {}\n", r->status, msg);
  return 2;
}

}  // namespace

int diagnose_remote_command(int argc, char** argv) {
  cli::ArgSpec spec{{"explain", "help", "no-stdlib", "skip-self-test", "no-cache"},
                    {"server", "format", "color", "token-file", "rules", "threads", "slack-before", "slack-after",
                     "engine", "cache-dir"}};
  cli::Args a;
  std::string err;
  if (!cli::parse_args(argc, argv, 2, spec, a, err)) return usage("diagnose", err);
  if (a.has("help")) {
    std::cout << kRemoteHelp;
    return 0;
  }
  for (const char* local : {"no-stdlib", "skip-self-test", "no-cache"})
    if (a.has(local)) return usage("diagnose", fmt::format("--{} does not apply with --server (the service's catalog and settings do)", local));
  for (const char* local : {"rules", "threads", "slack-before", "slack-after", "engine", "cache-dir"})
    if (a.last(local)) return usage("diagnose", fmt::format("--{} does not apply with --server (the service's catalog and settings do)", local));
  if (a.positionals.size() != 1) return usage("diagnose", "expected exactly one BUNDLE directory");
  std::string url = *a.last("server");
  std::string format = a.last("format").value_or(isatty(STDOUT_FILENO) ? "text" : "json");
  if (format != "text" && format != "json") return usage("diagnose", "--format must be text or json");
  std::string color = a.last("color").value_or("auto");
  if (color != "auto" && color != "always" && color != "never") return usage("diagnose", "--color must be auto, always or never");
  std::string token;
  if (auto f = a.last("token-file"))
    if (!read_token(*f, token, err)) return usage("diagnose", err);

  Bundle bundle;
  if (!load_bundle(a.positionals[0], bundle, err)) {
    std::cerr << "culprit diagnose: " << err << "\n";
    return 2;
  }
  std::ifstream cin_(bundle.root + "/context.json", std::ios::binary);
  std::string context_text((std::istreambuf_iterator<char>(cin_)), std::istreambuf_iterator<char>());
  auto context = nlohmann::ordered_json::parse(context_text, nullptr, false);
  if (context.is_discarded()) {
    std::cerr << "culprit diagnose: context.json is not valid JSON\n";
    return 2;
  }
  std::vector<std::string> lines;
  if (!bundle_observations(bundle, lines, err)) {
    std::cerr << "culprit diagnose: " << err << "\n";
    return 2;
  }

  httplib::Client client(url);
  if (!client.is_valid()) return usage("diagnose", "--server must be a URL such as http://127.0.0.1:8080");
  client.set_read_timeout(600, 0);
  client.set_write_timeout(600, 0);
  client.set_connection_timeout(10, 0);
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  if (format == "text") headers.emplace("Accept", "text/plain");
  std::string query = a.has("explain") ? "?explain=true" : "?explain=false";
  if (format == "text" && (color == "always" || (color == "auto" && isatty(STDOUT_FILENO)))) query += "&color=true";

  // Small bundles go in one request; large ones through a session, in
  // posts that stay well under the service's default body limit.
  constexpr size_t kPost = 16u << 20;
  size_t total = context.dump().size();
  for (const auto& l : lines) total += l.size() + 1;
  std::string verdict;
  if (total <= 3 * kPost) {
    std::string body = context.dump() + "\n";
    for (const auto& l : lines) body += l + "\n";
    auto r = client.Post(("/v1/attributions" + query).c_str(), headers, body, "application/x-ndjson");
    if (!r || r->status != 200) return report_error(r);
    verdict = r->body;
  } else {
    auto c = client.Post("/v1/workloads", headers, context.dump(), "application/json");
    if (!c || c->status != 201) return report_error(c);
    auto id = nlohmann::json::parse(c->body, nullptr, false).value("id", std::string());
    std::string base = "/v1/workloads/" + id;
    std::string chunk;
    auto flush = [&]() {
      if (chunk.empty()) return true;
      auto p = client.Post((base + "/observations").c_str(), headers, chunk, "application/x-ndjson");
      chunk.clear();
      if (!p || p->status != 200) {
        report_error(p);
        return false;
      }
      return true;
    };
    bool ok = true;
    for (const auto& l : lines) {
      chunk += l + "\n";
      if (chunk.size() >= kPost && !(ok = flush())) break;
    }
    if (ok) ok = flush();
    if (!ok) {
      client.Delete(base.c_str(), headers);
      return 2;
    }
    auto r = client.Post((base + "/attribute" + query).c_str(), headers, "", "application/json");
    client.Delete(base.c_str(), headers);
    if (!r || r->status != 200) return report_error(r);
    verdict = r->body;
  }
  std::cout << verdict;
  std::cout.flush();
  return std::cout.good() ? 0 : 2;
}

}  // namespace culprit::service
