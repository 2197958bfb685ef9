// `culprit match`: the extractors a log line triggers, the event and fields
// each emits, and the rules that query that event kind. For writing and
// debugging rules: the line goes through the real scan path (the source's
// Hyperscan database, then RE2, then the field expressions), exactly as a
// line of logs/<host>/<source>.log would.
#include "cli/match_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "base/suggest.h"
#include "base/timestamp.h"
#include "cli/args.h"
#include "cli/catalog_choice.h"
#include "runtime/scanner.h"
#include "runtime/verdict_json.h"

namespace culprit::cli {

namespace {

const char* kMatchHelp = R"(Usage: culprit match --source SOURCE LINE [options]
       culprit match --source SOURCE - [options]     (one line per line of stdin)

Runs one log line through the catalog's extractors for SOURCE (kernel, app,
scheduler, fabricmanager, network or a custom source) and prints which
extractors match, the event each emits with its fields, and which rules
query that event kind; and the near misses: extractors whose literal text
the line holds but whose regex does not match it (the usual reason a new
rule does not fire). The line is scanned as a line of
logs/<host>/<source>.log would be.

Options:
  --source NAME          the log source the line comes from (required)
  --format text|json     output format (default text)
  --rules PATH           add a rule directory or .attr file (repeatable)
  --no-stdlib            do not load the bundled catalog
  --engine jit|interp    run rules as native code (jit, the default) or interpret them
  --no-cache             neither read nor write the compile cache
  --cache-dir DIR        compile cache directory
  -h, --help             this help

Exit status: 0 an extractor matched (every line, with -), 1 none matched,
2 bad usage or rules that do not compile.
)";

int usage(const std::string& msg) {
  std::cerr << fmt::format("culprit match: {}\nTry 'culprit match --help'.\n", msg);
  return 2;
}

using ojson = nlohmann::ordered_json;

std::string show(const Value& v) { return v.type == Type::String ? ojson(v.s).dump() : value_to_text(v); }

std::string where(const SourceRange& r) { return r.file ? fmt::format("{}:{}", r.file->path, r.line) : "?"; }

// An event's time as the report shows it. Syslog and glog stamps carry no
// year: a bundle takes it from the workload's window, and a lone line has
// none, so the scan placed it in 1970. Such a time is shown without a year
// ("--03-14T02:03:17Z", the ISO 8601 form for a date with the year left
// out) instead of as a 1970 instant. A stamp is year-less when two year
// hints read it differently.
std::string show_time(const Event& e, const std::string& line, bool& yearless) {
  yearless = false;
  std::string t = format_rfc3339(*e.where.ts);
  if (e.where.ts_origin != "line") return t;
  YearHint a, b;
  a.year_start = a.year_end = 2001;
  b.year_start = b.year_end = 2002;
  LineTime ta = parse_line_time(line, a), tb = parse_line_time(line, b);
  if (!ta.has_wall || !tb.has_wall || ta.wall_ns == tb.wall_ns) return t;
  yearless = true;
  size_t dash = t.find('-');
  return dash == std::string::npos ? t : "-" + t.substr(dash);
}

// Rules whose `for` or an expression query reads events of `kind`.
std::vector<const ir::Rule*> rules_seeing(const ir::Catalog& cat, int32_t kind) {
  std::vector<const ir::Rule*> out;
  auto reads = [&](const ir::Query& q) { return !q.symptom && std::binary_search(q.kinds.begin(), q.kinds.end(), kind); };
  for (const auto& r : cat.rules) {
    bool sees = r.for_query && reads(*r.for_query);
    for (const auto& q : r.queries) sees = sees || reads(q);
    if (sees) out.push_back(&r);
  }
  return out;
}

}  // namespace

