// `culprit eval DIR [--baseline RESULTS.json] [--output RESULTS.json]`
//
// Runs the catalog over every bundle directory of DIR (a directory holding
// context.json) and compares each verdict with the bundle's expected.json:
//
//   {"status": "attributed", "domain": "hardware", "sub_domain": "nvlink",
//    "culprit_nodes": ["node-02"],
//    "candidates": [{"domain": ..., "sub_domain": ...}]}      (optional)
//
// A case matches when the status and domain are equal, the sub_domain is equal
// or a deeper level of the expected one ("nvlink" accepts
// "nvlink.signal_integrity"), the culprit node sets are equal, and every
// expected candidate (if listed) is among the verdict's candidates.
//
// The report: one row per case, precision/recall per label (the sub_domain of
// an attributed verdict, else its status), a confusion matrix of domains
// (status when not attributed), and the count of confidently wrong verdicts
// (attributed, but not to the expected domain/sub_domain/nodes).
// --output writes the results as JSON; --baseline diffs against such a file.
#include "cli/eval.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/vocabulary.h"
#include "cli/args.h"
#include "cli/catalog_choice.h"
#include "runtime/bundle.h"
#include "runtime/attributor.h"
#include "runtime/verdict_json.h"

namespace culprit::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kOk = 0, kMismatch = 1, kBadInput = 2;

const char* kEvalHelp = R"(Usage: culprit eval DIR [options]

Runs the rule catalog over every bundle in DIR (each subdirectory with a
context.json) and compares each verdict with the bundle's expected.json:
  {"status": "...", "domain": "...", "sub_domain": "...", "culprit_nodes": [...]}
(domain and sub_domain are null unless the status is attributed; an optional
"candidates": [{"domain", "sub_domain"}] is checked for ambiguous verdicts,
and an optional "hang": {"kind", "laggard_ranks", "laggard_nodes"}, each part
optional, against the verdict's hang detail).

A case matches when status and domain are equal, the verdict's sub_domain
equals the expected one or is a deeper level of it ("nvlink" accepts
"nvlink.signal_integrity"), and the culprit node sets are equal.

Prints a table per case, precision/recall per sub_domain (per status when
not attributed), a confusion matrix of domains, and the number of
confidently wrong verdicts (attributed, but to the wrong domain, sub_domain
or nodes).

Options:
  --output FILE          write the results as JSON (for a later --baseline)
  --baseline FILE        results of another catalog version (from --output):
                         list the verdicts that changed
  --rules PATH           add a rule directory or .attr file (repeatable)
  --no-stdlib            do not load the bundled catalog
  --threads N            scan each bundle with N threads (default: all cores)
  --min-match PCT        pass when at least PCT % of the cases match (0-100)
                         instead of requiring every case to match
  --max-confidently-wrong N
                         with --min-match: also fail when more than N
                         verdicts are confidently wrong (default 0)
  --skip-self-test       do not run the catalog's inline tests first (with the
                         cache, an unchanged catalog that passed them before is
                         not tested again: its record is read)
  --verify-captures      take every capture with RE2 as well as with PCRE2
                         (runtime/capture_regex.h) and fail on any line
                         where the two differ
  --engine jit|interp    run rules as native code (jit, the default; also
                         $CULPRIT_ENGINE) or interpret them
  --no-cache             neither read nor write the compile cache
  --cache-dir DIR        compile cache directory
  -h, --help             this help

Exit status: 0 every case matches (with --min-match: the match rate and the
confidently wrong count are within their bounds), 1 otherwise (or a bundle
has no expected.json, or --verify-captures found a difference), 2 bad input
or a catalog that does not compile.
)";

int usage(const std::string& msg) {
  std::cerr << fmt::format("culprit eval: {}\nTry 'culprit eval --help'.\n", msg);
  return kBadInput;
}

// Where a hang is (the verdict's `hang`): what the label says of it. An
// expected part left out is not checked.
struct HangLabel {
  std::string kind;                                  // "" = not checked
  std::optional<std::vector<int64_t>> ranks;         // sorted
  std::optional<std::vector<std::string>> nodes;     // sorted
};

struct Label {
  std::string status, domain, sub_domain;  // "" = null
  std::vector<std::string> nodes;           // sorted
  std::vector<std::pair<std::string, std::string>> candidates;
  std::string root_cause;
  std::optional<HangLabel> hang;
};

