#include "runtime/recovery.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "base/vocabulary.h"
#include "base/sha256.h"
#include "base/suggest.h"

namespace culprit {

namespace {

const std::vector<std::string> kLineKinds = {"bucket", "xid", "class", "domain"};
const std::vector<std::string> kDomains = vocab::words(vocab::domains());
// The log source of what the job itself prints (docs/language.md): whoever
// runs the job writes it, so it alone never takes a node out of service.
const char* const kJobOutputSource = "app";

struct Token {
  std::string text;
  uint32_t col = 0;     // 1-based byte column
  bool quoted = false;
};

SourceRange at(const SourceFile* f, uint32_t line, uint32_t col, size_t len) {
  SourceRange r;
  r.file = f;
  r.line = r.end_line = line;
  r.col = col;
  r.end_col = col + static_cast<uint32_t>(std::max<size_t>(len, 1));
  return r;
}

// Splits one line into blank-separated words and one optional "quoted note";
// drops a '#' comment outside quotes. False (with the column) for a note
// that does not end on its line.
bool tokenize(std::string_view line, std::vector<Token>& out, uint32_t& bad_col) {
  size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r') { ++i; continue; }
    if (c == '#') break;
    Token t;
    t.col = static_cast<uint32_t>(i + 1);
    if (c == '"') {
      size_t end = line.find('"', i + 1);
      if (end == std::string_view::npos) {
        bad_col = t.col;
        return false;
      }
      t.text = std::string(line.substr(i + 1, end - i - 1));
      t.quoted = true;
      i = end + 1;
    } else {
      size_t end = i;
      while (end < line.size() && line[end] != ' ' && line[end] != '\t' && line[end] != '\r' && line[end] != '#') ++end;
      t.text = std::string(line.substr(i, end - i));
      i = end;
    }
    out.push_back(std::move(t));
  }
  return true;
}

bool valid_class_name(const std::string& s) {
  if (s.empty() || s.front() == '.' || s.back() == '.') return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.')) return false;
  return s.find("..") == std::string::npos;
}

size_t vocabulary_index(const std::string& action) {
  const auto& v = node_actions();
  return static_cast<size_t>(std::find(v.begin(), v.end(), action) - v.begin());
}

}  // namespace

const std::vector<std::string>& job_actions() {
  static const std::vector<std::string> v = vocab::words(vocab::job_actions());
  return v;
}

const std::vector<std::string>& node_actions() {
  static const std::vector<std::string> v = vocab::words(vocab::node_actions());
  return v;
}

bool rests_on_job_output_only(const Symptom& s) {
  // The engine records every source (evidence_sources); a symptom made
  // elsewhere (a test, an older caller) has at least its capped evidence.
  std::vector<std::string> sources = s.evidence_sources;
  if (sources.empty())
    for (const auto& e : s.evidence) sources.emplace_back(e.source);
  if (sources.empty()) return false;
  return std::all_of(sources.begin(), sources.end(), [](const std::string& src) { return src == kJobOutputSource; });
}

