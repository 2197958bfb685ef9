#include "runtime/self_test.h"

#include <fmt/format.h>

#include <algorithm>

#include "runtime/diagnose.h"
#include "runtime/scanner.h"
#include "base/text_util.h"

namespace culprit {

namespace {

std::string location(const SourceRange& r) {
  return r.file ? fmt::format("{}:{}", r.file->path, r.line) : std::string("?");
}

std::string show(const Value& v) {
  return v.type == Type::String ? fmt::format("\"{}\"", v.s) : value_to_text(v);
}

TestResult run_line_test(Scanner& scanner, const Program& program, int32_t xi, const ir::LineTest& t) {
  const auto& cat = program.catalog();
  const auto& x = cat.extractors[static_cast<size_t>(xi)];
  TestResult r;
  r.kind = "line";
  r.name = t.title.empty() ? fmt::format("{} (line {})", x.name, t.where.line) : fmt::format("{}: {}", x.name, t.title);
  r.location = location(t.where);
  // Every source of the extractor must agree; the first is enough to
  // exercise the database the extractor lives in.
  auto events = scanner.scan_single_line(x.sources.front(), t.line, xi);
  if (t.expect_none) {
    r.passed = events.empty();
    if (!r.passed) r.message = fmt::format("expected no match, but it emitted {}", cat.event_kinds[static_cast<size_t>(x.kind)].name);
    return r;
  }
  if (events.empty()) {
    r.message = "expected a match, got none";
    return r;
  }
  const Event& e = events.front();
  const auto& schema = cat.event_kinds[static_cast<size_t>(x.kind)];
  std::vector<std::string> diffs;
  for (const auto& [slot, want] : t.expected) {
    const Value& got = e.fields[static_cast<size_t>(slot)];
    if (!values_equal(want, got))
      diffs.push_back(fmt::format("field '{}': expected {}, got {}", schema.fields[static_cast<size_t>(slot)].name, show(want), show(got)));
  }
  r.passed = diffs.empty();
  r.message = fmt::format("{}", fmt::join(diffs, "; "));
  return r;
}

bool symptom_matches(const Symptom& s, const ir::ScenarioExpect& x) {
  return glob_kind_match(x.kind_pattern, s.kind_name) && (x.node.empty() || s.node == x.node);
}

TestResult run_scenario(std::shared_ptr<const Program> program, const ir::Scenario& sc) {
  TestResult r;
  r.kind = "scenario";
  r.name = sc.title;
  r.location = location(sc.where);
  DiagnoseRequest req;
  req.context.workload_id = sc.workload_id;
  req.context.scheduler = sc.scheduler;
  req.context.nodes = sc.nodes;
  std::sort(req.context.nodes.begin(), req.context.nodes.end());
  req.context.terminal.state = sc.terminal_state;
  req.context.terminal.exit_code = sc.terminal_exit;
  req.context.start = sc.window_start;
  req.context.end = sc.window_end;
  std::map<std::pair<std::string, std::string>, int64_t> line_no;
  for (const auto& l : sc.logs) {
    Observation o;
    o.host = l.host;
    o.source = l.source;
    o.text = l.text;
    o.file = fmt::format("scenario/{}/{}.log", l.host, l.source);
    o.line = ++line_no[{l.host, l.source}];
    req.observations.push_back(std::move(o));
  }
  DiagnoseOptions opt;
  opt.threads = 1;
  Verdict v;
  std::string error;
  if (!diagnose(program, req, opt, v, error)) {
    r.message = error;
    return r;
  }
  std::vector<std::string> fails;
  const auto& o = v.outcome;
  auto states = [&](const ir::ScenarioExpect& x) {
    std::vector<std::string> got;
    for (const auto& s : v.symptoms)
      if (symptom_matches(s, x))
        got.push_back(fmt::format("{} {}", s.id, s.state == SymptomState::Active ? "active" : s.state == SymptomState::Demoted ? "demoted" : "scrubbed"));
    return got.empty() ? std::string("none") : fmt::format("{}", fmt::join(got, ", "));
  };
  for (const auto& x : sc.expects) {
    switch (x.kind) {
      case ast::ScenarioExpectKind::Status:
        if (o.status != x.value) fails.push_back(fmt::format("status: expected {}, got {}", x.value, o.status));
        break;
      case ast::ScenarioExpectKind::Domain:
        if (o.domain != x.value) fails.push_back(fmt::format("domain: expected {}, got {}", x.value, o.domain.empty() ? "none" : o.domain));
        break;
      case ast::ScenarioExpectKind::SubDomain:
        if (o.sub_domain != x.value)
          fails.push_back(fmt::format("sub_domain: expected \"{}\", got {}", x.value, o.sub_domain.empty() ? "none" : "\"" + o.sub_domain + "\""));
        break;
      case ast::ScenarioExpectKind::Culprits: {
        auto want = x.culprits;
        std::sort(want.begin(), want.end());
        if (want != o.culprit_nodes)
          fails.push_back(fmt::format("culprits: expected [{}], got [{}]", fmt::join(want, ", "), fmt::join(o.culprit_nodes, ", ")));
        break;
      }
      case ast::ScenarioExpectKind::SymptomState: {
        SymptomState want = x.value == "active" ? SymptomState::Active : x.value == "demoted" ? SymptomState::Demoted : SymptomState::Scrubbed;
        bool found = std::any_of(v.symptoms.begin(), v.symptoms.end(),
                                 [&](const Symptom& s) { return symptom_matches(s, x) && s.state == want; });
        if (!found)
          fails.push_back(fmt::format("symptom {}{} {}: expected, got {}", x.kind_pattern, x.node.empty() ? "" : " on " + x.node, x.value, states(x)));
        break;
      }
      case ast::ScenarioExpectKind::NoSymptom: {
        bool found = std::any_of(v.symptoms.begin(), v.symptoms.end(), [&](const Symptom& s) { return symptom_matches(s, x); });
        if (found) fails.push_back(fmt::format("no symptom {}{}: expected none, got {}", x.kind_pattern, x.node.empty() ? "" : " on " + x.node, states(x)));
        break;
      }
    }
  }
  r.passed = fails.empty();
  r.message = fmt::format("{}", fmt::join(fails, "; "));
  return r;
}

}  // namespace

TestReport run_inline_tests(std::shared_ptr<const Program> program) {
  TestReport rep;
  Scanner scanner(program);
  const auto& cat = program->catalog();
  for (size_t i = 0; i < cat.extractors.size(); ++i)
    for (const auto& t : cat.extractors[i].tests)
      rep.results.push_back(run_line_test(scanner, *program, static_cast<int32_t>(i), t));
  for (const auto& sc : cat.scenarios) rep.results.push_back(run_scenario(program, sc));
  for (const auto& r : rep.results) (r.passed ? rep.passed : rep.failed)++;
  return rep;
}

}  // namespace culprit