struct Case {
  std::string name;
  bool labeled = true;
  bool error = false;
  std::string error_text;
  Label expected, actual;
  bool match = false;
  bool confidently_wrong = false;
  bool hang_located = false;     // the expected hang detail, when there is one, matched
  std::vector<std::string> why;  // what did not match
};

std::string str_or_empty(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

bool read_file(const fs::path& p, std::string& out) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}

bool parse_expected(const fs::path& p, Label& out, std::string& err) {
  std::string text;
  if (!read_file(p, text)) {
    err = fmt::format("cannot read {}", p.string());
    return false;
  }
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    err = fmt::format("{}: not a JSON object", p.string());
    return false;
  }
  static const std::set<std::string> known = {"status", "domain", "sub_domain", "culprit_nodes", "candidates", "hang", "note"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!known.count(it.key())) {
      err = fmt::format("{}: unknown key '{}'", p.string(), it.key());
      return false;
    }
  out.status = str_or_empty(j, "status");
  if (!vocab::contains(vocab::statuses(), out.status)) {
    err = fmt::format("{}: status must be one of {}", p.string(), fmt::join(vocab::words(vocab::statuses()), ", "));
    return false;
  }
  out.domain = str_or_empty(j, "domain");
  out.sub_domain = str_or_empty(j, "sub_domain");
  if (auto it = j.find("culprit_nodes"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) {
      err = fmt::format("{}: culprit_nodes must be a list of node names", p.string());
      return false;
    }
    for (const auto& n : *it) {
      if (!n.is_string()) {
        err = fmt::format("{}: culprit_nodes must be a list of node names", p.string());
        return false;
      }
      out.nodes.push_back(n.get<std::string>());
    }
  }
  std::sort(out.nodes.begin(), out.nodes.end());
  if (auto it = j.find("candidates"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) {
      err = fmt::format("{}: candidates must be a list of {{domain, sub_domain}}", p.string());
      return false;
    }
    for (const auto& c : *it) {
      if (!c.is_object()) {
        err = fmt::format("{}: candidates must be a list of {{domain, sub_domain}}", p.string());
        return false;
      }
      out.candidates.emplace_back(str_or_empty(c, "domain"), str_or_empty(c, "sub_domain"));
    }
  }
  if (auto it = j.find("hang"); it != j.end() && !it->is_null()) {
    std::string bad = fmt::format("{}: hang must be {{\"kind\": straggler|desync|stalled_collective, \"laggard_ranks\": [int], "
                                  "\"laggard_nodes\": [name]}} (each optional)", p.string());
    if (!it->is_object()) {
      err = bad;
      return false;
    }
    HangLabel h;
    for (auto k = it->begin(); k != it->end(); ++k) {
      const json& v = k.value();
      if (k.key() == "kind" && v.is_string() &&
          (v == "straggler" || v == "desync" || v == "stalled_collective")) {
        h.kind = v.get<std::string>();
      } else if (k.key() == "laggard_ranks" && v.is_array() &&
                 std::all_of(v.begin(), v.end(), [](const json& r) { return r.is_number_integer(); })) {
        h.ranks = v.get<std::vector<int64_t>>();
        std::sort(h.ranks->begin(), h.ranks->end());
      } else if (k.key() == "laggard_nodes" && v.is_array() &&
                 std::all_of(v.begin(), v.end(), [](const json& n) { return n.is_string(); })) {
        h.nodes = v.get<std::vector<std::string>>();
        std::sort(h.nodes->begin(), h.nodes->end());
      } else {
        err = bad;
        return false;
      }
    }
    out.hang = std::move(h);
  }
  return true;
}

Label label_from_verdict(const json& v) {
  Label l;
  l.status = str_or_empty(v, "status");
  l.domain = str_or_empty(v, "domain");
  l.sub_domain = str_or_empty(v, "sub_domain");
  if (auto it = v.find("culprit_nodes"); it != v.end() && it->is_array())
    for (const auto& n : *it)
      if (n.is_string()) l.nodes.push_back(n.get<std::string>());
  std::sort(l.nodes.begin(), l.nodes.end());
  if (auto it = v.find("candidates"); it != v.end() && it->is_array())
    for (const auto& c : *it)
      if (c.is_object()) l.candidates.emplace_back(str_or_empty(c, "domain"), str_or_empty(c, "sub_domain"));
  if (auto it = v.find("root_cause"); it != v.end() && it->is_object()) l.root_cause = str_or_empty(*it, "symptom");
  if (auto it = v.find("hang"); it != v.end() && it->is_object()) {
    HangLabel h;
    h.kind = str_or_empty(*it, "kind");
    h.ranks.emplace();
    h.nodes.emplace();
    if (auto r = it->find("laggard_ranks"); r != it->end() && r->is_array())
      for (const auto& x : *r)
        if (x.is_number_integer()) h.ranks->push_back(x.get<int64_t>());
    if (auto n = it->find("laggard_nodes"); n != it->end() && n->is_array())
      for (const auto& x : *n)
        if (x.is_string()) h.nodes->push_back(x.get<std::string>());
    std::sort(h.ranks->begin(), h.ranks->end());
    std::sort(h.nodes->begin(), h.nodes->end());
    l.hang = std::move(h);
  }
  return l;
}

