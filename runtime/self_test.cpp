#include "runtime/self_test.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include <nlohmann/json.hpp>

#include "runtime/bundle.h"
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

// "GpuXid: fallen off the bus", or "GpuXid (line 12)" for an untitled test.
std::string line_test_name(const ir::Extractor& x, const ir::LineTest& t) {
  return t.title.empty() ? fmt::format("{} (line {})", x.name, t.where.line) : fmt::format("{}: {}", x.name, t.title);
}

TestResult run_line_test(Scanner& scanner, const Program& program, int32_t xi, const ir::LineTest& t) {
  const auto& cat = program.catalog();
  const auto& x = cat.extractors[static_cast<size_t>(xi)];
  TestResult r;
  r.kind = "line";
  r.name = line_test_name(x, t);
  r.location = location(t.where);
  r.file = t.where.file ? t.where.file->path : "";
  // Every source of the extractor must agree; the first is enough to
  // exercise the database the extractor lives in.
  const int64_t mismatches_before = scanner.capture_scratch().mismatches;
  auto events = scanner.scan_single_line(x.sources.front(), t.line, xi);
  if (!events.empty()) r.extractors_matched.push_back(x.name);
  if (scanner.capture_scratch().mismatches != mismatches_before) {
    // The fast capture path (PCRE2) must agree with RE2 on every test line.
    r.message = "PCRE2 and RE2 take different captures: " + scanner.capture_scratch().notes.back();
    r.failures.push_back({r.location, r.message});
    return r;
  }
  if (t.expect_none) {
    r.passed = events.empty();
    if (!r.passed) r.message = fmt::format("expected no match, but it emitted {}", cat.event_kinds[static_cast<size_t>(x.kind)].name);
    if (!r.passed) r.failures.push_back({r.location, r.message});
    return r;
  }
  if (events.empty()) {
    r.message = "expected a match, got none";
    r.failures.push_back({r.location, r.message});
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
  for (const auto& d : diffs) r.failures.push_back({r.location, d});
  return r;
}

bool symptom_matches(const Symptom& s, const ir::ScenarioExpect& x) {
  return glob_kind_match(x.kind_pattern, s.kind_name) && (x.node.empty() || s.node == x.node);
}

const char* state_name(SymptomState s) {
  return s == SymptomState::Active ? "active" : s == SymptomState::Demoted ? "demoted" : "scrubbed";
}

TestResult run_scenario(std::shared_ptr<const Program> program, Scanner& scanner, const ir::Scenario& sc) {
  TestResult r;
  r.kind = "scenario";
  r.name = sc.title;
  r.location = location(sc.where);
  r.file = sc.where.file ? sc.where.file->path : "";
  // Which extractors its lines reach (coverage): each line on its own, through the real scan path.
  std::set<std::string> matched;
  for (const auto& l : sc.logs)
    for (const auto& e : scanner.scan_single_line(l.source, l.text, -1)) matched.emplace(e.producer);
  r.extractors_matched.assign(matched.begin(), matched.end());
  DiagnoseRequest req;
  req.context.workload_id = sc.workload_id;
  req.context.scheduler = sc.scheduler;
  req.context.nodes = sc.nodes;
  std::sort(req.context.nodes.begin(), req.context.nodes.end());
  req.context.terminal.state = sc.terminal_state;
  req.context.terminal.exit_code = sc.terminal_exit;
  req.context.start = sc.window_start;
  req.context.end = sc.window_end;
  if (!sc.ranks.empty()) {
    // The layout is read as a context's "ranks" is (runtime/bundle.h), with
    // its checks: a scenario's ranks mean what a bundle's would.
    nlohmann::json ctx = {{"workload_id", "scenario"}, {"nodes", nlohmann::json::array()}};
    std::map<std::string, std::string> by_node(sc.ranks.begin(), sc.ranks.end());
    for (const auto& n : sc.nodes) {
      auto it = by_node.find(n);
      ctx["nodes"].push_back(it == by_node.end() ? nlohmann::json(n) : nlohmann::json{{"name", n}, {"ranks", it->second}});
    }
    WorkloadContext laid_out;
    std::string why;
    if (!parse_context(ctx, laid_out, why)) {
      r.message = "the scenario's ranks: " + why;
      r.failures.push_back({r.location, r.message});
      return r;
    }
    req.context.ranks = std::move(laid_out.ranks);
  }
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
  std::map<std::string, int64_t> metric_no;
  for (const auto& m : sc.metrics) {
    Observation o;
    o.is_metric = true;
    o.host = m.host;
    o.source = m.source;
    o.metric = m.name;
    o.labels = m.labels;
    o.value = m.value;
    o.ts = m.ts;
    o.file = fmt::format("scenario/{}/{}.metrics", m.host, m.source);
    o.line = ++metric_no[m.host + "/" + m.source];
    req.observations.push_back(std::move(o));
  }
  DiagnoseOptions opt;
  opt.threads = 1;
  CaptureCounts captures;
  opt.verify_captures = true;  // PCRE2 and RE2 must agree on every line
  opt.captures = &captures;
  Verdict v;
  std::string error;
  if (!diagnose(program, req, opt, v, error)) {
    r.message = error;
    r.failures.push_back({r.location, error});
    return r;
  }
  if (captures.mismatches) {
    r.message = "PCRE2 and RE2 take different captures: " + captures.notes.front();
    r.failures.push_back({r.location, r.message});
    return r;
  }
  std::set<std::string> acted;
  for (const auto& t : v.trail) acted.insert(t.rule);
  r.rules_acted.assign(acted.begin(), acted.end());
  std::vector<TestFailure> fails;
  auto fail = [&](const ir::ScenarioExpect& x, std::string msg) { fails.push_back({location(x.where), std::move(msg)}); };
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
        if (o.status != x.value) fail(x, fmt::format("status: expected {}, got {}", x.value, o.status));
        break;
      case ast::ScenarioExpectKind::Domain:
        if (o.domain != x.value) fail(x, fmt::format("domain: expected {}, got {}", x.value, o.domain.empty() ? "none" : o.domain));
        break;
      case ast::ScenarioExpectKind::SubDomain:
        if (o.sub_domain != x.value)
          fail(x, fmt::format("sub_domain: expected \"{}\", got {}", x.value, o.sub_domain.empty() ? "none" : "\"" + o.sub_domain + "\""));
        break;
      case ast::ScenarioExpectKind::Culprits: {
        auto want = x.culprits;
        std::sort(want.begin(), want.end());
        if (want != o.culprit_nodes)
          fail(x, fmt::format("culprits: expected [{}], got [{}]", fmt::join(want, ", "), fmt::join(o.culprit_nodes, ", ")));
        break;
      }
      case ast::ScenarioExpectKind::SymptomState: {
        SymptomState want = x.value == "active" ? SymptomState::Active : x.value == "demoted" ? SymptomState::Demoted : SymptomState::Scrubbed;
        bool found = std::any_of(v.symptoms.begin(), v.symptoms.end(),
                                 [&](const Symptom& s) { return symptom_matches(s, x) && s.state == want; });
        if (!found)
          fail(x, fmt::format("symptom {}{} {}: expected, got {}", x.kind_pattern, x.node.empty() ? "" : " on " + x.node, x.value, states(x)));
        break;
      }
      case ast::ScenarioExpectKind::NoSymptom: {
        bool found = std::any_of(v.symptoms.begin(), v.symptoms.end(), [&](const Symptom& s) { return symptom_matches(s, x); });
        if (found) fail(x, fmt::format("no symptom {}{}: expected none, got {}", x.kind_pattern, x.node.empty() ? "" : " on " + x.node, states(x)));
        break;
      }
    }
  }
  r.passed = fails.empty();
  std::vector<std::string> msgs;
  for (const auto& f : fails) msgs.push_back(f.message);
  r.message = fmt::format("{}", fmt::join(msgs, "; "));
  r.failures = std::move(fails);
  if (!r.passed) {
    ScenarioOutcome a;
    a.status = o.status;
    a.domain = o.domain;
    a.sub_domain = o.sub_domain;
    a.culprits = o.culprit_nodes;
    for (const auto& s : v.symptoms) a.symptoms.emplace_back(s.id, state_name(s.state));
    std::sort(a.symptoms.begin(), a.symptoms.end());
    r.actual = std::move(a);
  }
  return r;
}

}  // namespace

