// `culprit`: the command-line front end.
//
//   culprit diagnose BUNDLE   explain why a workload failed
//   culprit test [PATH...]    run the catalog's inline tests
//   culprit check [PATH...]   compile rules and report diagnostics
//   culprit --version
//
// Exit codes: 0 success; 1 tests failed; 2 bad input or rules that do not
// compile (with a message on stderr). Nothing here throws past main().
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/args.h"
#include "compiler/catalog_loader.h"
#include "compiler/parser.h"
#include "runtime/bundle.h"
#include "runtime/diagnose.h"
#include "runtime/self_test.h"
#include "runtime/timestamp.h"
#include "runtime/verdict_json.h"
#include "runtime/verdict_text.h"

namespace {

using culprit::cli::Args;
using culprit::cli::ArgSpec;

constexpr int kOk = 0, kTestsFailed = 1, kBadInput = 2;

const char* kMainHelp = R"(culprit - why did this GPU training job fail?

Usage:
  culprit diagnose BUNDLE [options]   explain a workload's failure from its evidence
  culprit test [PATH...] [options]    run the inline tests of a rule catalog
  culprit check [PATH...] [options]   compile rules and report diagnostics
  culprit --version                   print versions
  culprit COMMAND --help              help for one command

A BUNDLE is a directory with context.json, logs/<host>/<source>.log and an
optional observations.jsonl (see docs/bundle.md). Rules are .attr files
(see docs/language.md); the bundled catalog is used unless --no-stdlib.
)";

const char* kDiagnoseHelp = R"(Usage: culprit diagnose BUNDLE [options]

Reads the bundle's context and logs, runs the rule catalog and prints a
verdict: the root cause, the culprit nodes, the cascade of downstream
symptoms with their original log lines, and what evidence was missing.

Options:
  --format text|json     output format (default: text on a terminal, else json)
  --rules PATH           add a rule directory or .attr file (repeatable)
  --no-stdlib            do not load the bundled catalog
  --explain              include the derivation trail (which rule did what)
  --threads N            scan with N threads (default: all cores)
  --slack-before DUR     keep evidence this long before the window start (default 10m)
  --slack-after DUR      and after its end (default 30m)
  --skip-self-test       do not run the catalog's inline tests first
  --color auto|always|never
  -h, --help             this help

Exit status: 0 verdict produced, 2 bad input or a catalog that fails its tests.
)";

const char* kTestHelp = R"(Usage: culprit test [PATH...] [options]

Compiles the catalog (the bundled one plus each PATH) and runs every inline
test: each extractor's line tests and every scenario. Prints one line per
failure and a closing line "N passed, N failed".

Options:
  --no-stdlib     test only the given PATHs
  --verbose       print every test, not only failures
  -h, --help      this help

Exit status: 0 all passed, 1 some failed, 2 the rules do not compile.
)";

const char* kCheckHelp = R"(Usage: culprit check [PATH...] [options]

Compiles the catalog (the bundled one plus each PATH) and prints every
diagnostic with its code, file:line:col, the source line and a caret.

Options:
  --no-stdlib     check only the given PATHs
  -h, --help      this help

Exit status: 0 the rules compile, 2 they do not.
)";

std::vector<std::string> rule_paths(const std::vector<std::string>& extra, bool stdlib) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  std::error_code ec;
  std::string std_dir = culprit::stdlib_directory();
  fs::path std_canon = fs::weakly_canonical(std_dir, ec);
  if (stdlib) paths.push_back(std_dir);
  for (const auto& p : extra) {
    // Naming the bundled catalog explicitly must not load it twice.
    if (stdlib && fs::weakly_canonical(p, ec) == std_canon) continue;
    paths.push_back(p);
  }
  return paths;
}