// "nvlink" accepts "nvlink" and "nvlink.signal_integrity", not "nvlinkx".
bool sub_domain_accepts(const std::string& expected, const std::string& actual) {
  if (expected == actual) return true;
  return !expected.empty() && actual.size() > expected.size() && actual.compare(0, expected.size(), expected) == 0 &&
         actual[expected.size()] == '.';
}

std::string show(const std::string& s) { return s.empty() ? "-" : s; }

std::string nodes_text(const std::vector<std::string>& n) {
  std::string s = "[";
  for (size_t i = 0; i < n.size(); ++i) s += (i ? "," : "") + n[i];
  return s + "]";
}

// The class a verdict is scored under: its sub_domain path when attributed,
// else its status.
std::string label_class(const Label& l) {
  if (l.status == vocab::status::kAttributed) return l.domain + "/" + l.sub_domain;
  return l.status;
}

std::string domain_class(const Label& l) { return l.status == vocab::status::kAttributed ? l.domain : l.status; }

void compare(Case& c) {
  const Label& e = c.expected;
  const Label& a = c.actual;
  if (e.status != a.status) c.why.push_back(fmt::format("status {} != {}", a.status, e.status));
  if (e.domain != a.domain) c.why.push_back(fmt::format("domain {} != {}", show(a.domain), show(e.domain)));
  if (!sub_domain_accepts(e.sub_domain, a.sub_domain))
    c.why.push_back(fmt::format("sub_domain {} != {}", show(a.sub_domain), show(e.sub_domain)));
  if (e.nodes != a.nodes) c.why.push_back(fmt::format("culprits {} != {}", nodes_text(a.nodes), nodes_text(e.nodes)));
  for (const auto& [d, s] : e.candidates) {
    bool found = false;
    for (const auto& [ad, as] : a.candidates) found = found || (ad == d && sub_domain_accepts(s, as));
    if (!found) c.why.push_back(fmt::format("missing candidate {}/{}", show(d), show(s)));
  }
  const size_t problems_before_hang = c.why.size();
  if (e.hang) {
    auto ranks_text = [](const std::vector<int64_t>& r) { return fmt::format("[{}]", fmt::join(r, ",")); };
    if (!a.hang) {
      c.why.push_back(fmt::format("hang not located != {}", e.hang->kind.empty() ? std::string("a hang") : e.hang->kind));
    } else {
      if (!e.hang->kind.empty() && e.hang->kind != a.hang->kind)
        c.why.push_back(fmt::format("hang {} != {}", a.hang->kind, e.hang->kind));
      if (e.hang->ranks && e.hang->ranks != a.hang->ranks)
        c.why.push_back(fmt::format("laggard ranks {} != {}", ranks_text(*a.hang->ranks), ranks_text(*e.hang->ranks)));
      if (e.hang->nodes && e.hang->nodes != a.hang->nodes)
        c.why.push_back(fmt::format("laggard nodes {} != {}", nodes_text(*a.hang->nodes), nodes_text(*e.hang->nodes)));
    }
  }
  c.hang_located = e.hang && c.why.size() == problems_before_hang;
  c.match = c.why.empty();
  c.confidently_wrong = !c.match && a.status == vocab::status::kAttributed;
}

