// `culprit test [PATH...]`: the catalog's extractor line tests and scenarios.
//
// With PATHs the bundled catalog is compiled with them (as `diagnose
// --rules` would run them); `--no-stdlib` runs only the PATHs' tests, with
// the bundled catalog still compiled in so that scenarios resolve its kinds
// and run through its extractors and rules. Reports: text (one block per
// failure, every unmet `expect` with its file:line, the verdict a failing
// scenario got), `--format json`, `--junit FILE`, and rule coverage.
#include "cli/test_command.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/args.h"
#include "cli/catalog_choice.h"
#include "compiler/catalog_loader.h"
#include "runtime/self_test.h"

namespace culprit::cli {

namespace {

const char* kTestHelp = R"(Usage: culprit test [PATH...] [options]

Compiles the catalog (the bundled one plus each PATH) and runs its inline
tests: each extractor's line tests and every scenario. Prints each failure
with the file:line of every unmet expectation and, for a scenario, the
verdict it got; then "N passed, N failed".

Options:
  --no-stdlib        run only the tests of the given PATHs; the bundled
                     catalog is still compiled in, so scenarios resolve its
                     kinds and run through its extractors and rules
  --run REGEX        only tests whose name matches REGEX (RE2, searched)
  --format text|json the report on stdout (json: culprit.test-report/v1)
  --junit FILE       also write a JUnit XML report to FILE (for CI)
  --coverage         list the rules and extractors of the tested files that
                     no scenario exercises (a rule acts, an extractor matches
                     a scenario line)
  --min-coverage N   fail (exit 1) when under N percent of those rules and
                     extractors are exercised (implies --coverage)
  --verbose          print every test, not only failures
  --engine jit|interp
                     run rules as native code (jit, the default; also
                     $CULPRIT_ENGINE) or interpret them
  --no-cache         neither read nor write the compile cache
  --cache-dir DIR    compile cache (default: $CULPRIT_CACHE_DIR, else
                     $XDG_CACHE_HOME/culprit, else ~/.cache/culprit)
  -h, --help         this help

Exit status: 0 all passed, 1 some failed (or coverage under --min-coverage),
2 bad usage, rules that do not compile, or no test selected (a PATH without
tests, or a --run that matches none, is never a pass).
)";

int usage(const std::string& msg) {
  std::cerr << fmt::format("culprit test: {}\nTry 'culprit test --help'.\n", msg);
  return 2;
}

using ojson = nlohmann::ordered_json;

std::string actual_line(const ScenarioOutcome& a) {
  std::string out = a.status;
  if (!a.domain.empty()) out += fmt::format(" {} / {}", a.domain, a.sub_domain);
  if (!a.culprits.empty()) out += fmt::format(" on {}", fmt::join(a.culprits, ", "));
  return out;
}

std::string symptoms_line(const ScenarioOutcome& a, size_t max) {
  if (a.symptoms.empty()) return "none";
  std::vector<std::string> items;
  for (size_t i = 0; i < a.symptoms.size() && i < max; ++i) items.push_back(a.symptoms[i].first + " " + a.symptoms[i].second);
  std::string out = fmt::format("{}", fmt::join(items, ", "));
  if (a.symptoms.size() > max) out += fmt::format(", … {} more", a.symptoms.size() - max);
  return out;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\n': out += "&#10;"; break;
      default:
        // XML 1.0 admits no other C0 control.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t') out += "&#xFFFD;";
        else out += c;
    }
  }
  return out;
}

// Rule coverage over the tested files: which rules acted and which
// extractors matched a line in at least one selected scenario.
struct Coverage {
  struct Item {
    std::string kind, name, location, stage;
    bool exercised = false;
  };
  std::vector<Item> items;
  size_t exercised = 0;
  double percent() const { return items.empty() ? 100.0 : 100.0 * static_cast<double>(exercised) / static_cast<double>(items.size()); }
};

Coverage rule_coverage(const ir::Catalog& cat, const std::set<std::string>& files, const TestReport& rep) {
  std::set<std::string> acted, matched;
  for (const auto& r : rep.results) {
    if (r.kind != "scenario") continue;
    acted.insert(r.rules_acted.begin(), r.rules_acted.end());
    matched.insert(r.extractors_matched.begin(), r.extractors_matched.end());
  }
  auto where = [](const SourceRange& w) { return w.file ? fmt::format("{}:{}", w.file->path, w.line) : std::string("?"); };
  auto tested = [&](const SourceRange& w) { return files.empty() || (w.file && files.count(w.file->path)); };
  Coverage c;
  for (const auto& x : cat.extractors)
    if (tested(x.where)) c.items.push_back({"extractor", x.name, where(x.where), "", matched.count(x.name) > 0});
  // Rules in catalog order (file, then declaration), not evaluation order.
  std::vector<const ir::Rule*> rules;
  for (const auto& r : cat.rules) rules.push_back(&r);
  std::sort(rules.begin(), rules.end(), [](const ir::Rule* a, const ir::Rule* b) { return a->index < b->index; });
  for (const auto* r : rules)
    if (tested(r->where))
      c.items.push_back({"rule", r->name, where(r->where), ir::kStageNames[static_cast<size_t>(r->stage)], acted.count(r->name) > 0});
  for (const auto& i : c.items) c.exercised += i.exercised;
  return c;
}