bool compile(const std::vector<std::string>& paths, culprit::LoadedCatalog& loaded,
             std::shared_ptr<const culprit::Program>& program) {
  if (paths.empty()) {
    std::cerr << "culprit: no rules to load (give a PATH or drop --no-stdlib)\n";
    return false;
  }
  loaded = culprit::load_catalog(paths);
  bool color = isatty(STDERR_FILENO);
  if (!loaded.diagnostics.all().empty()) std::cerr << loaded.diagnostics.render(color);
  if (!loaded.ok()) {
    std::cerr << fmt::format("culprit: the rules do not compile ({} error{})\n", loaded.diagnostics.error_count(),
                             loaded.diagnostics.error_count() == 1 ? "" : "s");
    return false;
  }
  std::string error;
  program = culprit::Program::build(loaded.catalog, error);
  if (!program) {
    std::cerr << "culprit: " << error << "\n";
    return false;
  }
  return true;
}

int usage_error(const std::string& cmd, const std::string& msg) {
  std::cerr << fmt::format("culprit {}: {}\nTry 'culprit {} --help'.\n", cmd, msg, cmd);
  return kBadInput;
}

int cmd_diagnose(int argc, char** argv) {
  ArgSpec spec{{"no-stdlib", "explain", "skip-self-test", "help"},
               {"format", "rules", "threads", "slack-before", "slack-after", "color"}};
  Args a;
  std::string err;
  if (!culprit::cli::parse_args(argc, argv, 2, spec, a, err)) return usage_error("diagnose", err);
  if (a.has("help")) {
    std::cout << kDiagnoseHelp;
    return kOk;
  }
  if (a.positionals.size() != 1) return usage_error("diagnose", "expected exactly one BUNDLE directory");
  std::string format = a.last("format").value_or(isatty(STDOUT_FILENO) ? "text" : "json");
  if (format != "text" && format != "json") return usage_error("diagnose", "--format must be text or json");
  culprit::DiagnoseOptions opt;
  if (auto t = a.last("threads")) {
    char* end = nullptr;
    long n = std::strtol(t->c_str(), &end, 10);
    if (t->empty() || *end || n < 1 || n > 1024) return usage_error("diagnose", "--threads must be an integer from 1 to 1024");
    opt.threads = static_cast<unsigned>(n);
  }
  for (const char* name : {"slack-before", "slack-after"}) {
    if (auto s = a.last(name)) {
      auto d = culprit::parse_duration(*s);
      if (!d || *d < 0) return usage_error("diagnose", fmt::format("--{} must be a duration such as 10m or 90s", name));
      (std::string(name) == "slack-before" ? opt.slack_before : opt.slack_after) = *d;
    }
  }
  std::string color_opt = a.last("color").value_or("auto");
  if (color_opt != "auto" && color_opt != "always" && color_opt != "never")
    return usage_error("diagnose", "--color must be auto, always or never");

  culprit::Bundle bundle;
  if (!culprit::load_bundle(a.positionals[0], bundle, err)) {
    std::cerr << "culprit diagnose: " << err << "\n";
    return kBadInput;
  }
  culprit::LoadedCatalog loaded;
  std::shared_ptr<const culprit::Program> program;
  if (!compile(rule_paths(a.all("rules"), !a.has("no-stdlib")), loaded, program)) return kBadInput;
  if (!a.has("skip-self-test")) {
    auto report = culprit::run_inline_tests(program);
    if (report.failed > 0) {
      for (const auto& r : report.results)
        if (!r.passed) std::cerr << fmt::format("{}: FAIL {} {}: {}\n", r.location, r.kind, r.name, r.message);
      std::cerr << fmt::format("culprit diagnose: the catalog fails {} of its own tests; refusing to diagnose with it "
                               "(run 'culprit test', or pass --skip-self-test)\n", report.failed);
      return kBadInput;
    }
  }
  culprit::Verdict verdict;
  if (!culprit::diagnose(program, culprit::request_from_bundle(bundle), opt, verdict, err)) {
    std::cerr << "culprit diagnose: " << err << "\n";
    return kBadInput;
  }
  if (format == "json") {
    std::cout << culprit::verdict_to_json_text(verdict, a.has("explain"));
  } else {
    culprit::TextOptions t;
    t.explain = a.has("explain");
    t.color = color_opt == "always" || (color_opt == "auto" && isatty(STDOUT_FILENO));
    std::cout << culprit::verdict_to_text(verdict, t);
  }
  std::cout.flush();
  return std::cout.good() ? kOk : kBadInput;
}

