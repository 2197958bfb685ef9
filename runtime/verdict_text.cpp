#include "runtime/verdict_text.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "base/vocabulary.h"
#include "base/text_util.h"
#include "base/timestamp.h"

namespace culprit {

namespace {

struct Style {
  bool on;
  std::string bold() const { return on ? "\033[1m" : ""; }
  std::string red() const { return on ? "\033[1;31m" : ""; }
  std::string green() const { return on ? "\033[1;32m" : ""; }
  std::string yellow() const { return on ? "\033[1;33m" : ""; }
  std::string dim() const { return on ? "\033[2m" : ""; }
  std::string reset() const { return on ? "\033[0m" : ""; }
};

// Display columns of UTF-8 text: one per code point (the report's text is
// log lines and identifiers; wide characters are rare enough to ignore).
// ANSI colour sequences (ESC [ ... m) take no columns.
size_t columns(std::string_view s) {
  size_t n = 0;
  bool esc = false;
  for (unsigned char c : s) {
    if (c == 0x1b) esc = true;
    else if (esc) esc = c != 'm';
    else n += (c & 0xC0) != 0x80;
  }
  return n;
}

// The first `cols` columns of `s`, ending in "…" when something was cut.
std::string cut(std::string_view s, size_t cols) {
  if (columns(s) <= cols) return std::string(s);
  if (cols == 0) return {};
  std::string out;
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80 && ++n == cols) break;
    out += s[i];
  }
  return out + "…";
}

// One output line built from styled pieces and cut to the width: the
// columns are counted on the text only, never on the escape codes. Every
// piece of text is escaped (escape_for_terminal): evidence, ids and summaries
// come from the input, and a control character in them must not reach the
// terminal; only `style`, the report's own colour codes, is written as is.
class Line {
 public:
  Line(size_t width, const Style& st) : width_(width), st_(st) {}
  Line& add(std::string_view text, const std::string& style = "") {
    if (full_ || text.empty()) return *this;
    std::string piece = escape_for_terminal(text);
    size_t w = columns(piece);
    if (width_ && cols_ + w > width_) {
      piece = cut(piece, width_ - cols_);
      full_ = true;
      w = columns(piece);
    }
    cols_ += w;
    out_ += style.empty() ? piece : style + piece + st_.reset();
    return *this;
  }
  std::string str() const {
    std::string s = out_;
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  }

 private:
  size_t width_, cols_ = 0;
  const Style& st_;
  std::string out_;
  bool full_ = false;
};

// `text` wrapped at spaces to the width, the first line after `first`, the
// others after `indent` (sentences wrap; evidence is cut). A word longer
// than a whole line (a path, a hash) is split, so nothing is dropped.
// `text` is printed as given: callers pass it through escape_for_terminal
// (only the recap adds colour codes of its own between escaped pieces).
std::string wrapped(std::string_view first, std::string_view indent, std::string_view text, size_t width,
                    const std::string& style, const Style& st) {
  size_t room = width > columns(indent) + 10 ? width - columns(indent) : 0;
  std::vector<std::string> words;
  for (auto w : split(text, ' ')) {
    if (w.empty()) continue;
    while (room && columns(w) > room) {
      size_t bytes = 0, n = 0;
      while (bytes < w.size() && n < room) {
        ++bytes;
        while (bytes < w.size() && (static_cast<unsigned char>(w[bytes]) & 0xC0) == 0x80) ++bytes;
        ++n;
      }
      words.emplace_back(w.substr(0, bytes));
      w = w.substr(bytes);
    }
    if (!w.empty()) words.emplace_back(w);
  }
  std::string close = style.empty() ? "" : st.reset();
  std::string out, line = std::string(first) + style;
  size_t cols = columns(first);
  bool empty = true;
  for (const auto& w : words) {
    size_t n = columns(w);
    if (width && !empty && cols + 1 + n > width) {
      out += line + close + "\n";
      line = std::string(indent) + style;
      cols = columns(indent);
      empty = true;
    }
    if (!empty) {
      line += ' ';
      ++cols;
    }
    line += w;
    cols += n;
    empty = false;
  }
  return out + line + close + "\n";
}

std::string node_label(const Symptom& s) { return s.node.empty() ? "job" : s.node; }