bool write_junit(const std::string& path, const TestReport& rep, std::string& err) {
  std::map<std::string, std::vector<const TestResult*>> by_file;
  for (const auto& r : rep.results) by_file[r.file].push_back(&r);
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  double total_ms = 0;
  for (const auto& r : rep.results) total_ms += r.ms;
  x += fmt::format("<testsuites name=\"culprit test\" tests=\"{}\" failures=\"{}\" time=\"{:.3f}\">\n", rep.results.size(), rep.failed,
                   total_ms / 1000);
  for (const auto& [file, list] : by_file) {
    size_t failed = 0;
    double ms = 0;
    for (const auto* r : list) {
      failed += !r->passed;
      ms += r->ms;
    }
    x += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" time=\"{:.3f}\">\n", xml_escape(file), list.size(), failed, ms / 1000);
    for (const auto* r : list) {
      std::string line = r->location.substr(r->location.rfind(':') + 1);
      x += fmt::format("    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" line=\"{}\" time=\"{:.3f}\"", xml_escape(r->kind),
                       xml_escape(r->name), xml_escape(r->file), xml_escape(line), r->ms / 1000);
      if (r->passed) {
        x += "/>\n";
        continue;
      }
      std::string body;
      for (const auto& f : r->failures) body += f.location + ": " + f.message + "\n";
      if (r->actual) body += "actual verdict: " + actual_line(*r->actual) + "\nsymptoms: " + symptoms_line(*r->actual, 1000) + "\n";
      x += fmt::format(">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n", xml_escape(r->message),
                       xml_escape(r->kind), xml_escape(body));
    }
    x += "  </testsuite>\n";
  }
  x += "</testsuites>\n";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << x;
  out.close();
  if (!out) {
    err = "cannot write the JUnit report to " + path;
    return false;
  }
  return true;
}

}  // namespace