int cmd_test(int argc, char** argv) {
  ArgSpec spec{{"no-stdlib", "verbose", "help"}, {}};
  Args a;
  std::string err;
  if (!culprit::cli::parse_args(argc, argv, 2, spec, a, err)) return usage_error("test", err);
  if (a.has("help")) {
    std::cout << kTestHelp;
    return kOk;
  }
  culprit::LoadedCatalog loaded;
  std::shared_ptr<const culprit::Program> program;
  if (!compile(rule_paths(a.positionals, !a.has("no-stdlib")), loaded, program)) return kBadInput;
  auto report = culprit::run_inline_tests(program);
  for (const auto& r : report.results) {
    if (!r.passed) std::cout << fmt::format("FAIL {} {} ({}): {}\n", r.kind, r.name, r.location, r.message);
    else if (a.has("verbose")) std::cout << fmt::format("ok   {} {} ({})\n", r.kind, r.name, r.location);
  }
  std::cout << fmt::format("{} passed, {} failed\n", report.passed, report.failed);
  return report.failed ? kTestsFailed : kOk;
}

int cmd_check(int argc, char** argv) {
  ArgSpec spec{{"no-stdlib", "help"}, {}};
  Args a;
  std::string err;
  if (!culprit::cli::parse_args(argc, argv, 2, spec, a, err)) return usage_error("check", err);
  if (a.has("help")) {
    std::cout << kCheckHelp;
    return kOk;
  }
  culprit::LoadedCatalog loaded;
  std::shared_ptr<const culprit::Program> program;
  if (!compile(rule_paths(a.positionals, !a.has("no-stdlib")), loaded, program)) return kBadInput;
  const auto& c = *loaded.catalog;
  std::cout << fmt::format("ok: catalog {} {} ({}): {} files, {} extractors, {} rules, {} scenarios\n", c.name, c.version,
                           c.digest, c.files.size(), c.extractors.size(), c.rules.size(), c.scenarios.size());
  return kOk;
}

int cmd_version() {
  std::string catalog = "unavailable (the bundled catalog does not compile)";
  auto loaded = culprit::load_catalog({culprit::stdlib_directory()});
  std::string hs_version = "?";
  if (loaded.ok()) {
    std::string err;
    if (auto program = culprit::Program::build(loaded.catalog, err)) {
      auto info = culprit::engine_info(*program);
      catalog = fmt::format("{} {} ({})", info.catalog_name, info.catalog_version, info.catalog_digest);
    }
  }
  std::cout << fmt::format("Culprit {}\ncatalog: {}\nANTLR runtime: {}\nHyperscan: {}\nRE2: {}\nevaluator: interpreter\n",
                           CULPRIT_VERSION, catalog, culprit::antlr_runtime_version(), culprit::hyperscan_version(),
                           culprit::re2_version());
  return kOk;
}

int run(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kMainHelp;
    return kBadInput;
  }
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << kMainHelp;
    return kOk;
  }
  if (cmd == "--version" || cmd == "version") return cmd_version();
  if (cmd == "diagnose") return cmd_diagnose(argc, argv);
  if (cmd == "test") return cmd_test(argc, argv);
  if (cmd == "check") return cmd_check(argc, argv);
  std::cerr << fmt::format("culprit: unknown command '{}'\n\n{}", cmd, kMainHelp);
  return kBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    // Every module reports errors as values; reaching here is a bug, but
    // the user still gets a message and a non-zero status, not an abort.
    std::cerr << "culprit: internal error: " << e.what() << "\n";
    return 3;
  }
}
