// `culprit diagnose --server URL BUNDLE`: the bundle client of the service.
// It sends the bundle's evidence to a running `culprit serve` and prints the
// verdict exactly as local mode would.
#include "cli/remote_diagnose.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "runtime/json_input.h"
#include "base/operator_file.h"
#include "base/text_util.h"
#include "blueprint/net/http_client.h"
#include "cli/args.h"
#include "cli/text_output.h"
#include "runtime/bundle.h"
#include "runtime/observation_reader.h"
#include "runtime/observation_writer.h"
#include "runtime/unread_json.h"

namespace culprit::cli {

namespace {

const char* kRemoteHelp = R"(Usage: culprit diagnose --server URL BUNDLE [options]

Sends the bundle's evidence to a running `culprit serve` and prints its
verdict: the same output as `culprit diagnose BUNDLE` run locally with the
service's catalog. Every log line is sent as a text observation carrying its
file, line number and byte offset, so provenance and coverage are identical.

Options:
  --format text|json     output format (default: text on a terminal, else json)
  --schema v2|v1         the JSON verdict's schema (default v2; v1 has no recommendation)
  --cascade              list every symptom with its rule and evidence lines
  --explain              --cascade plus the derivation trail
  --width N              fit the text report to N columns (default: the
                         terminal's, or $COLUMNS; 0 = never cut lines)
  --height N             fit the text report to N lines, shortening the lists
                         so the cause and what to do stay on screen (default:
                         the terminal's, or $LINES; 0 = never shorten)
  --color auto|always|never
                         auto: colour on a terminal unless $NO_COLOR is set
                         or $TERM is dumb
  --token-file FILE      bearer token for a service started with --token-file
  -h, --help             this help

Exit status: 0 verdict printed, 2 bad input or an error answer from the
service, 3 the service could not be reached.
)";


int usage(const std::string& msg) {
  std::cerr << fmt::format("culprit diagnose: {}\nTry 'culprit diagnose --help'.\n", escape_for_terminal(msg));
  return 2;
}

}  // namespace

bool wants_remote_diagnose(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "diagnose") != 0) return false;
  for (int i = 2; i < argc; ++i)
    if (std::strcmp(argv[i], "--server") == 0 || std::strncmp(argv[i], "--server=", 9) == 0) return true;
  return false;
}

namespace {


// Warnings about what the service cannot see as local mode does; printed
// once the evidence is sent, when the writer knows.
void warn_about_differences(const Bundle& b, const NdjsonObservationWriter& w, bool unread_sent) {
  for (const auto& f : w.empty_files())
    std::cerr << fmt::format("culprit diagnose: warning: {} is empty; the service's coverage will not count it as a file\n", f);
  if (size_t bad = w.invalid_utf8_lines())
    std::cerr << fmt::format("culprit diagnose: warning: {} line{} with invalid UTF-8 sent with U+FFFD replacements; "
                             "coverage lines_invalid_utf8 will differ from local mode\n",
                             bad, bad == 1 ? "" : "s");
  // A one-shot request carries them in `unread`; a session has no place for them.
  size_t unread = b.ignored_files.size() + b.refused_files.size() + b.warnings.size();
  if (!unread_sent && unread)
    std::cerr << fmt::format("culprit diagnose: warning: {} ignored or refused file{} and bundle warnings are not sent "
                             "with a bundle this large; the service's coverage will not list them\n",
                             unread, unread == 1 ? "" : "s");
}

// Prints the service's error answer or the transport failure; returns the
// exit status.
int report_error(const blueprint::HttpResponse& r, const std::string& url) {
  if (!r.error.empty()) {
    std::cerr << fmt::format("culprit diagnose: cannot reach the service at {}: {} (is 'culprit serve' running there?)\n", url,
                             escape_for_terminal(r.transport_problem()));
    return 3;
  }
  nlohmann::json j;
  std::string why, msg = r.body;
  if (parse_remote_json(r.body, j, why) && j.contains("error") && j["error"].is_object()) {
    msg = string_member_or(j["error"], "message", msg);
    if (j["error"].contains("details") && !j["error"]["details"].empty()) msg += " " + j["error"]["details"].dump();
  }
  std::cerr << fmt::format("culprit diagnose: the service answered {}: {}\n", r.status, escape_for_terminal(msg));
  return 2;
}

}  // namespace