bool parse_recovery_table(const std::string& path, const std::string& text, RecoveryTable& table, Diagnostics& diags) {
  auto file = make_source_file(path, text);
  diags.keep(file);
  const SourceFile* f = file.get();
  size_t errors_before = diags.error_count();
  std::set<std::string> seen;  // keys defined in this file
  struct PendingXid {
    int64_t xid;
    std::string bucket;
    SourceRange where;
  };
  std::vector<PendingXid> pending;
  std::string base = std::filesystem::path(path).filename().string();
  uint32_t line_no = 0;
  std::istringstream in(text);
  for (std::string raw; std::getline(in, raw);) {
    ++line_no;
    std::vector<Token> toks;
    uint32_t bad = 0;
    if (!tokenize(raw, toks, bad)) {
      diags.error("E0909", at(f, line_no, bad, 1), "this note has no closing quote", "end the note with '\"' on the same line");
      continue;
    }
    if (toks.empty()) continue;
    const Token& kind = toks[0];
    auto where_text = fmt::format("{}:{}", base, line_no);
    if (kind.quoted || std::find(kLineKinds.begin(), kLineKinds.end(), kind.text) == kLineKinds.end()) {
      diags.error("E0902", at(f, line_no, kind.col, kind.text.size()), fmt::format("unknown line '{}'", kind.text),
                  did_you_mean(kind.text, kLineKinds).empty() ? "a line starts with bucket, xid, class or domain"
                                                              : did_you_mean(kind.text, kLineKinds));
      continue;
    }
    // Words after the kind, then the optional note (last, quoted).
    std::vector<const Token*> words;
    const Token* note = nullptr;
    for (size_t i = 1; i < toks.size(); ++i) {
      if (toks[i].quoted) {
        if (i + 1 != toks.size()) {
          diags.error("E0903", at(f, line_no, toks[i + 1].col, toks[i + 1].text.size()), "nothing may follow the note");
          note = nullptr;
          words.clear();
          break;
        }
        note = &toks[i];
      } else {
        words.push_back(&toks[i]);
      }
    }
    size_t want = kind.text == "bucket" || kind.text == "xid" ? 2 : 3;
    const char* shape = kind.text == "bucket" ? "bucket NAME ACTIONS [\"note\"]"
                        : kind.text == "xid"  ? "xid NUMBER BUCKET"
                        : kind.text == "class" ? "class DOMAIN/SUB_DOMAIN JOB ACTIONS [\"note\"]"
                                               : "domain DOMAIN JOB ACTIONS [\"note\"]";
    if (words.size() != want) {
      uint32_t col = words.size() > want ? words[want]->col : static_cast<uint32_t>(raw.size() + 1);
      diags.error("E0903", at(f, line_no, col, words.size() > want ? words[want]->text.size() : 1),
                  fmt::format("a {} line has {} column{} after '{}', not {}", kind.text, want, want == 1 ? "" : "s",
                              kind.text, words.size()),
                  fmt::format("write: {}", shape));
      continue;
    }
    if (kind.text == "xid") {
      const Token& n = *words[0];
      char* end = nullptr;
      long v = std::strtol(n.text.c_str(), &end, 10);
      if (n.text.empty() || *end || v < 0 || v > 100000) {
        diags.error("E0907", at(f, line_no, n.col, n.text.size()), fmt::format("'{}' is not an XID number", n.text));
        continue;
      }
      if (note) diags.error("E0903", at(f, line_no, note->col, note->text.size() + 2), "an xid line takes no note",
                            "put the note on the bucket line");
      std::string key = fmt::format("xid {}", v);
      if (!seen.insert(key).second) {
        diags.error("E0907", at(f, line_no, n.col, n.text.size()), fmt::format("XID {} is listed twice in this file", v));
        continue;
      }
      pending.push_back({v, words[1]->text, at(f, line_no, words[1]->col, words[1]->text.size())});
      continue;
    }
    RecoveryEntry e;
    e.where = where_text;
    e.note = note ? note->text : "";
    const Token& name = *words[0];
    size_t actions_at = 1;
    if (kind.text == "bucket") {
      e.key = "bucket " + name.text;
    } else {
      if (kind.text == "class") {
        auto slash = name.text.find('/');
        std::string domain = slash == std::string::npos ? name.text : name.text.substr(0, slash);
        std::string sub = slash == std::string::npos ? "" : name.text.substr(slash + 1);
        if (std::find(kDomains.begin(), kDomains.end(), domain) == kDomains.end()) {
          diags.error("E0907", at(f, line_no, name.col, domain.size()), fmt::format("unknown domain '{}'", domain),
                      did_you_mean(domain, kDomains).empty() ? "the domains are hardware, software, infrastructure and user"
                                                             : did_you_mean(domain, kDomains));
          continue;
        }
        if (!valid_class_name(sub)) {
          diags.error("E0907", at(f, line_no, name.col, name.text.size()),
                      fmt::format("'{}' is not DOMAIN/SUB_DOMAIN", name.text), "for example hardware/gpu.memory");
          continue;
        }
        e.key = "class " + name.text;
      } else {
        if (std::find(kDomains.begin(), kDomains.end(), name.text) == kDomains.end()) {
          diags.error("E0907", at(f, line_no, name.col, name.text.size()), fmt::format("unknown domain '{}'", name.text),
                      did_you_mean(name.text, kDomains).empty() ? "the domains are hardware, software, infrastructure and user"
                                                                : did_you_mean(name.text, kDomains));
          continue;
        }
        e.key = "domain " + name.text;
      }
      const Token& job = *words[1];
      if (std::find(job_actions().begin(), job_actions().end(), job.text) == job_actions().end()) {
        std::string hint = did_you_mean(job.text, job_actions());
        diags.error("E0904", at(f, line_no, job.col, job.text.size()), fmt::format("unknown job action '{}'", job.text),
                    hint.empty() ? "the job actions are restart, restart_excluding, stop_fix_config, stop_fix_code and none" : hint);
        continue;
      }
      e.job = job.text;
      actions_at = 2;
    }
    const Token& acts = *words[actions_at];
    bool ok = true;
    if (acts.text != "-") {
      size_t from = 0;
      while (from <= acts.text.size()) {
        size_t comma = acts.text.find(',', from);
        if (comma == std::string::npos) comma = acts.text.size();
        std::string a = acts.text.substr(from, comma - from);
        uint32_t col = acts.col + static_cast<uint32_t>(from);
        bool known = std::find(node_actions().begin(), node_actions().end(), a) != node_actions().end();
        if (a == "xid" && kind.text == "bucket") {
          diags.error("E0906", at(f, line_no, col, a.size()), "a bucket cannot refer to an XID bucket",
                      "list the node actions of the bucket");
          ok = false;
        } else if (!known && a != "xid") {
          std::vector<std::string> choices = node_actions();
          if (kind.text != "bucket") choices.push_back("xid");
          std::string hint = did_you_mean(a, choices);
          diags.error("E0905", at(f, line_no, col, a.size()), fmt::format("unknown node action '{}'", a),
                      hint.empty() ? "the node actions are drain, reset_gpu, reboot, inspect_link, replace_suspect, inspect (and xid), "
                                     "comma-separated without blanks, or '-' for none"
                                   : hint);
          ok = false;
        } else if (std::find(e.actions.begin(), e.actions.end(), a) != e.actions.end()) {
          diags.error("E0905", at(f, line_no, col, a.size()), fmt::format("'{}' is listed twice", a));
          ok = false;
        } else {
          e.actions.push_back(a);
        }
        from = comma + 1;
      }
    }
    if (!ok) continue;
    if (!seen.insert(e.key).second) {
      diags.error("E0907", at(f, line_no, name.col, name.text.size()), fmt::format("'{}' is listed twice in this file", e.key));
      continue;
    }
    if (kind.text == "bucket") table.buckets[name.text] = std::move(e);
    else if (kind.text == "class") table.classes[name.text] = std::move(e);
    else table.domains[name.text] = std::move(e);
  }
  for (const auto& p : pending) {
    if (!table.buckets.count(p.bucket)) {
      std::vector<std::string> names;
      for (const auto& [n, b] : table.buckets) names.push_back(n);
      std::string hint = did_you_mean(p.bucket, names);
      diags.error("E0906", p.where, fmt::format("unknown bucket '{}'", p.bucket),
                  hint.empty() ? "declare it with a bucket line first" : hint);
      continue;
    }
    table.xids[p.xid] = p.bucket;
  }
  return diags.error_count() == errors_before;
}