// "node-01, node-03, node-04" or, for many, "512 nodes (node-001, node-002, node-003, …)".
std::string node_list(const std::set<std::string>& nodes) {
  std::vector<std::string> v(nodes.begin(), nodes.end());
  if (v.size() <= 4) return fmt::format("{}", fmt::join(v, ", "));
  return fmt::format("{} nodes ({}, {}, {}, …)", v.size(), v[0], v[1], v[2]);
}

// Symptoms that read the same to an operator: one report line.
struct Group {
  std::string kind, reason, rule;
  int64_t count = 0;           // occurrences (sum of the symptoms' counts)
  size_t symptoms = 0;
  std::set<std::string> nodes;
  // Hosts whose lines are the evidence of a symptom on another node (the
  // ranks that lost node-02 report it): said, so a row "on node-02" citing
  // node-01's lines reads as what it is (issue 37, item 9).
  std::set<std::string> reporters;
  const Symptom* first = nullptr;  // the earliest, for its summary and evidence
};

bool earlier(const Symptom* a, const Symptom* b) {
  if (a->first.has_value() != b->first.has_value()) return a->first.has_value();
  if (a->first && *a->first != *b->first) return *a->first < *b->first;
  return a->id < b->id;
}

// Groups by (kind, reason, rule) in that order; `reason` may be "".
std::vector<Group> group_symptoms(const std::vector<const Symptom*>& list,
                                  std::string (*reason_of)(const Symptom&), std::string (*rule_of)(const Symptom&)) {
  std::map<std::tuple<std::string, std::string, std::string>, Group> groups;
  for (const Symptom* s : list) {
    auto& g = groups[{s->kind_name, reason_of(*s), rule_of(*s)}];
    g.kind = s->kind_name;
    g.reason = reason_of(*s);
    g.rule = rule_of(*s);
    g.count += s->count;
    ++g.symptoms;
    g.nodes.insert(node_label(*s));
    if (!s->node.empty())
      for (const auto& e : s->evidence)
        if (!e.host.view().empty() && e.host.view() != s->node) g.reporters.insert(e.host.str());
    if (!g.first || earlier(s, g.first)) g.first = s;
  }
  std::vector<Group> out;
  for (auto& [k, g] : groups) out.push_back(std::move(g));
  return out;
}

std::string demote_reason(const Symptom& s) { return s.demoted_by ? s.demoted_by->reason : ""; }
std::string demote_rule(const Symptom& s) { return s.demoted_by ? s.demoted_by->rule : ""; }
std::string no_reason(const Symptom&) { return ""; }