int cmd_match(int argc, char** argv) {
  ArgSpec spec = with_catalog_options({{"help"}, {"source", "format"}});
  Args a;
  std::string err;
  if (!parse_args(argc, argv, 2, spec, a, err)) return usage(err);
  if (a.has("help")) {
    std::cout << kMatchHelp;
    return 0;
  }
  auto source = a.last("source");
  if (!source) return usage("--source NAME is required (kernel, app, scheduler, fabricmanager, network, ...)");
  if (a.positionals.size() != 1) return usage("expected exactly one LINE (or - to read lines from stdin)");
  std::string format = a.last("format").value_or("text");
  if (format != "text" && format != "json") return usage("--format must be text or json");
  AttributorConfig config;
  if (!catalog_config(a, {}, config, err)) return usage(err);
  auto attributor = open_attributor("match", config, false);
  if (!attributor) return 2;
  const auto& cat = attributor->catalog();

  std::set<std::string> sources;
  size_t readers = 0;
  for (const auto& x : cat.extractors) {
    sources.insert(x.sources.begin(), x.sources.end());
    readers += std::count(x.sources.begin(), x.sources.end(), *source) > 0;
  }
  if (!sources.count(*source)) {
    std::string hint = did_you_mean(*source, std::vector<std::string>(sources.begin(), sources.end()));
    std::cerr << fmt::format("culprit match: no extractor reads the source '{}'{} (sources: {})\n", *source,
                             hint.empty() ? "" : "; " + hint, fmt::join(sources, ", "));
    return 2;
  }

  std::vector<std::string> lines;
  if (a.positionals[0] == "-") {
    for (std::string l; std::getline(std::cin, l);) {
      if (!l.empty() && l.back() == '\r') l.pop_back();
      lines.push_back(l);
    }
  } else {
    lines.push_back(a.positionals[0]);
  }

  Scanner scanner(attributor->program());
  bool all_matched = !lines.empty();
  ojson out_lines = ojson::array();
  for (size_t n = 0; n < lines.size(); ++n) {
    auto events = scanner.scan_single_line(*source, lines[n], -1);
    all_matched = all_matched && !events.empty();
    // Near misses: the extractors whose literals the line holds but whose
    // regex did not match it ("why did my rule not fire").
    std::vector<const ir::Extractor*> near;
    for (int32_t x : scanner.candidate_extractors(*source, lines[n])) {
      const auto& ex = cat.extractors[static_cast<size_t>(x)];
      bool emitted = std::any_of(events.begin(), events.end(), [&](const Event& e) { return e.producer == ex.name; });
      if (!emitted) near.push_back(&ex);
    }
    if (format == "json") {
      ojson jl;
      jl["line"] = lines[n];
      ojson matches = ojson::array();
      for (const auto& e : events) {
        const auto& schema = cat.event_kinds[static_cast<size_t>(e.kind)];
        ojson m, fields = ojson::object();
        m["extractor"] = e.producer;
        m["event"] = schema.name;
        for (size_t i = 0; i < schema.fields.size() && i < e.fields.size(); ++i) fields[schema.fields[i].name] = value_to_json(e.fields[i]);
        m["fields"] = fields;
        if (e.where.ts) {
          bool yearless = false;
          std::string t = show_time(e, lines[n], yearless);
          m[yearless ? "ts_without_year" : "ts"] = t;
        }
        ojson rules = ojson::array();
        for (const auto* r : rules_seeing(cat, e.kind))
          rules.push_back({{"name", r->name}, {"stage", ir::kStageNames[static_cast<size_t>(r->stage)]}, {"location", where(r->where)}});
        m["rules"] = rules;
        matches.push_back(std::move(m));
      }
      jl["matches"] = matches;
      ojson near_json = ojson::array();
      for (const auto* x : near) near_json.push_back({{"extractor", x->name}, {"location", where(x->where)}});
      jl["near_misses"] = near_json;
      out_lines.push_back(std::move(jl));
      continue;
    }
    if (lines.size() > 1) std::cout << fmt::format("{}line {}: {}\n", n ? "\n" : "", n + 1, lines[n]);
    auto print_near = [&]() {
      if (near.empty()) return;
      std::cout << fmt::format("near miss{}: the line holds the literal text of {}, but {} regex does not match it:\n",
                               near.size() == 1 ? "" : "es", near.size() == 1 ? "this extractor" : "these extractors",
                               near.size() == 1 ? "its" : "their");
      for (const auto* x : near) std::cout << fmt::format("  {} ({})\n", x->name, where(x->where));
    };
    if (events.empty()) {
      std::cout << fmt::format("no match: none of the {} extractor{} reading '{}' matches this line\n", readers, readers == 1 ? "" : "s",
                               *source);
      print_near();
      continue;
    }
    for (const auto& e : events) {
      const auto& schema = cat.event_kinds[static_cast<size_t>(e.kind)];
      const ir::Extractor* x = nullptr;
      for (const auto& c : cat.extractors)
        if (c.name == e.producer) x = &c;
      std::cout << fmt::format("{} ({}) emits {}\n", e.producer, x ? where(x->where) : "?", schema.name);
      for (size_t i = 0; i < schema.fields.size() && i < e.fields.size(); ++i)
        std::cout << fmt::format("  {}: {}\n", schema.fields[i].name, show(e.fields[i]));
      if (e.where.ts) {
        bool yearless = false;
        std::string t = show_time(e, lines[n], yearless);
        std::cout << fmt::format("  ts: {} ({})\n", t,
                                 yearless ? "the line has no year; diagnose takes it from the workload's window"
                                          : e.where.ts_origin);
      }
      auto rules = rules_seeing(cat, e.kind);
      if (rules.empty()) {
        std::cout << fmt::format("  no rule queries {} events\n", schema.name);
      } else {
        std::cout << fmt::format("  seen by {} rule{}:\n", rules.size(), rules.size() == 1 ? "" : "s");
        for (const auto* r : rules)
          std::cout << fmt::format("    {} [{}] ({})\n", r->name, ir::kStageNames[static_cast<size_t>(r->stage)], where(r->where));
      }
    }
    print_near();
  }
  if (format == "json") std::cout << ojson({{"source", *source}, {"lines", out_lines}}).dump(2) << "\n";
  return all_matched ? 0 : 1;
}

}  // namespace culprit::cli