std::shared_ptr<const RecoveryTable> load_recovery_table(const std::vector<std::string>& roots, Diagnostics& diags,
                                                         const ir::Catalog* catalog) {
  auto table = std::make_shared<RecoveryTable>();
  std::string all_bytes;
  bool ok = true;
  for (const auto& root : roots) {
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::is_directory(root, ec) ? std::filesystem::path(root)
                                                                         : std::filesystem::path(root).parent_path();
    std::filesystem::path p = dir / "recovery.table";
    if (!std::filesystem::exists(p, ec)) continue;
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in.good() && !in.eof()) {
      diags.error("E0901", SourceRange{}, fmt::format("{}: cannot read the recovery table", p.string()));
      ok = false;
      continue;
    }
    std::string text = ss.str();
    if (!parse_recovery_table(p.string(), text, *table, diags)) ok = false;
    table->files.push_back(p.string());
    all_bytes += fmt::format("{}\n{}\n", p.filename().string(), text.size());
    all_bytes += text;
  }
  if (!ok) return nullptr;
  if (!table->files.empty()) table->digest = "sha256:" + sha256_hex(all_bytes);
  if (catalog) {
    // Each class at its first classify, so the warning points at the rule
    // that made it, and its help names the table beside that rule's file.
    std::map<std::pair<std::string, std::string>, SourceRange> classes;
    for (const auto& r : catalog->rules)
      for (const auto& a : r.actions)
        if (a.kind == ir::ActionKind::Classify) classes.emplace(std::make_pair(a.domain, a.sub_domain), a.where);
    for (const auto& [cls, where] : classes) {
      const auto& [d, sd] = cls;
      if (table->classes.count(d + "/" + sd) || table->files.empty()) continue;
      std::string file = where.file ? (std::filesystem::path(where.file->path).parent_path() / "recovery.table").string()
                                    : table->files.back();
      diags.warning("E0908", where,
                    fmt::format("class {}/{} has no line in the recovery table; it gets the {} default ({})", d, sd, d,
                                table->domains.count(d) ? table->domains.at(d).job : std::string(vocab::job_action::kNone)),
                    fmt::format("add to {}: class {}/{} JOB ACTIONS (docs/recovery.md, \"Where the actions come from\")", file, d,
                                sd));
    }
  }
  return table;
}