// The recommendation in one line: the job's action in words, then each
// node action with what it acts on ("restart the job without node-03;
// reset_gpu node-03 (pci 0000:1c:00.0)"). The JSON verdict carries the
// reasons, rules, table entries and evidence behind each (docs/recovery.md).
std::string next_steps(const Recommendation& r) {
  std::vector<std::string> parts;
  const auto& job = r.job;
  if (job.action == vocab::job_action::kRestart) parts.push_back("restart the job");
  else if (job.action == vocab::job_action::kRestartExcluding) parts.push_back(fmt::format("restart the job without {}", fmt::join(job.nodes, ", ")));
  else if (job.action == vocab::job_action::kStopFixConfig) parts.push_back("do not resubmit until its configuration changes");
  else if (job.action == vocab::job_action::kStopFixCode) parts.push_back("do not resubmit until its code changes");
  else if (job.action == vocab::job_action::kNone) parts.push_back("no action for the job");
  // One step per (action, node), in the recommendation's order; the targets
  // of its entries merged ("pci 0000:97:00, 0000:ba:00"), not one step each.
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<std::string>>> targets;
  for (const auto& n : r.nodes) {
    auto key = std::pair{n.action, n.node};
    if (!targets.count(key)) order.push_back(key);
    auto& t = targets[key];
    for (const auto& [k, v] : n.target)
      if (std::find(t[k].begin(), t[k].end(), v) == t[k].end()) t[k].push_back(v);
  }
  for (const auto& key : order) {
    std::vector<std::string> target;
    for (const auto& [k, vs] : targets[key]) target.push_back(fmt::format("{} {}", k, fmt::join(vs, ", ")));
    // The dashboard's words ("Inspect the links of"), mid-sentence here.
    std::string what(vocab::action_label(key.first));
    if (!what.empty()) what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
    parts.push_back(target.empty() ? fmt::format("{} {}", what, key.second)
                                   : fmt::format("{} {} ({})", what, key.second, fmt::join(target, "; ")));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string catalog_label(const EngineInfo& e) {
  std::vector<std::string> parts;
  for (const auto& p : e.catalog_parts) parts.push_back(p.version.empty() ? p.name : p.name + " " + p.version);
  if (parts.empty()) parts.push_back(e.catalog_name + " " + e.catalog_version);
  return fmt::format("{}", fmt::join(parts, " + "));
}

// The part of an evidence line after its log prefix: the report shows the
// file (so the host and source) and the symptom's time already, and at 80
// columns a syslog prefix ("May 11 08:50:05 node-01 kernel: [175800.000000] ")
// would leave no room for what the line says ("NVRM: Xid (PCI:...): 95").
// Removed: a syslog or journald prefix (stamp, host, program[pid]:), then a
// dmesg stamp ("[ 1843.308145]", or dmesg -T's "[Mon May 11 08:50:05 2026]").
// Anything else, application lines included, is shown as written.
std::string payload_of(const std::string& text) {
  static const RE2 syslog(R"(^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d\S*) \S+ [\w./-]+(?:\[\d+\])?: )");
  static const RE2 dmesg(R"(^\[(?:\s*\d+\.\d+|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\] )");
  re2::StringPiece rest(text);
  RE2::Consume(&rest, syslog);
  RE2::Consume(&rest, dmesg);
  return rest.empty() ? text : std::string(rest);
}

// How far a report is shortened to fit TextOptions::height (verdict_text.h).
enum FitLevel : int {
  kFull = 0,
  kOneEvidenceLine,   // one evidence line under each cause
  kNoSideEvidence,    // none under other symptoms; no "lines read" line, no legend
  kFewRows,           // at most kFewRowsPerSection rows per section, one coverage warning
  kOneLinePerSection, // each section one line (its heading)
  kNoCauseEvidence,   // and no evidence line under the causes
  kShortest = kNoCauseEvidence,
};
constexpr size_t kFewRowsPerSection = 3;

class Report {
 public:
  Report(const Verdict& v, const TextOptions& opt, int level = kFull) : v_(v), opt_(opt), st_{opt.color}, level_(level) {}

  std::string render();

 private:
  const Verdict& v_;
  const TextOptions& opt_;
  Style st_;
  int level_;
  std::string out_;

  size_t cause_evidence() const {
    return level_ >= kNoCauseEvidence ? 0 : level_ >= kOneEvidenceLine ? std::min<size_t>(1, opt_.evidence_per_symptom)
                                                                          : opt_.evidence_per_symptom;
  }
  // Rows of a section of groups: all, a few, or none (its heading says how many).
  size_t rows_per_section() const {
    return level_ >= kOneLinePerSection ? 0 : level_ >= kFewRows ? kFewRowsPerSection : SIZE_MAX;
  }
  // What to do, for every verdict but a completed one: the recommendation's
  // steps, or why none follows.
  std::string next_line() const {
    const Outcome& o = v_.outcome;
    std::string steps = next_steps(v_.recommendation);
    if (o.status == vocab::status::kUnattributed && v_.recommendation.nodes.empty())
      steps = "no action follows from this evidence; start from the symptoms below";
    else if (o.status == vocab::status::kAmbiguous && v_.recommendation.nodes.empty())
      steps = "no action for the job or its nodes until the candidates are told apart";
    return escape_for_terminal(steps);
  }
  // --explain: what each rule did, stage by stage. The same action of one
  // rule on one kind is one row ("×29 on node-01, node-03"), in the order the
  // rule first did it, with where the rule is written; a row's detail is its
  // first entry's.
  void derivation_trail() {
    if (!v_.coverage.silent_extractors.empty())
      out_ += "\n" + wrapped("", "  ", escape_for_terminal(fmt::format(
                                      "Extractors that matched no line of the sources they read ({}): {}",
                                      v_.coverage.silent_extractors.size(), fmt::join(v_.coverage.silent_extractors, ", "))),
                             opt_.width, "", st_);
    out_ += "\nDerivation trail:\n";
    struct Row {
      const TrailEntry* first;
      std::string kind;
      size_t count = 0;
      std::vector<std::string> places;  // nodes (or "job"), first seen first
    };
    size_t i = 0;
    while (i < v_.trail.size()) {
      const std::string& stage = v_.trail[i].stage;
      out_ += fmt::format("  [{}]\n", escape_for_terminal(stage));
      std::vector<Row> rows;
      std::map<std::tuple<std::string, std::string, std::string>, size_t> row_of;
      for (; i < v_.trail.size() && v_.trail[i].stage == stage; ++i) {
        const TrailEntry& t = v_.trail[i];
        size_t at = t.target.find('@');
        std::string kind = t.target.substr(0, at);
        std::string place = at == std::string::npos ? "" : t.target.substr(at + 1, t.target.find('#', at) - at - 1);
        auto [it, fresh] = row_of.try_emplace({t.rule, t.action, kind}, rows.size());
        if (fresh) rows.push_back(Row{&t, kind, 0, {}});
        Row& r = rows[it->second];
        ++r.count;
        if (!place.empty() && std::find(r.places.begin(), r.places.end(), place) == r.places.end()) r.places.push_back(place);
      }
      for (const Row& r : rows) {
        const TrailEntry& t = *r.first;
        std::string head = t.rule_at.empty() ? t.rule : fmt::format("{} ({})", t.rule, t.rule_at);
        std::string what = r.count == 1 ? t.target
                         : r.places.empty() ? fmt::format("{} ×{}", r.kind, r.count)
                                            : fmt::format("{} ×{} on {}", r.kind, r.count, fmt::join(r.places, ", "));
        out_ += wrapped("    ", "        ", escape_for_terminal(fmt::format("{} {} {}: {}", head, t.action, what, t.detail)), opt_.width, "", st_);
      }
    }
  }

  // A verdict without a recommendation (one built by hand) has no steps.
  void next_block(const char* head) {
    if (std::string next = next_line(); !next.empty()) out_ += wrapped(head, "    ", next, opt_.width, "", st_);
  }
  void more_rows(size_t shown, size_t all, const std::string& indent) {
    if (all > shown)
      out_ += line().add(indent).add(fmt::format("… {} more {} (--cascade)", all - shown, all - shown == 1 ? "row" : "rows"), st_.dim()).str();
  }

  Line line() const { return Line(opt_.width, st_); }
  bool detailed() const { return opt_.cascade || opt_.explain; }

  void evidence(const Symptom& s, const std::string& indent, size_t max_lines, bool say_rest = true) {
    size_t n = 0;
    for (const auto& e : s.evidence) {
      if (n++ == max_lines) break;
      std::string text = payload_of(e.text.str());
      std::replace(text.begin(), text.end(), '\t', ' ');
      // --cascade and --explain are asked for in full: wrapped, never cut.
      if (detailed())
        out_ += wrapped(indent, indent + "  ", escape_for_terminal(fmt::format("{}:{}  {}", e.file, e.line, text)), opt_.width, "", st_);
      else
        out_ += line().add(indent).add(fmt::format("{}:{}", e.file, e.line), st_.dim()).add("  ").add(text).str();
    }
    size_t shown = std::min(max_lines, s.evidence.size());
    if (say_rest && s.evidence_total > static_cast<int64_t>(shown))
      out_ += line()
                  .add(indent)
                  .add(fmt::format("… {} more ({} in all)", s.evidence_total - static_cast<int64_t>(shown),
                                   count_of(s.evidence_total, "evidence line")),
                       st_.dim())
                  .str();
  }

  static size_t kind_width(const std::vector<Group>& groups) {
    size_t w = 0;
    for (const auto& g : groups) w = std::max(w, columns(g.kind));
    return std::min<size_t>(w, 32);
  }

  // One line per group: "kind  ×N on nodes: reason" (or the earliest
  // symptom's summary, "e.g. ..." when the group has several), then with
  // `evidence_lines` that many lines of the earliest symptom's evidence.
  void group_lines(const std::vector<Group>& groups, const std::string& indent, bool with_rule, size_t evidence_lines = 0) {
    size_t kind_w = kind_width(groups);
    size_t shown = std::min(groups.size(), rows_per_section());
    for (size_t gi = 0; gi < shown; ++gi) {
      const Group& g = groups[gi];
      std::string kind = g.kind + std::string(kind_w > columns(g.kind) ? kind_w - columns(g.kind) : 0, ' ');
      Line l = line();
      l.add(indent).add(kind, st_.bold()).add(fmt::format("  ×{} on {}", g.count, node_list(g.nodes)));
      if (!g.reporters.empty()) l.add(fmt::format(" (reported from {})", node_list(g.reporters)));
      if (with_rule && !g.rule.empty()) l.add(fmt::format(" ({})", g.rule));
      std::string why = g.reason;
      if (why.empty() && g.first && !g.first->summary.empty()) why = (g.symptoms > 1 ? "e.g. " : "") + g.first->summary;
      if (!why.empty()) l.add(": ").add(why);
      out_ += l.str();
      if (evidence_lines && g.first) evidence(*g.first, indent + "    ", evidence_lines, false);
    }
    // With no row shown the section's heading stands for it (it counts them).
    if (shown > 0) more_rows(shown, groups.size(), indent);
  }

  // Every symptom of the list with its state change and evidence (--cascade).
  void detailed_lines(const std::vector<const Symptom*>& list, const std::string& indent) {
    for (const Symptom* d : list) {
      std::string row = fmt::format("{} on {} ×{}", d->kind_name, node_label(*d), d->count);
      if (d->demoted_by) row += fmt::format(" ({}: {})", d->demoted_by->rule, d->demoted_by->reason);
      else if (d->scrubbed_by) row += fmt::format(" ({}: {})", d->scrubbed_by->rule, d->scrubbed_by->reason);
      else if (!d->summary.empty()) row += ": " + d->summary;
      out_ += wrapped(indent + "- ", indent + "    ", escape_for_terminal(row), opt_.width, "", st_);
      evidence(*d, indent + "    ", opt_.evidence_per_symptom);
    }
  }
};

std::string Report::render() {
  const Outcome& o = v_.outcome;
  std::map<std::string, const Symptom*> by_id;
  for (const auto& s : v_.symptoms) by_id[s.id] = &s;

  // ------------------------------------------------------------ workload
  const auto& w = v_.workload;
  out_ += line()
              .add(fmt::format("Workload {}", w.workload_id), st_.bold())
              .add(fmt::format(" ({}, {}, terminal state {}{})", w.scheduler, count_of(static_cast<int64_t>(w.nodes.size()), "node"),
                               w.terminal.state.empty() ? "unknown" : w.terminal.state,
                               w.terminal.exit_code ? fmt::format(", exit {}", *w.terminal.exit_code) : ""))
              .str();

  // ---------------------------------------------------------- cause block
  std::string status_color = o.status == vocab::status::kAttributed ? st_.red() : o.status == vocab::status::kNoFailure ? st_.green() : st_.yellow();
  std::string head = o.status == vocab::status::kNoFailure ? "NO FAILURE" : o.status == vocab::status::kAttributed ? "ROOT CAUSE"
                   : o.status == vocab::status::kAmbiguous ? "AMBIGUOUS" : "UNATTRIBUTED";
  out_ += "\n";
  {
    Line l = line();
    l.add(head, status_color);
    if (!o.domain.empty()) l.add("  ").add(fmt::format("{} / {}", o.domain, o.sub_domain), st_.bold());
    out_ += l.str();
  }
  if (!o.root_cause.empty() && !o.root_cause_summary.empty())
    out_ += wrapped("  ", "  ", escape_for_terminal(o.root_cause_summary), opt_.width, "", st_);
  // Where a hang is (runtime/hang_location.h): not a cause, where to look.
  // An unattributed verdict whose reason already says where the hang is (the
  // catalog's hang reasons, termination.attr: "...; where the hang is: ...")
  // does not say it twice: the cause block is never shortened, and at 80x24
  // the repeat would push the recap off the screen.
  if (v_.hang && o.override_reason.find("where the hang is") == std::string::npos)
    out_ += wrapped("  ", "    ", escape_for_terminal(v_.hang->summary), opt_.width, st_.bold(), st_);
  if (o.status == vocab::status::kAttributed) {
    // Generic evidence on several nodes names none of them: say where it was
    // seen and why that is not a culprit (runtime/outcome.h).
    const Candidate* c = o.candidates.size() == 1 ? &o.candidates.front() : nullptr;
    std::string none = "none (not a node fault)";
    if (c && c->basis == basis::kGenericNoSingleOrigin)
      none = fmt::format("none (the same failure on {} with no single origin: the job's code or its stack, not a node)",
                         c->generic_nodes.size() <= 3 ? fmt::format("{}", fmt::join(c->generic_nodes, ", "))
                                                      : count_of(static_cast<int64_t>(c->generic_nodes.size()), "node"));
    if (c && c->on_job && !c->generic_nodes.empty() && c->basis != basis::kGenericNoSingleOrigin &&
        c->basis != basis::kGenericOriginUnseen)
      none = fmt::format("none (the job's own failure, seen on {}: not a node fault)",
                         c->generic_nodes.size() <= 3 ? fmt::format("{}", fmt::join(c->generic_nodes, ", "))
                                                      : count_of(static_cast<int64_t>(c->generic_nodes.size()), "node"));
    if (c && !c->collected_on.empty() && c->generic_nodes.empty())
      none = fmt::format("none (the evidence is in the job's combined output collected on {}, on lines that do not say "
                         "which node wrote them)",
                         c->collected_on.size() <= 3 ? fmt::format("{}", fmt::join(c->collected_on, ", "))
                                                     : count_of(static_cast<int64_t>(c->collected_on.size()), "host"));
    if (c && c->basis == basis::kGenericOriginUnseen)
      none = fmt::format("none (the failure is generic and was read on {} only: the other nodes' logs were not, so "
                         "whether it began there cannot be seen)",
                         fmt::join(c->generic_nodes, ", "));
    out_ += wrapped("  culprit nodes: ", "    ",
                    escape_for_terminal(o.culprit_nodes.empty() ? none : fmt::format("{}", fmt::join(o.culprit_nodes, ", "))),
                    opt_.width, st_.bold(), st_);
    if (o.basis == basis::kSingleOriginGeneric && !o.culprit_nodes.empty())
      out_ += wrapped("  ", "  ", "evidence: generic (that it failed, not why), on one node", opt_.width, "", st_);
  }
  if (o.status == vocab::status::kAttributed) {
    next_block("  next: ");
  }
  if (!o.overridden_by.empty()) out_ += wrapped("  ", "    ", escape_for_terminal(fmt::format("decided by {}: {}", o.overridden_by, o.override_reason)), opt_.width, "", st_);
  if (o.status == vocab::status::kUnattributed && o.overridden_by.empty())
    out_ += wrapped("  ", "  ", "no rule established a cause from the evidence; the symptoms below are not enough to name one",
                    opt_.width, "", st_);
  if (o.status == vocab::status::kUnattributed) next_block("  next: ");
  if (o.status == vocab::status::kNoFailure && o.overridden_by.empty()) out_ += "  the workload completed normally\n";
  if (o.status == vocab::status::kNoFailure) out_ += "  next: no action: the workload completed\n";
  if (o.status == vocab::status::kAmbiguous) {
    out_ += "  candidates:\n";
    for (const auto& c : o.candidates)
      out_ += line()
                  .add("    - ")
                  .add(fmt::format("{} / {}", c.domain, c.sub_domain), st_.bold())
                  .add(fmt::format(" on {}", c.nodes.empty() ? std::string("job") : fmt::format("{}", fmt::join(c.nodes, ", "))))
                  .str();
    // The candidates' node checks (runtime/recovery.h): looked at, never drained.
    next_block("  next: ");
  }

  // Sort the symptoms into what the report shows where.
  std::vector<const Symptom*> causes, active_other, orphans, scrubbed;
  std::map<std::string, std::vector<const Symptom*>> cascade;
  for (const auto& s : v_.symptoms) {
    if (s.state == SymptomState::Active) (s.classification ? causes : active_other).push_back(&s);
    else if (s.state == SymptomState::Scrubbed) scrubbed.push_back(&s);
    else if (s.demoted_by && !s.demoted_by->cause.empty() && by_id.count(s.demoted_by->cause)) cascade[s.demoted_by->cause].push_back(&s);
    else orphans.push_back(&s);
  }
  // Demoted symptoms whose cause is not itself a cause on display.
  for (auto it = cascade.begin(); it != cascade.end();) {
    const Symptom* c = by_id.at(it->first);
    if (c->state != SymptomState::Active || !c->classification) {
      for (const Symptom* d : it->second) orphans.push_back(d);
      it = cascade.erase(it);
    } else {
      ++it;
    }
  }
  std::sort(orphans.begin(), orphans.end(), [](const Symptom* a, const Symptom* b) { return a->id < b->id; });

  bool collapsed_something = false;
  if (!causes.empty()) {
    out_ += causes.size() == 1 ? "\nCause symptom:\n" : "\nCause symptoms:\n";
    size_t shown = std::min(causes.size(), std::max<size_t>(1, rows_per_section()));
    for (size_t ci = 0; ci < shown; ++ci) {
      const Symptom* s = causes[ci];
      Line l = line();
      l.add("  * ").add(s->kind_name, st_.bold()).add(fmt::format(" on {} ×{}", node_label(*s), s->count));
      if (s->first) l.add(" from " + format_rfc3339(*s->first));
      // The root cause's summary is already printed above.
      if (s->id != o.root_cause && !s->summary.empty()) l.add(": ").add(s->summary);
      out_ += l.str();
      if (size_t n = cause_evidence()) evidence(*s, "      ", n);
    }
    more_rows(shown, causes.size(), "  ");
  }
  // The cascade under the causes it belongs to.
  for (const Symptom* c : causes) {
    auto it = cascade.find(c->id);
    if (it == cascade.end()) continue;
    const auto& list = it->second;
    // Where they are: the nodes, and the job for job-level symptoms (which
    // are on no node, so they are not counted as one).
    std::set<std::string> nodes;
    bool job_level = false;
    for (const Symptom* d : list) {
      if (d->node.empty()) job_level = true;
      else nodes.insert(node_label(*d));
    }
    std::string where = nodes.empty() ? "the job"
                                      : count_of(static_cast<int64_t>(nodes.size()), "node") + (job_level ? " and the job" : "");
    std::string whose = causes.size() == 1 ? "" : fmt::format(" of {} on {}", c->kind_name, node_label(*c));
    out_ += "\n";
    out_ += line()
                .add(fmt::format("Downstream{}, demoted: {} on {}", whose, count_of(static_cast<int64_t>(list.size()), "symptom"),
                                 where))
                .str();
    if (detailed()) {
      detailed_lines(list, "  ");
    } else {
      auto groups = group_symptoms(list, demote_reason, demote_rule);
      collapsed_something = collapsed_something || groups.size() < list.size() || !list.empty();
      group_lines(groups, "  ", false);
    }
  }
  if (!active_other.empty()) {
    out_ += fmt::format("\nOther active {} (not a cause by {}):\n", active_other.size() == 1 ? "symptom" : "symptoms",
                        active_other.size() == 1 ? "itself" : "themselves");
    if (detailed()) {
      detailed_lines(active_other, "  ");
    } else {
      collapsed_something = true;
      // Without a cause these are the evidence an operator reads: one
      // original line each.
      group_lines(group_symptoms(active_other, no_reason, no_reason), "  ", false, level_ >= kNoSideEvidence ? 0 : 1);
    }
  }
  if (!orphans.empty()) {
    out_ += fmt::format("\nOther demoted {}:\n", orphans.size() == 1 ? "symptom" : "symptoms");
    if (detailed()) detailed_lines(orphans, "  ");
    else {
      collapsed_something = true;
      group_lines(group_symptoms(orphans, demote_reason, demote_rule), "  ", true);
    }
  }
  if (!scrubbed.empty()) {
    if (detailed()) {
      out_ += fmt::format("\n{} scrubbed as noise:\n", count_of(static_cast<int64_t>(scrubbed.size()), "symptom"));
      detailed_lines(scrubbed, "  ");
    } else {
      std::vector<std::string> items;
      for (const auto& g : group_symptoms(scrubbed, no_reason, no_reason))
        items.push_back(fmt::format("{} ×{} on {}", g.kind, g.count, node_list(g.nodes)));
      out_ += "\n" + wrapped("", "  ", escape_for_terminal(fmt::format("{} scrubbed as noise: {}", count_of(static_cast<int64_t>(scrubbed.size()), "symptom"),
                                                  fmt::join(items, "; "))),
                             opt_.width, "", st_);
    }
  }
  if (collapsed_something && !detailed() && level_ < kNoSideEvidence)
    // The ×N of a row counts reports merged into its symptoms, not symptoms
    // and not evidence lines (issue 37, item 9): said once, where it is read.
    out_ += line().add("  (×N = reports per row; --cascade lists each symptom, its rule and evidence)", st_.dim()).str();

  // ------------------------------------------------------------ coverage
  if (!v_.coverage.warnings.empty()) {
    out_ += fmt::format("\n{}Coverage {}:{}\n", st_.yellow(), v_.coverage.warnings.size() == 1 ? "warning" : "warnings", st_.reset());
    size_t shown = level_ >= kOneLinePerSection ? 0 : level_ >= kFewRows ? 1 : v_.coverage.warnings.size();
    for (size_t i = 0; i < shown; ++i) out_ += wrapped("  ! ", "    ", escape_for_terminal(v_.coverage.warnings[i]), opt_.width, "", st_);
    if (shown < v_.coverage.warnings.size())
      out_ += line().add(fmt::format("  … {} ({})", count_of(static_cast<int64_t>(v_.coverage.warnings.size() - shown), shown ? "more warning" : "warning", shown ? "more warnings" : "warnings"),
                                     "--format json lists them; a taller terminal shows them"), st_.dim()).str();
  }

  if (opt_.explain) derivation_trail();

  // ----------------------------------------------------- what was read, recap
  int64_t lines = 0, out_of_scope = 0;
  for (const auto& [name, sc] : v_.coverage.sources) {
    lines += sc.lines_read;
    out_of_scope += sc.lines_out_of_scope;
  }
  out_ += "\n";
  if (level_ < kNoSideEvidence)
    out_ += line()
                .add(fmt::format("{} read, {} outside the workload window; catalog {} ({}), {}", count_of(lines, "line"), out_of_scope,
                                 catalog_label(v_.engine), v_.engine.catalog_digest.substr(0, 19), v_.engine.evaluator),
                     st_.dim())
                .str();
  {
    size_t demoted = 0;
    for (const auto& [id, list] : cascade) demoted += list.size();
    // The answer again, last, where the prompt returns: one line at any
    // usual width, wrapped (never cut) at a narrow one.
    std::string recap = status_color + escape_for_terminal(o.status) + st_.reset();
    if (!o.domain.empty()) recap += escape_for_terminal(fmt::format(" {} / {}", o.domain, o.sub_domain));
    if (o.status == vocab::status::kAttributed && !o.culprit_nodes.empty())
      recap += escape_for_terminal(fmt::format(" on {}", node_list(std::set<std::string>(o.culprit_nodes.begin(), o.culprit_nodes.end()))));
    if (o.status == vocab::status::kAmbiguous) recap += fmt::format(" between {}", count_of(static_cast<int64_t>(o.candidates.size()), "candidate"));
    std::vector<std::string> counts;
    if (!causes.empty()) counts.push_back(count_of(static_cast<int64_t>(causes.size()), "cause"));
    if (demoted) counts.push_back(fmt::format("{} downstream", demoted));
    if (!active_other.empty()) counts.push_back(fmt::format("{} other active", active_other.size()));
    if (!scrubbed.empty()) counts.push_back(fmt::format("{} scrubbed", scrubbed.size()));
    if (!v_.coverage.warnings.empty()) counts.push_back(count_of(static_cast<int64_t>(v_.coverage.warnings.size()), "warning"));
    if (!counts.empty()) recap += fmt::format(" ({})", fmt::join(counts, ", "));
    out_ += wrapped("verdict: ", "  ", recap, opt_.width, "", st_);
    if (o.status != vocab::status::kNoFailure) next_block("   next: ");
  }

  return out_;
}

}  // namespace

std::string count_of(int64_t n, const std::string& singular, const std::string& plural) {
  return fmt::format("{} {}", n, n == 1 ? singular : plural.empty() ? singular + "s" : plural);
}

std::string verdict_to_text(const Verdict& v, const TextOptions& opt) {
  std::string text = Report(v, opt).render();
  if (!opt.height || opt.cascade || opt.explain) return text;
  // Shorten step by step until it fits (verdict_text.h, "Height").
  for (int level = kFull + 1; level <= kShortest && static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) > opt.height; ++level)
    text = Report(v, opt, level).render();
  return text;
}

}  // namespace culprit
