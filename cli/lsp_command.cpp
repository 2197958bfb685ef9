#include "cli/lsp_command.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "base/text_util.h"
#include "cli/args.h"
#include "cli/check_json.h"
#include "cli/lsp_index.h"
#include "cli/lsp_text.h"
#include "cli/lsp_transport.h"
#include "compiler/catalog_loader.h"
#include "compiler/query_plan.h"
#include "compiler/regex_check.h"
#include "runtime/native_code.h"

namespace culprit::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const char* kLspHelp = R"(Usage: culprit lsp [--rules PATH]... [--no-stdlib] [options]

A Language Server Protocol server for .attr files, for editors: it speaks
JSON-RPC over stdin and stdout. On opening and on saving a file it compiles
the catalog with it and publishes every diagnostic (code, range, help and
notes), the warnings `culprit check` adds included; hovering an event or symptom kind shows which extractors and rules
make and read it, hovering an extractor its sources, regex and kind; going
to the definition of a kind lists its makers, of an extractor its
declaration. How to hook it into an editor: docs/language.md section 8.

Options:
  --rules PATH       add a rule directory or .attr file (repeatable); a file
                     opened in the editor that no PATH holds is compiled
                     together with them
  --no-stdlib        do not load the bundled catalog
  --no-cache         neither read nor write the compile cache
  --cache-dir DIR    compile cache (default: $CULPRIT_CACHE_DIR, else
                     $XDG_CACHE_HOME/culprit, else ~/.cache/culprit)
  -h, --help         this help

Messages that cannot be read are logged on stderr and skipped.

Exit status: 0 after the client's shutdown (then exit, or the end of the
input), 1 when exit or the end of the input comes without shutdown, 2 bad
usage.
)";

// JSON-RPC 2.0 and LSP error codes.
constexpr int kParseError = -32700, kInvalidRequest = -32600, kMethodNotFound = -32601, kInvalidParams = -32602,
              kInternalError = -32603, kServerNotInitialized = -32002;

void log(const std::string& msg) { std::cerr << "culprit lsp: " << escape_for_terminal(msg) << "\n"; }

// Members read without exceptions: a message of the wrong shape gives
// null, "" or false and the caller answers InvalidParams.
const json* member(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}
std::string text_member(const json& j, const char* key) {
  const json* m = member(j, key);
  return m && m->is_string() ? m->get<std::string>() : std::string();
}
bool read_position(const json& params, lsp::Position& p) {
  const json* pos = member(params, "position");
  const json* line = pos ? member(*pos, "line") : nullptr;
  const json* ch = pos ? member(*pos, "character") : nullptr;
  if (!line || !ch || !line->is_number_unsigned() || !ch->is_number_unsigned()) return false;
  // Larger than any line of a 1 MiB file; kept in range of uint32_t.
  p.line = static_cast<uint32_t>(std::min<uint64_t>(line->get<uint64_t>(), UINT32_MAX));
  p.character = static_cast<uint32_t>(std::min<uint64_t>(ch->get<uint64_t>(), UINT32_MAX));
  return true;
}

json position_json(const lsp::Position& p) { return {{"line", p.line}, {"character", p.character}}; }
json range_json(const lsp::Range& r) { return {{"start", position_json(r.start)}, {"end", position_json(r.end)}}; }

// The path as the compiler will name it (absolute, normalized) and as files
// are compared (symbolic links resolved).
std::string absolute_path(const std::string& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return (ec ? fs::path(p) : a).lexically_normal().string();
}
std::string canonical_path(const std::string& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? absolute_path(p) : c.string();
}

class Server {
 public:
  Server(std::vector<std::string> base_paths, std::string cache_dir, bool with_stdlib)
      : base_paths_(std::move(base_paths)), cache_dir_(std::move(cache_dir)), with_stdlib_(with_stdlib) {
    for (const auto& p : base_paths_) base_canonical_.push_back(canonical_path(p));
  }

  // Handles one message; false once `exit` has come.
  bool handle(const std::string& body);
  int exit_status() const { return shutdown_ ? 0 : 1; }

 private:
  struct Document {
    std::string path, canonical;  // "" for a URI that is not a file's
    std::string text;             // as the editor has it (full sync)
    std::shared_ptr<const lsp::CatalogIndex> index;  // the last catalog that compiled with it
  };