namespace {

// The XID numbers a cause symptom names: an integer `xid` field, or a
// comma-separated `xids` one ("144,149").
std::vector<int64_t> symptom_xids(const Symptom& s) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < s.field_names.size() && i < s.fields.size(); ++i) {
    const Value& v = s.fields[i];
    if (s.field_names[i] == "xid" && v.type == Type::Int) out.push_back(v.i);
    if (s.field_names[i] == "xids" && v.type == Type::String) {
      std::stringstream ss(v.s);
      for (std::string part; std::getline(ss, part, ',');) {
        char* end = nullptr;
        long n = std::strtol(part.c_str(), &end, 10);
        if (!part.empty() && !*end) out.push_back(n);
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string field_text(const Symptom& s, const std::string& name) {
  for (size_t i = 0; i < s.field_names.size() && i < s.fields.size(); ++i) {
    if (s.field_names[i] != name) continue;
    const Value& v = s.fields[i];
    if (v.type == Type::String) return v.s;
    if (v.type == Type::Int) return std::to_string(v.i);
  }
  return "";
}

// What a node action acts on, from the cause's fields.
std::map<std::string, std::string> action_target(const std::string& action, const Symptom& s) {
  std::map<std::string, std::string> t;
  auto put = [&](const char* key, const std::string& field) {
    std::string v = field_text(s, field);
    if (!v.empty()) t[key] = v;
  };
  if (action == vocab::node_action::kResetGpu) put("pci", "pci");
  if (action == vocab::node_action::kInspectLink) {
    put("pci", "pci");
    put("links", "link_list");
    put("device", "device");
    put("port", "port");
  }
  if (action == vocab::node_action::kReplaceSuspect) {
    put("pci", "pci");
    put("device", "device");
  }
  return t;
}

std::vector<std::string> evidence_refs(const Symptom& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.evidence.size() && i < 5; ++i) out.push_back(fmt::format("{}:{}", s.evidence[i].file, s.evidence[i].line));
  return out;
}

std::string target_text(const std::map<std::string, std::string>& t) {
  std::string out;
  for (const auto& [k, v] : t) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", k, v);
  return out;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

void sort_unique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

namespace {

// The table's line for a class, else its domain's; null when neither.
const RecoveryEntry* entry_for(const RecoveryTable& table, const std::string& domain, const std::string& sub_domain) {
  if (auto it = table.classes.find(domain + "/" + sub_domain); it != table.classes.end()) return &it->second;
  if (auto d = table.domains.find(domain); d != table.domains.end()) return &d->second;
  return nullptr;
}

// An ambiguous verdict names no cause, so nothing is done to a node; but a
// candidate that would act on its nodes on its own (an uncorrectable memory
// error, a fatal PCIe error) should not go unlooked-at because another
// candidate competes with it for the job. Each such candidate's nodes get
// `inspect`, never more: a person decides.
std::vector<RecommendedAction> candidate_checks(const Verdict& verdict, const RecoveryTable& table) {
  std::map<std::string, RecommendedAction> by_node;
  std::map<std::string, std::vector<std::string>> classes_of;  // node -> the candidates' classes, in candidate order
  for (const auto& c : verdict.outcome.candidates) {
    std::string cls = c.domain + "/" + c.sub_domain;
    const RecoveryEntry* entry = entry_for(table, c.domain, c.sub_domain);
    if (!entry || entry->actions.empty()) continue;
    for (const auto& node : c.nodes) {
      RecommendedAction& ra = by_node[node];
      ra.scope = "node";
      ra.node = node;
      ra.action = vocab::node_action::kInspect;
      ra.basis = "candidate of an ambiguous verdict";
      classes_of[node].push_back(cls);
      for (const auto& id : c.symptoms)
        for (const auto& s : verdict.symptoms)
          if (s.id == id && s.node == node) {
            ra.symptoms.push_back(s.id);
            if (ra.rule.empty()) ra.rule = s.rule;
            auto ev = evidence_refs(s);
            ra.evidence.insert(ra.evidence.end(), ev.begin(), ev.end());
          }
    }
  }
  std::vector<RecommendedAction> out;
  for (auto& [node, ra] : by_node) {
    ra.why = fmt::format("{} of an ambiguous verdict: looked at, not drained, until a person decides",
                         join(classes_of[node], " and "));
    ra.reason = fmt::format("inspect {} ({})", node, ra.why);
    sort_unique(ra.symptoms);
    sort_unique(ra.evidence);
    out.push_back(std::move(ra));
  }
  return out;
}

}  // namespace

Recommendation recommend(const Verdict& verdict, const RecoveryTable& table) {
  Recommendation r;
  RecommendedAction& job = r.job;
  job.scope = "job";
  job.action = vocab::job_action::kNone;
  const Outcome& o = verdict.outcome;
  if (o.status != vocab::status::kAttributed) {
    // Never a node action that takes a node out of service: a verdict that
    // does not name one cause is not evidence enough. An ambiguous one still
    // has its candidates' nodes inspected (candidate_checks).
    if (o.status == vocab::status::kNoFailure) {
      job.why = "the workload did not fail";
      job.reason = job.why + ": nothing to recover";
    } else if (o.status == vocab::status::kAmbiguous) {
      std::vector<std::string> names;
      for (const auto& c : o.candidates) names.push_back(c.domain + "/" + c.sub_domain);
      r.nodes = candidate_checks(verdict, table);
      job.why = fmt::format("ambiguous between {}: no action follows until a person decides", join(names, " and "));
      job.reason = job.why + (r.nodes.empty() ? "" : "; the nodes a candidate would act on are to be inspected");
      for (const auto& c : o.candidates) job.symptoms.insert(job.symptoms.end(), c.symptoms.begin(), c.symptoms.end());
    } else {
      job.why = "no cause was attributed";
      job.reason = job.why + ": no action follows from this evidence";
    }
    job.basis = "status " + o.status;
    // A localised hang with no cause says where to look (runtime/hang_location.h):
    // its laggards' nodes are inspected, never drained; ranks that called
    // different collectives are the job's code to fix.
    if (o.status == vocab::status::kUnattributed && verdict.hang) {
      const HangLocation& h = *verdict.hang;
      if (h.kind == "desync") {
        job.action = vocab::job_action::kStopFixCode;
        job.basis = "hang desync";
        job.why = "no cause was attributed, but the ranks called different collectives (a desync): the job's code diverged between them";
        job.reason = "stop and fix the code: " + h.summary;
        job.symptoms = h.evidence;
      } else if (h.kind == "straggler" && !h.laggard_nodes.empty()) {
        for (const auto& node : h.laggard_nodes) {
          RecommendedAction a;
          a.scope = "node";
          a.node = node;
          a.action = vocab::node_action::kInspect;
          a.basis = "hang straggler";
          a.why = "where the hang is: a rank the others waited for ran here";
          a.reason = fmt::format("inspect {}: {}", node, h.summary);
          a.symptoms = h.evidence;
          r.nodes.push_back(std::move(a));
        }
        job.why = "no cause was attributed; the hang's laggard ran on " + join(h.laggard_nodes, ", ");
        job.reason = job.why + ": inspect it before restarting there";
        job.symptoms = h.evidence;
      }
    }
    sort_unique(job.symptoms);
    return r;
  }
  std::string cls = o.domain + "/" + o.sub_domain;
  const RecoveryEntry* entry = entry_for(table, o.domain, o.sub_domain);
  // The cause symptoms: active, of the verdict's class.
  std::vector<const Symptom*> causes;
  for (const auto& s : verdict.symptoms)
    if (s.state == SymptomState::Active && s.classification && s.classification->first == o.domain &&
        s.classification->second == o.sub_domain)
      causes.push_back(&s);
  const Symptom* root = nullptr;
  for (const auto* s : causes)
    if (s->id == o.root_cause) root = s;
  if (!root && !causes.empty()) root = causes.front();
  for (const auto* s : causes) {
    job.symptoms.push_back(s->id);
    auto ev = evidence_refs(*s);
    job.evidence.insert(job.evidence.end(), ev.begin(), ev.end());
  }
  sort_unique(job.symptoms);
  sort_unique(job.evidence);
  job.rule = root ? root->rule : "";
  if (!entry) {
    job.basis = "no recovery table entry";
    job.why = fmt::format("the recovery table has no line for {} nor its domain", cls);
    job.reason = job.why + ": nothing is recommended";
    return r;
  }
  job.basis = entry->key;
  std::string note = entry->note.empty() ? "" : ": " + entry->note;
  job.why = cls + note;
  job.action = entry->job;
  if (job.action == vocab::job_action::kRestartExcluding) {
    job.nodes = o.culprit_nodes;
    if (job.nodes.empty()) {
      job.action = vocab::job_action::kRestart;
      job.reason = fmt::format("restart the job ({} names no node to leave out){}", cls, note);
    } else {
      job.reason = fmt::format("restart the job without {}{}", join(job.nodes, ", "), note);
    }
  } else if (job.action == vocab::job_action::kRestart) {
    job.reason = fmt::format("restart the job as it is{}", note);
  } else if (job.action == vocab::job_action::kStopFixConfig) {
    job.reason = fmt::format("stop: fix the job's configuration before it runs again{}", note);
  } else if (job.action == vocab::job_action::kStopFixCode) {
    job.reason = fmt::format("stop: fix the job's code before it runs again{}", note);
  } else {
    job.reason = fmt::format("nothing to do{}", note);
  }

  std::set<std::string> culprits(o.culprit_nodes.begin(), o.culprit_nodes.end());
  std::map<std::tuple<std::string, size_t, std::string>, RecommendedAction> acts;
  auto add = [&](const Symptom& s, const std::string& action, const std::string& basis, const std::string& why) {
    // `why` is the entry's note; the class is named so a reader sees which
    // cause each action answers.
    std::string a = action;
    auto target = action_target(a, s);
    std::string extra;
    if (a == vocab::node_action::kResetGpu && !target.count("pci")) {
      // A GPU reset needs the GPU; without its address a reboot resets them all.
      a = vocab::node_action::kReboot;
      target.clear();
      extra = " (the evidence gives no PCI address to reset one GPU)";
    }
    auto key = std::make_tuple(s.node, vocabulary_index(a), target_text(target));
    RecommendedAction& ra = acts[key];
    if (ra.action.empty()) {
      ra.scope = "node";
      ra.node = s.node;
      ra.action = a;
      ra.target = target;
      ra.rule = s.rule;
      ra.basis = basis;
      std::string what = a == vocab::node_action::kDrain          ? fmt::format("drain {}", s.node)
                         : a == vocab::node_action::kResetGpu    ? fmt::format("reset GPU {} on {}", target["pci"], s.node)
                         : a == vocab::node_action::kReboot       ? fmt::format("reboot {}", s.node)
                         : a == vocab::node_action::kInspectLink ? fmt::format("inspect the link{} on {}",
                                                             target.empty() ? "" : " (" + target_text(target) + ")", s.node)
                         : a == vocab::node_action::kInspect      ? fmt::format("inspect {}", s.node)
                                               : fmt::format("replace the suspect part{} of {}",
                                                             target.empty() ? "" : " (" + target_text(target) + ")", s.node);
      ra.why = cls + (why.empty() ? "" : ": " + why) + extra;
      ra.reason = what + extra + " (" + cls + (why.empty() ? "" : ": " + why) + ")";
    }
    ra.symptoms.push_back(s.id);
    auto ev = evidence_refs(s);
    ra.evidence.insert(ra.evidence.end(), ev.begin(), ev.end());
  };
  for (const auto* s : causes) {
    if (s->node.empty() || s->control_plane || !culprits.count(s->node)) continue;
    if (!entry->actions.empty() && rests_on_job_output_only(*s)) {
      // A job can print any error message: without a line the job did not
      // write, the node gets looked at, not drained, reset or replaced.
      add(*s, vocab::node_action::kInspect, "evidence app only",
          "only the job's own output claims this; no kernel, metric or scheduler line backs it");
      continue;
    }
    for (const auto& a : entry->actions) {
      if (a != "xid") {
        add(*s, a, entry->key, entry->note);
        continue;
      }
      for (int64_t x : symptom_xids(*s)) {
        auto b = table.xids.find(x);
        if (b == table.xids.end()) continue;
        const RecoveryEntry& bucket = table.buckets.at(b->second);
        for (const auto& ba : bucket.actions)
          add(*s, ba, fmt::format("xid {} {}", x, b->second),
              fmt::format("XID {} is {}{}", x, b->second, bucket.note.empty() ? "" : ": " + bucket.note));
      }
    }
  }
  for (auto& [k, ra] : acts) {
    sort_unique(ra.symptoms);
    sort_unique(ra.evidence);
    r.nodes.push_back(std::move(ra));
  }
  return r;
}

}  // namespace culprit