json label_json(const Label& l) {
  json j = json::object();
  j["status"] = l.status;
  j["domain"] = l.domain.empty() ? json(nullptr) : json(l.domain);
  j["sub_domain"] = l.sub_domain.empty() ? json(nullptr) : json(l.sub_domain);
  j["culprit_nodes"] = l.nodes;
  if (!l.root_cause.empty()) j["root_cause"] = l.root_cause;
  if (l.hang) {
    json h = json::object();
    if (!l.hang->kind.empty()) h["kind"] = l.hang->kind;
    if (l.hang->ranks) h["laggard_ranks"] = *l.hang->ranks;
    if (l.hang->nodes) h["laggard_nodes"] = *l.hang->nodes;
    j["hang"] = std::move(h);
  }
  return j;
}

std::string short_label(const Label& l) {
  if (l.status == vocab::status::kAttributed) return fmt::format("{}/{} {}", l.domain, show(l.sub_domain), nodes_text(l.nodes));
  return l.status;
}

std::string pct(size_t num, size_t den) {
  if (den == 0) return "-";
  return fmt::format("{:.0f}%", 100.0 * static_cast<double>(num) / static_cast<double>(den));
}

}  // namespace

int cmd_eval(int argc, char** argv) {
  ArgSpec spec = with_catalog_options({{"skip-self-test", "verify-captures", "help"},
                                       {"baseline", "output", "threads", "min-match", "max-confidently-wrong"}});
  Args a;
  std::string err;
  if (!parse_args(argc, argv, 2, spec, a, err)) return usage(err);
  if (a.has("help")) {
    std::cout << kEvalHelp;
    return kOk;
  }
  if (a.positionals.size() != 1) return usage("expected exactly one DIR of example bundles");
  DiagnoseOptions opt;
  CaptureCounts captures;
  if (a.has("verify-captures")) {
    opt.verify_captures = true;
    opt.captures = &captures;
  }
  if (auto t = a.last("threads")) {
    char* end = nullptr;
    long n = std::strtol(t->c_str(), &end, 10);
    if (t->empty() || *end || n < 1 || n > 1024) return usage("--threads must be an integer from 1 to 1024");
    opt.threads = static_cast<unsigned>(n);
  }

  std::optional<double> min_match;
  long max_wrong = 0;
  if (auto m = a.last("min-match")) {
    char* end = nullptr;
    double v = std::strtod(m->c_str(), &end);
    if (m->empty() || *end || !(v >= 0 && v <= 100)) return usage("--min-match must be a percentage from 0 to 100");
    min_match = v;
  }
  if (auto w = a.last("max-confidently-wrong")) {
    if (!min_match) return usage("--max-confidently-wrong needs --min-match");
    char* end = nullptr;
    long n = std::strtol(w->c_str(), &end, 10);
    if (w->empty() || *end || n < 0) return usage("--max-confidently-wrong must be a non-negative integer");
    max_wrong = n;
  }

  const fs::path root = a.positionals[0];
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    std::cerr << fmt::format("culprit eval: {} is not a directory\n", root.string());
    return kBadInput;
  }
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(root, ec))
    if (entry.is_directory() && fs::exists(entry.path() / "context.json")) names.push_back(entry.path().filename().string());
  if (ec) {
    std::cerr << fmt::format("culprit eval: cannot list {}: {}\n", root.string(), ec.message());
    return kBadInput;
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) {
    std::cerr << fmt::format("culprit eval: no bundles in {} (a bundle is a directory with context.json)\n",
                             root.string());
    return kBadInput;
  }

  json baseline;
  if (auto b = a.last("baseline")) {
    std::string text;
    if (!read_file(*b, text)) {
      std::cerr << fmt::format("culprit eval: cannot read --baseline {}\n", *b);
      return kBadInput;
    }
    baseline = json::parse(text, nullptr, false);
    if (baseline.is_discarded() || !baseline.is_object() || !baseline.contains("cases") || !baseline["cases"].is_array()) {
      std::cerr << fmt::format("culprit eval: --baseline {} is not a results file written by 'culprit eval --output'\n",
                               *b);
      return kBadInput;
    }
  }

  // The catalog, compiled once.
  AttributorConfig config;
  if (!catalog_config(a, {}, config, err)) return usage(err);
  auto attributor = open_attributor("eval", config, !a.has("skip-self-test"),
                                    "refusing to evaluate it (run 'culprit test', or pass --skip-self-test)");
  if (!attributor) return kBadInput;

  // Every case.
  std::vector<Case> cases;
  for (const auto& name : names) {
    Case c;
    c.name = name;
    fs::path dir = root / name;
    if (!fs::exists(dir / "expected.json")) {
      c.labeled = false;
      c.why.push_back("no expected.json");
    } else if (!parse_expected(dir / "expected.json", c.expected, err)) {
      std::cerr << "culprit eval: " << err << "\n";
      return kBadInput;
    }
    Bundle bundle;
    Verdict verdict;
    if (!load_bundle(dir.string(), bundle, err) || !attributor->attribute(request_from_bundle(std::move(bundle)), opt, verdict, err)) {
      c.error = true;
      c.error_text = err;
      c.why.push_back("error: " + err);
    } else {
      json v = json::parse(verdict_to_json_text(verdict, false), nullptr, false);
      c.actual = label_from_verdict(v);
      if (c.labeled) compare(c);
    }
    cases.push_back(std::move(c));
  }

  // Per case.
  size_t width = 4;
  for (const auto& c : cases) width = std::max(width, c.name.size());
  std::cout << fmt::format("{:<{}}  {:<6}  {:<46}  {}\n", "case", width, "result", "expected", "verdict");
  size_t matched = 0, wrong_conf = 0, failures = 0;
  for (const auto& c : cases) {
    std::string result = c.match ? "ok" : (!c.labeled ? "NOLABEL" : (c.error ? "ERROR" : "FAIL"));
    std::cout << fmt::format("{:<{}}  {:<6}  {:<46}  {}\n", c.name, width, result,
                             c.labeled ? short_label(c.expected) : "-", c.error ? "-" : short_label(c.actual));
    if (!c.match)
      for (const auto& w : c.why) std::cout << fmt::format("{:<{}}          {}\n", "", width, w);
    matched += c.match;
    failures += !c.match;
    wrong_conf += c.confidently_wrong;
  }

  // Per label: precision and recall.
  std::map<std::string, std::array<size_t, 3>> per;  // tp, fp, fn
  for (const auto& c : cases) {
    if (!c.labeled || c.error) continue;
    std::string e = label_class(c.expected);
    std::string p = label_class(c.actual);
    // A deeper sub_domain than expected counts as the expected class.
    if (c.expected.status == vocab::status::kAttributed && c.actual.status == vocab::status::kAttributed && c.expected.domain == c.actual.domain &&
        sub_domain_accepts(c.expected.sub_domain, c.actual.sub_domain))
      p = e;
    bool ok = c.match;
    if (ok) {
      per[e][0]++;
    } else {
      per[p][1]++;
      per[e][2]++;
    }
  }
  std::cout << fmt::format("\n{:<44} {:>4} {:>4} {:>4} {:>9} {:>7}\n", "label (domain/sub_domain or status)", "tp", "fp",
                           "fn", "precision", "recall");
  for (const auto& [k, v] : per)
    std::cout << fmt::format("{:<44} {:>4} {:>4} {:>4} {:>9} {:>7}\n", k, v[0], v[1], v[2], pct(v[0], v[0] + v[1]),
                             pct(v[0], v[0] + v[2]));

  // Confusion of domains.
  std::vector<std::string> classes = vocab::words(vocab::domains());
  for (const auto& s : vocab::statuses())
    if (s.word != vocab::status::kAttributed) classes.emplace_back(s.word);
  std::map<std::pair<std::string, std::string>, size_t> conf;
  for (const auto& c : cases) {
    if (!c.labeled || c.error) continue;
    std::string e = domain_class(c.expected), p = domain_class(c.actual);
    for (const auto& s : {e, p})
      if (std::find(classes.begin(), classes.end(), s) == classes.end()) classes.push_back(s);
    conf[{e, p}]++;
  }
  std::cout << fmt::format("\nconfusion of domains (rows: expected, columns: verdict)\n{:<15}", "");
  for (const auto& col : classes) std::cout << fmt::format(" {:>9.9}", col);
  std::cout << "\n";
  for (const auto& row : classes) {
    std::cout << fmt::format("{:<15}", row);
    for (const auto& col : classes) {
      auto it = conf.find({row, col});
      std::cout << fmt::format(" {:>9}", it == conf.end() ? std::string(".") : std::to_string(it->second));
    }
    std::cout << "\n";
  }
  std::cout << fmt::format("\n{} cases: {} match, {} do not ({}); confidently wrong: {}\n", cases.size(), matched,
                           failures, pct(matched, cases.size()), wrong_conf);
  size_t hangs = 0, hangs_located = 0;
  for (const auto& c : cases)
    if (c.labeled && !c.error && c.expected.hang) {
      ++hangs;
      hangs_located += c.hang_located;
    }
  if (hangs) std::cout << fmt::format("hangs: {} labelled with where they are, {} located as labelled ({})\n", hangs, hangs_located, pct(hangs_located, hangs));

  // The results file.
  json out = json::object();
  out["schema"] = "culprit.eval/v1";
  const auto& cat = attributor->catalog();
  out["catalog"] = {{"name", cat.name}, {"version", cat.version}, {"digest", cat.digest}};
  out["cases"] = json::array();
  for (const auto& c : cases) {
    json j = {{"name", c.name}, {"match", c.match}, {"confidently_wrong", c.confidently_wrong}, {"problems", c.why}};
    j["expected"] = c.labeled ? label_json(c.expected) : json(nullptr);
    j["verdict"] = c.error ? json(nullptr) : label_json(c.actual);
    out["cases"].push_back(j);
  }
  out["summary"] = {{"cases", cases.size()}, {"match", matched}, {"mismatch", failures},
                    {"confidently_wrong", wrong_conf}};
  if (hangs) out["summary"]["hangs"] = {{"labelled", hangs}, {"located", hangs_located}};

  // Changes against the baseline.
  if (!baseline.is_null()) {
    std::map<std::string, json> old;
    for (const auto& c : baseline["cases"])
      if (c.is_object() && c.contains("name") && c["name"].is_string()) old[c["name"].get<std::string>()] = c;
    std::cout << "\nchanges against the baseline";
    if (baseline.contains("catalog") && baseline["catalog"].is_object())
      std::cout << fmt::format(" ({} {})", str_or_empty(baseline["catalog"], "version"),
                               str_or_empty(baseline["catalog"], "digest"));
    std::cout << ":\n";
    size_t changed = 0;
    std::set<std::string> seen;
    for (const auto& c : cases) {
      seen.insert(c.name);
      auto it = old.find(c.name);
      std::string now = c.error ? "error" : short_label(c.actual);
      if (it == old.end()) {
        std::cout << fmt::format("  new      {}: {}{}\n", c.name, now, c.match ? "" : " (FAIL)");
        ++changed;
        continue;
      }
      const json& ov = (*it).second["verdict"];
      std::string before = ov.is_object() ? short_label(label_from_verdict(ov)) : "error";
      bool was_ok = (*it).second.value("match", false);
      if (before != now || was_ok != c.match) {
        const char* tag = was_ok && !c.match ? "REGRESS" : (!was_ok && c.match ? "fixed" : "changed");
        std::cout << fmt::format("  {:<8} {}: {} -> {}\n", tag, c.name, before, now);
        ++changed;
      }
    }
    for (const auto& [n, _] : old)
      if (!seen.count(n)) {
        std::cout << fmt::format("  removed  {}\n", n);
        ++changed;
      }
    if (!changed) std::cout << "  none\n";
  }

  if (auto o = a.last("output")) {
    std::ofstream f(*o, std::ios::binary | std::ios::trunc);
    if (!f) {
      std::cerr << fmt::format("culprit eval: cannot write --output {}\n", *o);
      return kBadInput;
    }
    f << out.dump(2) << "\n";
    if (!f.good()) {
      std::cerr << fmt::format("culprit eval: cannot write --output {}\n", *o);
      return kBadInput;
    }
  }
  if (opt.verify_captures) {
    std::cout << fmt::format("captures: {} lines by PCRE2, {} given back to RE2, {} where PCRE2 and RE2 differ\n",
                             captures.pcre2, captures.fallbacks, captures.mismatches);
    for (const auto& n : captures.notes) std::cout << "  " << n << "\n";
    if (captures.mismatches) {
      std::cout.flush();
      return kMismatch;
    }
  }
  std::cout.flush();
  if (min_match) {
    bool unlabeled = false;
    for (const auto& c : cases) unlabeled |= !c.labeled;
    const double rate = 100.0 * static_cast<double>(matched) / static_cast<double>(cases.size());
    const bool ok = !unlabeled && rate + 1e-9 >= *min_match && static_cast<long>(wrong_conf) <= max_wrong;
    std::cout << fmt::format("gate: match rate {:.1f}% (at least {:g}% required), confidently wrong {} (at most {}): {}\n",
                             rate, *min_match, wrong_conf, max_wrong, ok ? "pass" : "FAIL");
    return ok ? kOk : kMismatch;
  }
  return failures ? kMismatch : kOk;
}

}  // namespace culprit::cli