int cmd_diagnose_remote(int argc, char** argv) {
  ArgSpec spec{{"explain", "cascade", "help", "no-stdlib", "skip-self-test", "no-cache"},
                    {"server", "format", "color", "width", "height", "token-file", "rules", "threads", "slack-before", "slack-after",
                     "engine", "cache-dir", "schema"}};
  Args a;
  std::string err;
  if (!parse_args(argc, argv, 2, spec, a, err)) return usage(err);
  if (a.has("help")) {
    std::cout << kRemoteHelp;
    return 0;
  }
  for (const char* local : {"no-stdlib", "skip-self-test", "no-cache"})
    if (a.has(local)) return usage(fmt::format("--{} does not apply with --server (the service's catalog and settings do)", local));
  for (const char* local : {"rules", "threads", "slack-before", "slack-after", "engine", "cache-dir"})
    if (a.last(local)) return usage(fmt::format("--{} does not apply with --server (the service's catalog and settings do)", local));
  if (a.positionals.size() != 1) return usage("expected exactly one BUNDLE directory");
  std::string url = *a.last("server");
  std::string format = a.last("format").value_or(isatty(STDOUT_FILENO) ? "text" : "json");
  if (format != "text" && format != "json") return usage("--format must be text or json");
  auto schema = a.last("schema");
  if (schema && *schema != "v1" && *schema != "v2") return usage("--schema must be v2 or v1");
  if (schema && format != "json") return usage("--schema applies only with --format json");
  TextOptions text;
  if (!text_options(a, text, err)) return usage(err);
  std::string token;
  if (auto f = a.last("token-file"))
    if (!read_secret(*f, "", token, err)) return usage("--token-file: " + err);

  Bundle bundle;
  if (!load_bundle(a.positionals[0], bundle, err)) {
    std::cerr << "culprit diagnose: " << escape_for_terminal(err) << "\n";
    return 2;
  }
  if (std::string m = missing_logs_message(bundle, a.positionals[0]); !m.empty()) {
    std::cerr << "culprit diagnose: " << escape_for_terminal(m) << "\n";
    return 2;
  }
  std::ifstream cin_(bundle.root + "/context.json", std::ios::binary);
  std::string context_text((std::istreambuf_iterator<char>(cin_)), std::istreambuf_iterator<char>());
  auto context = nlohmann::ordered_json::parse(context_text, nullptr, false);
  if (context.is_discarded()) {
    std::cerr << "culprit diagnose: context.json is not valid JSON\n";
    return 2;
  }
  // observations.jsonl is read (and checked) as local mode reads it, with
  // the same defaults and the same messages; the log files are streamed.
  std::vector<Observation> observations;
  if (!bundle.observations_path.empty() && !read_observations_file(bundle.observations_path, observations, err)) {
    std::cerr << "culprit diagnose: " << escape_for_terminal(err) << "\n";
    return 2;
  }
  // What load_bundle read into memory (Flight Recorder dumps, rendered) goes
  // as observations too, so the service reads what local mode reads.
  observations.insert(observations.end(), bundle.observations.begin(), bundle.observations.end());
  NdjsonObservationWriter writer(std::move(observations), bundle.files);

  std::string why;
  if (!blueprint::HttpClient::usable_base_url(url, why)) return usage("--server must be a URL such as http://127.0.0.1:8080: " + why);
  blueprint::HttpClientConfig hc;
  hc.base_url = url;
  hc.token = token;
  hc.timeout_ns = 0;                            // a large bundle takes as long as it takes,
  hc.stall_timeout_ns = 600LL * 1000000000;     // but not with nothing moving for 10 minutes
  hc.retries = 0;                               // POSTs create sessions: never repeated
  blueprint::HttpClient client(std::move(hc));
  std::vector<std::pair<std::string, std::string>> headers;
  if (format == "text") headers.emplace_back("Accept", "text/plain");
  auto request = [&](const char* method, const std::string& path, std::string body, const char* content_type) {
    blueprint::HttpRequest r;
    r.method = method;
    r.path = path;
    r.body = std::move(body);
    r.content_type = content_type;
    r.headers = headers;
    return client.send(r);
  };
  std::string query = a.has("explain") ? "?explain=true" : "?explain=false";
  if (schema) query += "&schema=" + *schema;
  if (format == "text") {
    if (text.color) query += "&color=true";
    if (text.cascade) query += "&cascade=true";
    query += fmt::format("&width={}", text.width);
  }

  // Small bundles go in one request; large ones through a session, in
  // posts that stay well under the service's default body limit. Up to
  // kOneShot bytes are held to decide which; past that, memory holds one
  // post, however large the bundle.
  constexpr size_t kPost = 16u << 20, kOneShot = 3 * kPost;
  auto writer_failed = [&]() {
    std::cerr << "culprit diagnose: " << writer.error() << "\n";
    return 2;
  };
  std::vector<std::string> held;
  size_t held_bytes = 0;
  bool ended = false;
  while (held_bytes <= kOneShot) {
    std::string chunk;
    if (!writer.next(chunk, kPost)) {
      if (!writer.error().empty()) return writer_failed();
      ended = true;
      break;
    }
    held_bytes += chunk.size();
    held.push_back(std::move(chunk));
  }
  std::string verdict;
  if (ended) {
    // The head line: the context, and what the bundle holds but local mode
    // does not read, so the service's coverage lists it too.
    nlohmann::ordered_json head = context;
    if (auto unread = unread_to_json(bundle); !unread.is_null()) head = {{"context", context}, {"unread", unread}};
    std::string body = head.dump() + "\n";
    body.reserve(body.size() + held_bytes);
    for (auto& c : held) body += c;
    held.clear();
    auto r = request("POST", "/v1/attributions" + query, std::move(body), "application/x-ndjson");
    if (r.status != 200) return report_error(r, url);
    verdict = std::move(r.body);
  } else {
    auto c = request("POST", "/v1/workloads", context.dump(), "application/json");
    if (c.status != 201) return report_error(c, url);
    nlohmann::json created;
    if (!parse_remote_json(c.body, created, why) || string_member_or(created, "id").empty()) {
      std::cerr << fmt::format("culprit diagnose: the service's answer to POST /v1/workloads has no id: {}\n",
                               escape_for_terminal(why.empty() ? c.body.substr(0, 300) : why));
      return 2;
    }
    auto id = string_member_or(created, "id");
    std::string base = "/v1/workloads/" + id;
    auto post = [&](const std::string& chunk) {
      auto p = request("POST", base + "/observations", chunk, "application/x-ndjson");
      if (p.status != 200) {
        report_error(p, url);
        return false;
      }
      return true;
    };
    bool ok = true;
    for (size_t i = 0; ok && i < held.size(); ++i) {
      ok = post(held[i]);
      held[i] = std::string();
    }
    std::string chunk;
    while (ok && writer.next(chunk, kPost)) ok = post(chunk);
    if (ok && !writer.error().empty()) {
      writer_failed();
      ok = false;
    }
    if (!ok) {
      request("DELETE", base, "", "");
      return 2;
    }
    auto r = request("POST", base + "/attribute" + query, "", "application/json");
    request("DELETE", base, "", "");
    if (r.status != 200) return report_error(r, url);
    verdict = std::move(r.body);
  }
  warn_about_differences(bundle, writer, ended);
  std::cout << verdict;
  std::cout.flush();
  return std::cout.good() ? 0 : 2;
}

}  // namespace culprit::cli