int cmd_test(int argc, char** argv) {
  ArgSpec spec = with_catalog_options({{"verbose", "coverage", "help"}, {"run", "format", "junit", "min-coverage"}}, false);
  Args a;
  std::string err;
  if (!parse_args(argc, argv, 2, spec, a, err)) return usage(err);
  if (a.has("help")) {
    std::cout << kTestHelp;
    return 0;
  }
  std::string format = a.last("format").value_or("text");
  if (format != "text" && format != "json") return usage("--format must be text or json");
  std::unique_ptr<RE2> name_re;
  if (auto r = a.last("run")) {
    name_re = std::make_unique<RE2>(*r, RE2::Quiet);
    if (!name_re->ok()) return usage(fmt::format("--run: not a valid regex: {}", name_re->error()));
  }
  double min_coverage = -1;
  if (auto m = a.last("min-coverage")) {
    char* end = nullptr;
    min_coverage = std::strtod(m->c_str(), &end);
    if (m->empty() || *end || min_coverage < 0 || min_coverage > 100) return usage("--min-coverage must be a percentage from 0 to 100");
  }
  bool want_coverage = a.has("coverage") || min_coverage >= 0;

  // --no-stdlib selects the PATHs' tests; the bundled catalog still compiles
  // with them so that their scenarios mean what they mean in production.
  bool only_paths = a.has("no-stdlib");
  Args compile_args = a;
  compile_args.flags.erase("no-stdlib");
  AttributorConfig config;
  if (!catalog_config(compile_args, a.positionals, config, err)) return usage(err);
  bool stdlib_first = !config.rule_paths.empty() && config.rule_paths.front() == stdlib_directory();
  if (only_paths && config.rule_paths.size() <= (stdlib_first ? 1u : 0u))
    return usage("--no-stdlib runs only the given PATHs' tests: give at least one rule PATH");
  auto attributor = open_attributor("test", config, false);
  if (!attributor) return 2;
  const auto& cat = attributor->catalog();

  // The files whose tests (and rules, for coverage) are under test.
  std::set<std::string> tested_files;
  if (only_paths) {
    size_t k = 0;
    for (size_t p = 0; p < cat.parts.size(); ++p)
      for (size_t f = 0; f < cat.parts[p].files.size() && k < cat.files.size(); ++f, ++k)
        if (!(stdlib_first && p == 0)) tested_files.insert(cat.files[k]);
  }
  TestSelection sel;
  if (only_paths || name_re)
    sel.select = [&](const std::string&, const std::string& name, const std::string& file) {
      if (only_paths && !tested_files.count(file)) return false;
      return !name_re || RE2::PartialMatch(name, *name_re);
    };
  auto report = run_inline_tests(attributor->program(), sel);
  Coverage coverage;
  if (want_coverage) coverage = rule_coverage(cat, tested_files, report);

  if (auto j = a.last("junit"))
    if (!write_junit(*j, report, err)) {
      std::cerr << "culprit test: " << err << "\n";
      return 2;
    }

  if (format == "json") {
    ojson out;
    out["schema"] = "culprit.test-report/v1";
    ojson parts = ojson::array();
    for (const auto& p : cat.parts) parts.push_back({{"name", p.name}, {"version", p.version}, {"digest", p.digest}});
    out["catalog"] = {{"name", cat.name}, {"version", cat.version}, {"digest", cat.digest}, {"parts", parts}};
    out["passed"] = report.passed;
    out["failed"] = report.failed;
    ojson results = ojson::array();
    for (const auto& r : report.results) {
      ojson jr;
      jr["kind"] = r.kind;
      jr["name"] = r.name;
      jr["location"] = r.location;
      jr["passed"] = r.passed;
      if (!r.passed) {
        ojson fl = ojson::array();
        for (const auto& f : r.failures) fl.push_back({{"location", f.location}, {"message", f.message}});
        jr["failures"] = fl;
      }
      if (r.actual) {
        ojson sy = ojson::array();
        for (const auto& [id, state] : r.actual->symptoms) sy.push_back({{"id", id}, {"state", state}});
        jr["actual"] = {{"status", r.actual->status}, {"domain", r.actual->domain}, {"sub_domain", r.actual->sub_domain},
                        {"culprits", r.actual->culprits}, {"symptoms", sy}};
      }
      results.push_back(std::move(jr));
    }
    out["results"] = std::move(results);
    if (want_coverage) {
      ojson items = ojson::array();
      for (const auto& i : coverage.items)
        items.push_back({{"kind", i.kind}, {"name", i.name}, {"location", i.location}, {"exercised", i.exercised}});
      out["coverage"] = {{"exercised", coverage.exercised}, {"total", coverage.items.size()},
                         {"percent", std::round(coverage.percent() * 10) / 10}, {"items", items}};
    }
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    for (const auto& r : report.results) {
      if (r.passed) {
        if (a.has("verbose")) std::cout << fmt::format("ok   {} {} ({})\n", r.kind, r.name, r.location);
        continue;
      }
      std::cout << fmt::format("FAIL {} {} ({}): {}\n", r.kind, r.name, r.location,
                               r.failures.size() == 1 ? r.failures[0].message : fmt::format("{} expectations not met", r.failures.size()));
      if (r.failures.size() > 1 || (r.failures.size() == 1 && r.failures[0].location != r.location))
        for (const auto& f : r.failures) std::cout << fmt::format("  {}: {}\n", f.location, f.message);
      if (r.actual) {
        std::cout << fmt::format("  actual verdict: {}\n", actual_line(*r.actual));
        std::cout << fmt::format("  symptoms: {}\n", symptoms_line(*r.actual, 12));
      }
    }
    if (want_coverage) {
      std::cout << fmt::format("coverage: {} of {} rules and extractors exercised by a scenario ({:.1f}%)\n", coverage.exercised,
                               coverage.items.size(), coverage.percent());
      for (const auto& i : coverage.items)
        if (!i.exercised)
          std::cout << fmt::format("  not exercised: {} {}{} ({})\n", i.kind, i.name, i.stage.empty() ? "" : " [" + i.stage + "]", i.location);
    }
    std::cout << fmt::format("{} passed, {} failed\n", report.passed, report.failed);
  }
  if (report.results.empty()) {
    std::cerr << fmt::format("culprit test: no test ran{}: a catalog without tests is not a pass\n",
                             name_re ? fmt::format(" (--run '{}' matches none)", *a.last("run")) : std::string());
    return 2;
  }
  if (report.failed) return 1;
  if (min_coverage >= 0 && coverage.percent() + 1e-9 < min_coverage) {
    std::cerr << fmt::format("culprit test: coverage {:.1f}% is under --min-coverage {}\n", coverage.percent(), *a.last("min-coverage"));
    return 1;
  }
  return 0;
}

}  // namespace culprit::cli