  void dispatch(const std::string& method, const json* id, const json& params);
  void send(const json& msg);
  void respond(const json& id, json result) { send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}); }
  void fail(const json& id, int code, const std::string& message) {
    send({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
  }

  void open(const std::string& uri, std::string text);
  void compile_and_publish(const std::string& uri);
  void publish(const std::string& uri, const Diagnostics& diagnostics);
  // The URI of a file the compiler names: the one its editor opened it by,
  // else its file:// URI.
  std::string uri_for(const std::string& path) const;
  json lsp_diagnostic(const Diagnostic& d) const;
  bool held_by_base(const std::string& canonical) const;
  const lsp::CatalogIndex* index_for(const Document& d);
  json hover(const json& params);
  json definition(const json& params);
  // The document, the word at the position and its range; null when the
  // position is not on a word of an open document. `params` were checked.
  const Document* word_at(const json& params, std::string_view& word, lsp::Range& range);

  std::vector<std::string> base_paths_, base_canonical_;
  std::string cache_dir_;
  bool with_stdlib_;                      // the bundled catalog is the first part
  std::map<std::string, Document> docs_;  // by URI
  std::set<std::string> with_diagnostics_;  // URIs last published with a non-empty list
  std::shared_ptr<const lsp::CatalogIndex> base_index_;  // the catalog without any open document
  bool base_tried_ = false;
  bool initialized_ = false, shutdown_ = false;
};

void Server::send(const json& msg) {
  // Messages quote source text; invalid UTF-8 in it is replaced, never a throw.
  if (!lsp::write_message(std::cout, msg.dump(-1, ' ', false, json::error_handler_t::replace)))
    log("cannot write to stdout");
}

bool Server::handle(const std::string& body) {
  json msg = json::parse(body, nullptr, false);
  if (msg.is_discarded()) {
    log("a message that is not JSON");
    fail(nullptr, kParseError, "the message is not JSON");
    return true;
  }
  const json* id = member(msg, "id");
  const json* method = member(msg, "method");
  if (id && !id->is_number_integer() && !id->is_string() && !id->is_null()) {
    // JSON-RPC ids are numbers or strings; an answer to another could not be matched.
    fail(nullptr, kInvalidRequest, "the id must be an integer or a string");
    return true;
  }
  if (!method || !method->is_string()) {
    // A response to a request of ours: the server sends none, so there is
    // nothing to match it with.
    if (member(msg, "result") || member(msg, "error")) return true;
    fail(id ? *id : json(nullptr), kInvalidRequest, "the message is neither a request nor a notification");
    return true;
  }
  std::string name = method->get<std::string>();
  if (name == "exit") return false;
  const json* params = member(msg, "params");
  static const json kNoParams = json::object();
  try {
    dispatch(name, id, params ? *params : kNoParams);
  } catch (const std::exception& e) {
    // The handlers read params without throwing (member() and friends);
    // this is the net under anything they did not foresee, so one odd
    // message costs one error answer, never the server.
    log(fmt::format("{}: {}", name, e.what()));
    if (id) fail(*id, kInternalError, fmt::format("{}: {}", name, e.what()));
  }
  return true;
}

void Server::dispatch(const std::string& method, const json* id, const json& params) {
  if (id && shutdown_) return fail(*id, kInvalidRequest, "the server is shutting down");
  if (method == "initialize") {
    if (!id) return;
    initialized_ = true;
    json sync = {{"openClose", true}, {"change", 1 /* full */}, {"save", {{"includeText", false}}}};
    json caps = {{"positionEncoding", "utf-16"}, {"textDocumentSync", sync}, {"hoverProvider", true},
                 {"definitionProvider", true}};
    return respond(*id, {{"capabilities", caps}, {"serverInfo", {{"name", "culprit"}, {"version", CULPRIT_VERSION}}}});
  }
  if (!initialized_) {
    if (id) fail(*id, kServerNotInitialized, "initialize first");
    return;  // notifications before initialize are dropped, as the protocol says
  }
  if (method == "shutdown") {
    shutdown_ = true;
    if (id) respond(*id, nullptr);
    return;
  }
  const json* doc = member(params, "textDocument");
  std::string uri = doc ? text_member(*doc, "uri") : std::string();
  if (method == "textDocument/didOpen") {
    if (uri.empty()) return log("didOpen without a textDocument.uri");
    return open(uri, text_member(*doc, "text"));
  }
  if (method == "textDocument/didChange") {
    auto it = docs_.find(uri);
    const json* changes = member(params, "contentChanges");
    if (it == docs_.end() || !changes || !changes->is_array()) return log("didChange of a document that is not open");
    // Full sync: each change is the whole text; the last one wins.
    for (const auto& c : *changes)
      if (const json* t = member(c, "text"); t && t->is_string() && !member(c, "range")) it->second.text = t->get<std::string>();
    return;
  }
  if (method == "textDocument/didSave") {
    auto it = docs_.find(uri);
    if (it == docs_.end()) return log("didSave of a document that is not open");
    if (const json* t = member(params, "text"); t && t->is_string()) it->second.text = t->get<std::string>();
    return compile_and_publish(uri);
  }
  if (method == "textDocument/didClose") {
    if (docs_.erase(uri)) publish(uri, Diagnostics{});
    return;
  }
  if (method == "textDocument/hover" || method == "textDocument/definition") {
    if (!id) return;
    lsp::Position p;
    if (uri.empty() || !read_position(params, p))
      return fail(*id, kInvalidParams, "expected textDocument.uri and a position of unsigned line and character");
    return respond(*id, method == "textDocument/hover" ? hover(params) : definition(params));
  }
  if (id) fail(*id, kMethodNotFound, fmt::format("culprit lsp does not handle '{}'", method));
}

void Server::open(const std::string& uri, std::string text) {
  Document& d = docs_[uri];
  d.text = std::move(text);
  d.path = lsp::uri_to_path(uri);
  d.canonical = d.path.empty() ? std::string() : canonical_path(d.path);
  d.index.reset();
  if (d.path.empty()) {
    log(fmt::format("{} is not a file:// URI; it is not compiled (hover and definition answer from the catalog)", uri));
    return;
  }
  compile_and_publish(uri);
}

bool Server::held_by_base(const std::string& canonical) const {
  // A directory part loads every *.attr file below it.
  bool attr = canonical.size() > 5 && canonical.ends_with(".attr");
  for (const auto& b : base_canonical_)
    if (canonical == b || (attr && canonical.starts_with(b + "/"))) return true;
  return false;
}

void Server::compile_and_publish(const std::string& uri) {
  Document& d = docs_[uri];
  if (d.path.empty()) return;
  std::vector<std::string> paths = base_paths_;
  if (!held_by_base(d.canonical)) paths.push_back(absolute_path(d.path));
  // From disk: on open the file is as the editor read it, on save as it
  // wrote it; the compiler reads it exactly as `culprit check` would.
  LoadedCatalog loaded = load_catalog(paths, cache_dir_);
  if (loaded.ok()) {
    d.index = std::make_shared<const lsp::CatalogIndex>(loaded.catalog);
    // What `culprit check` adds once the rules are planned (E0801, a nested
    // query no index narrows), for every rule but the bundled catalog's, as
    // `check` does.
    const ir::Catalog& c = *loaded.catalog;
    std::string bundled = with_stdlib_ && !c.parts.empty() ? c.parts.front().root : std::string();
    if (!bundled.empty() && bundled.back() != '/') bundled += '/';
    plan::warn_unindexed_nesting(c, plan::plan_catalog(c), loaded.diagnostics,
                                 [&](const ir::Rule& r) { return !bundled.empty() && r.where.file && r.where.file->path.starts_with(bundled); });
  }
  publish(uri, loaded.diagnostics);
}

std::string Server::uri_for(const std::string& path) const {
  std::string canonical = canonical_path(path);
  for (const auto& [u, d] : docs_)
    if (d.canonical == canonical) return u;
  return lsp::path_to_uri(absolute_path(path));
}

json Server::lsp_diagnostic(const Diagnostic& d) const {
  static constexpr int kSeverity[] = {1, 2, 3};  // Severity::Error, Warning, Note
  std::string message = d.message;
  if (!d.help.empty()) message += "\nhelp: " + d.help;
  json related = json::array();
  for (const auto& n : d.notes) {
    if (n.where.file)
      related.push_back({{"location", {{"uri", uri_for(n.where.file->path)}, {"range", range_json(lsp::to_lsp(n.where))}}},
                         {"message", n.message}});
    else
      message += "\nnote: " + n.message;
  }
  json j = {{"range", range_json(lsp::to_lsp(d.where))},
            {"severity", kSeverity[static_cast<int>(d.severity)]},
            {"code", d.code},
            {"source", "culprit"},
            {"message", message},
            // The same diagnostic as `culprit check --format json` gives it
            // (1-based places, help and notes apart), for tools.
            {"data", json(diagnostic_json(d))}};
  if (!related.empty()) j["relatedInformation"] = std::move(related);
  return j;
}

void Server::publish(const std::string& uri, const Diagnostics& diagnostics) {
  std::map<std::string, json> lists;
  lists[uri] = json::array();
  for (const auto* d : diagnostics.sorted()) {
    // A diagnostic without a file (an unreadable path) is shown on the document.
    lists[d->where.file ? uri_for(d->where.file->path) : uri].push_back(lsp_diagnostic(*d));
  }
  // Files that had diagnostics and now have none get an empty list, so the
  // editor clears them.
  for (const auto& u : with_diagnostics_) lists.try_emplace(u, json::array());
  with_diagnostics_.clear();
  for (auto& [u, list] : lists) {
    if (!list.empty()) with_diagnostics_.insert(u);
    send({{"jsonrpc", "2.0"}, {"method", "textDocument/publishDiagnostics"},
          {"params", {{"uri", u}, {"diagnostics", std::move(list)}}}});
  }
}

const lsp::CatalogIndex* Server::index_for(const Document& d) {
  if (d.index) return d.index.get();
  if (!base_tried_ && !base_paths_.empty()) {
    base_tried_ = true;
    LoadedCatalog loaded = load_catalog(base_paths_, cache_dir_);
    if (loaded.ok()) base_index_ = std::make_shared<const lsp::CatalogIndex>(loaded.catalog);
    else log("the catalog without the open documents does not compile; hover and definition need a file that does");
  }
  return base_index_.get();
}

const Server::Document* Server::word_at(const json& params, std::string_view& word, lsp::Range& range) {
  lsp::Position p;
  if (!read_position(params, p)) return nullptr;
  auto it = docs_.find(text_member(*member(params, "textDocument"), "uri"));
  if (it == docs_.end()) return nullptr;
  std::string_view line = lsp::line_of(it->second.text, p.line);
  uint32_t start = 0;
  word = lsp::word_at(line, lsp::utf16_to_byte(line, p.character), start);
  if (word.empty()) return nullptr;
  range.start = {p.line, lsp::byte_to_utf16(line, start)};
  range.end = {p.line, lsp::byte_to_utf16(line, start + static_cast<uint32_t>(word.size()))};
  return &it->second;
}

json Server::hover(const json& params) {
  std::string_view word;
  lsp::Range range;
  const Document* d = word_at(params, word, range);
  const lsp::CatalogIndex* index = d ? index_for(*d) : nullptr;
  std::string md = index ? index->hover(word) : std::string();
  if (md.empty()) return nullptr;
  return {{"contents", {{"kind", "markdown"}, {"value", md}}}, {"range", range_json(range)}};
}

json Server::definition(const json& params) {
  std::string_view word;
  lsp::Range range;
  const Document* d = word_at(params, word, range);
  const lsp::CatalogIndex* index = d ? index_for(*d) : nullptr;
  if (!index) return nullptr;
  json out = json::array();
  for (const auto& r : index->definition(word))
    if (r.file) out.push_back({{"uri", uri_for(r.file->path)}, {"range", range_json(lsp::to_lsp(r))}});
  if (out.empty()) return nullptr;
  return out;
}

}  // namespace