TestReport run_inline_tests(std::shared_ptr<const Program> program, const TestSelection& selection) {
  TestReport rep;
  const auto& cat = program->catalog();
  auto selected = [&](const char* kind, const std::string& name, const SourceRange& where) {
    return !selection.select || selection.select(kind, name, where.file ? where.file->path : "");
  };
  // The selected tests in report order: line tests by extractor, then scenarios.
  struct Job {
    int32_t extractor = -1;               // a line test of this extractor, or
    const ir::LineTest* line = nullptr;
    const ir::Scenario* scenario = nullptr;  // a scenario
  };
  std::vector<Job> jobs;
  for (size_t i = 0; i < cat.extractors.size(); ++i)
    for (const auto& t : cat.extractors[i].tests)
      if (selected("line", line_test_name(cat.extractors[i], t), t.where)) jobs.push_back({static_cast<int32_t>(i), &t, nullptr});
  for (const auto& sc : cat.scenarios)
    if (selected("scenario", sc.title, sc.where)) jobs.push_back({-1, nullptr, &sc});

  // Tests are independent (each scans its own lines or diagnoses its own
  // scenario), so they run on every core, each thread with its own scanner,
  // and each result lands at its test's index: the report is the same
  // whatever the thread count. A start-up runs hundreds of them.
  rep.results.resize(jobs.size());
  std::atomic<size_t> next{0};
  std::mutex failure_mu;
  std::exception_ptr failure;  // the first exception of a thread, rethrown on the caller's as before
  auto work = [&] {
    try {
      Scanner scanner(program);
      for (size_t k; (k = next.fetch_add(1)) < jobs.size();) {
        const Job& job = jobs[k];
        auto t0 = std::chrono::steady_clock::now();
        TestResult r = job.line ? run_line_test(scanner, *program, job.extractor, *job.line)
                                : run_scenario(program, scanner, *job.scenario);
        r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        rep.results[k] = std::move(r);
      }
    } catch (...) {
      next = jobs.size();
      std::lock_guard<std::mutex> lock(failure_mu);
      if (!failure) failure = std::current_exception();
    }
  };
  size_t threads = std::min<size_t>({std::max(1u, std::thread::hardware_concurrency()), 8, jobs.size() / 32 + 1});
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: this one does the rest
    }
  }
  work();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  for (const auto& r : rep.results) (r.passed ? rep.passed : rep.failed)++;
  return rep;
}

}  // namespace culprit