int cmd_lsp(int argc, char** argv) {
  ArgSpec spec{{"help", "no-stdlib", "no-cache"}, {"rules", "cache-dir"}};
  Args a;
  std::string err;
  if (!parse_args(argc, argv, 2, spec, a, err) || !a.positionals.empty()) {
    if (err.empty()) err = "unexpected argument '" + a.positionals.front() + "'";
    std::cerr << fmt::format("culprit lsp: {}\nTry 'culprit lsp --help'.\n", escape_for_terminal(err));
    return 2;
  }
  if (a.has("help")) {
    std::cout << kLspHelp;
    return 0;
  }
  std::vector<std::string> paths;
  if (!a.has("no-stdlib")) paths.push_back(absolute_path(stdlib_directory()));
  for (const auto& p : a.all("rules")) {
    std::string abs = absolute_path(p);
    // Naming the bundled catalog again does not load it twice (cli/catalog_choice.h).
    if (!paths.empty() && !a.has("no-stdlib") && canonical_path(abs) == canonical_path(paths.front())) continue;
    paths.push_back(abs);
  }
  JitOptions jit;
  jit.use_cache = !a.has("no-cache");
  if (auto d = a.last("cache-dir")) jit.cache_dir = *d;
  std::string cache_dir = resolved_cache_dir(jit);
  set_regex_verdict_cache(cache_dir);

  std::ios::sync_with_stdio(false);
  Server server(std::move(paths), cache_dir, !a.has("no-stdlib"));
  for (;;) {
    lsp::Incoming in = lsp::read_message(std::cin);
    if (in.status == lsp::Incoming::End) break;
    if (in.status == lsp::Incoming::Skipped) {
      log(in.error);
      continue;
    }
    if (!server.handle(in.body)) break;
  }
  return server.exit_status();
}

}  // namespace culprit::cli
