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
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

#include "base/text_util.h"
#include "cli/allocator.h"
#include "cli/args.h"
#include "cli/catalog_choice.h"
#include "cli/check_json.h"
#include "cli/dashboard_command.h"
#include "cli/eval.h"
#include "cli/export_patterns.h"
#include "cli/remote_diagnose.h"
#include "cli/run_command.h"
#include "cli/serve_command.h"
#include "cli/test_command.h"
#include "cli/match_command.h"
#include "cli/offenders_command.h"
#include "cli/fmt_command.h"
#include "cli/lsp_command.h"
#include "cli/text_output.h"
#include "compiler/catalog_loader.h"
#include "compiler/parser.h"
#include "compiler/query_plan.h"
#include "compiler/regex_check.h"
#include "runtime/bundle.h"
#include "runtime/attributor.h"
#include "runtime/native_code.h"
#include "runtime/self_test.h"
#include "base/suggest.h"
#include "base/timestamp.h"
#include "runtime/capture_regex.h"
#include "runtime/verdict_json.h"
#include "runtime/verdict_text.h"

namespace {

using culprit::cli::Args;
using culprit::cli::ArgSpec;
using culprit::cli::catalog_config;
using culprit::cli::open_attributor;
using culprit::cli::with_catalog_options;

constexpr int kOk = 0, kTestsFailed = 1, kBadInput = 2;

const char* kMainHelp = R"(culprit - why did this GPU training job fail?

Usage:
  culprit diagnose BUNDLE [options]   explain a workload's failure from its evidence
  culprit test [PATH...] [options]    run the inline tests of a rule catalog
  culprit check [PATH...] [options]   compile rules and report diagnostics
  culprit match --source SRC LINE     which extractors match a log line, the event, the rules that see it
  culprit fmt [--check] PATH...       lay .attr files out in the canonical format
  culprit lsp [--rules PATH]...       a Language Server Protocol server for .attr files (editors)
  culprit eval DIR [options]          score the catalog on labelled bundles
  culprit serve [options]             the attribution service (HTTP, docs/service.md)
  culprit run --config FILE --once|--watch
                                      the blueprint: discover, collect, attribute, store
                                      (docs/blueprint.md)
  culprit dashboard [--store URL]     the read-only web view of a store (docs/dashboard.md)
  culprit offenders [--store URL] [--since 7d] [--min N]
                                      nodes that were the culprit of repeated attempts (docs/recovery.md)
  culprit export-patterns [options]   print the extractors' regexes (for benchmark peers)
  culprit --version                   print versions
  culprit COMMAND --help              help for one command (or: culprit help COMMAND)

A BUNDLE is a directory with context.json, logs/<host>/<source>.log, an
optional observations.jsonl and optional PyTorch Flight Recorder dumps in
traces/<host>/ (see docs/bundle.md). Rules are .attr files
(see docs/language.md); the bundled catalog is used unless --no-stdlib.
)";

const char* kDiagnoseHelp = R"(Usage: culprit diagnose BUNDLE [options]

Reads the bundle's context and logs, runs the rule catalog and prints a
verdict: the root cause, the culprit nodes, the cascade of downstream
symptoms with their original log lines, and what evidence was missing.

Options:
  --format text|json     output format (default: text on a terminal, else json)
  --schema v2|v1         the JSON verdict's schema: culprit.verdict/v2 (the
                         default, with the recommendation) or v1 (without)
  --rules PATH           add a rule directory or .attr file (repeatable)
  --no-stdlib            do not load the bundled catalog
  --cascade              list every symptom with its rule and evidence lines
                         (by default the cascade is one line per kind and reason)
  --explain              --cascade plus the derivation trail (which rule did what)
  --width N              fit the text report to N columns (default: the
                         terminal's, or $COLUMNS; 0 = never cut lines)
  --height N             fit the text report to N lines, shortening the lists
                         so the cause and what to do stay on screen (default:
                         the terminal's, or $LINES; 0 = never shorten)
  --timings              print where the time went on stderr: start-up, scan,
                         rule engine (with events/s), output, the five
                         slowest rules and the rules' time by stage
  --no-indexes           answer every query by walking all candidates of its
                         kinds (slow: the plain evaluation the indexes are
                         compared with, for benchmarks; same verdict; no
                         evaluation step budget)
  --threads N            scan with N threads (default: all cores)
  --slack-before DUR     keep evidence this long before the window start (default 10m)
  --slack-after DUR      and after its end (default 30m)
  --skip-self-test       do not run the catalog's inline tests first (with the
                         cache, an unchanged catalog that passed them before is
                         not tested again: its record is read)
  --color auto|always|never
                         auto: colour on a terminal unless $NO_COLOR is set
                         or $TERM is dumb
  --engine jit|interp    run rules as native code (jit, the default; also
                         $CULPRIT_ENGINE) or interpret them
  --no-cache             neither read nor write the compile cache
  --cache-dir DIR        compile cache (default: $CULPRIT_CACHE_DIR, else
                         $XDG_CACHE_HOME/culprit, else ~/.cache/culprit)
  --server URL           send the evidence to a running `culprit serve` and
                         print its verdict (see 'culprit diagnose --server URL
                         --help'; --token-file FILE for its bearer token)
  -h, --help             this help

Environment: CULPRIT_STDLIB (the bundled catalog's directory), CULPRIT_ENGINE,
CULPRIT_CACHE_DIR, NO_COLOR, COLUMNS, LINES.

Exit status: 0 verdict produced, 2 bad input (a bundle without a single log
included) or a catalog that fails its tests, 3 (--server) the service could
not be reached.
)";

const char* kCheckHelp = R"(Usage: culprit check [PATH...] [options]

Compiles the catalog (the bundled one plus each PATH) and prints every
diagnostic with its code, file:line:col, the source line and a caret.

Options:
  --no-stdlib     check only the given PATHs
  --format text|json
                  text (the default): diagnostics on stderr, a summary line;
                  json: one document on stdout with every diagnostic's code,
                  severity, file, line, col, end, message, help and notes
                  (schema culprit.check/v1, cli/check_json.h), for editors
  --timings       compile twice, in fresh processes with an empty and then a
                  warm cache, and print the time of every phase (parse, sema,
                  Hyperscan, LLVM codegen/optimize/emit, linking, self-tests)
                  and how many queries use which kind of index
  --explain       print how every extractor takes its captures (PCRE2 or
                  RE2) and how every query of every rule is answered: which
                  index (kind, node, key expressions), `within` by binary
                  search, first hit, or computed once (docs/language.md §4.5)
  --engine jit|interp
                  run rules as native code (jit, the default; also
                  $CULPRIT_ENGINE) or interpret them
  --no-cache      neither read nor write the compile cache
  --cache-dir DIR compile cache (default: $CULPRIT_CACHE_DIR, else
                  $XDG_CACHE_HOME/culprit, else ~/.cache/culprit)
  -h, --help      this help

Warnings (such as E0801, a query over events nested in another with no
index to narrow either) do not change the exit status.

Exit status: 0 the rules compile, 2 they do not.
)";

int usage_error(const std::string& cmd, const std::string& msg) {
  std::cerr << fmt::format("culprit {}: {}\nTry 'culprit {} --help'.\n", cmd, culprit::escape_for_terminal(msg), cmd);
  return kBadInput;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int cmd_diagnose(int argc, char** argv) {
  ArgSpec spec = with_catalog_options({{"explain", "cascade", "skip-self-test", "help", "timings", "no-indexes"},
                                       {"format", "threads", "slack-before", "slack-after", "color", "width", "height",
                                        "server", "schema"}});
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
  culprit::VerdictSchema schema = culprit::VerdictSchema::V2;
  if (auto s = a.last("schema"); s && !culprit::parse_verdict_schema(*s, schema))
    return usage_error("diagnose", "--schema must be v2 or v1");
  if (a.last("schema") && format != "json") return usage_error("diagnose", "--schema applies only with --format json");
  culprit::DiagnoseOptions opt;
  if (auto t = a.last("threads")) {
    char* end = nullptr;
    long n = std::strtol(t->c_str(), &end, 10);
    if (t->empty() || *end || n < 1 || n > 1024) return usage_error("diagnose", "--threads must be an integer from 1 to 1024");
    opt.threads = static_cast<unsigned>(n);
  }
  for (const char* name : {"slack-before", "slack-after"}) {
    if (auto s = a.last(name)) {
      int64_t d = 0;
      auto c = culprit::parse_bounded_duration(*s, d);
      if (c == culprit::DurationCheck::range) return usage_error("diagnose", culprit::duration_error(c, fmt::format("--{}", name)));
      if (c != culprit::DurationCheck::ok || d < 0) return usage_error("diagnose", fmt::format("--{} must be a duration such as 10m or 90s", name));
      (std::string(name) == "slack-before" ? opt.slack_before : opt.slack_after) = d;
    }
  }
  culprit::AttributorConfig config;
  if (!catalog_config(a, {}, config, err)) return usage_error("diagnose", err);
  culprit::TextOptions text_opt;
  if (!culprit::cli::text_options(a, text_opt, err)) return usage_error("diagnose", err);

#ifdef __GLIBC__
  // With glibc's malloc (cli/allocator.h; a no-op under mimalloc, whose
  // threads hand freed blocks back to the heap that made them): one malloc
  // arena for the whole process. The scan threads allocate the events, the
  // main thread then builds symptoms while the engine frees events kind by
  // kind; with per-thread arenas that freed memory could not be reused by
  // the main thread and peak RSS grew by about a third (4,000 nodes: 133 MB
  // vs 103 MB). Events are few per byte scanned, so the scan
  // threads hardly contend for the lock.
  mallopt(M_ARENA_MAX, 1);
#endif
  auto t_start = std::chrono::steady_clock::now();
  culprit::Bundle bundle;
  if (!culprit::load_bundle(a.positionals[0], bundle, err)) {
    std::cerr << "culprit diagnose: " << culprit::escape_for_terminal(err) << "\n";
    return kBadInput;
  }
  if (std::string m = culprit::missing_logs_message(bundle, a.positionals[0]); !m.empty()) {
    std::cerr << "culprit diagnose: " << culprit::escape_for_terminal(m) << "\n";
    return kBadInput;
  }
  {
    uint64_t bytes = 0;
    for (const auto& f : bundle.files) bytes += f.size;
    culprit::cli::rerun_with_huge_pages_if_large(argv, bytes, bundle.files.size());
  }
  auto attributor = open_attributor("diagnose", config, !a.has("skip-self-test"),
                                    "refusing to diagnose with it (run 'culprit test', or pass --skip-self-test)");
  if (!attributor) return kBadInput;
  // The trail is printed only with --explain; without it, not collecting it
  // saves an entry per symptom and state change.
  opt.trail = a.has("explain");
  culprit::DiagnoseTimings timings;
  if (a.has("timings")) opt.timings = &timings;
  opt.use_indexes = !a.has("no-indexes");
  // The walk takes many more steps than the budget, sized for indexed plans,
  // allows; it is the operator's own comparison run, so it is not cut and
  // its verdict stays the indexed run's.
  if (!opt.use_indexes) opt.eval_steps = UINT64_MAX;
  double startup_ms = ms_since(t_start);
  auto t_diagnose = std::chrono::steady_clock::now();
  // Never freed on success: the process ends right after the output, and
  // destroying a verdict of 130,000 symptoms and their evidence took a second.
  auto owned_verdict = std::make_unique<culprit::Verdict>();
  culprit::Verdict& verdict = *owned_verdict;
  if (!attributor->attribute(culprit::request_from_bundle(std::move(bundle)), opt, verdict, err)) {
    std::cerr << "culprit diagnose: " << culprit::escape_for_terminal(err) << "\n";
    return kBadInput;
  }
  auto t_output = std::chrono::steady_clock::now();
  if (format == "json") {
    culprit::write_verdict_json(std::cout, verdict, a.has("explain"), schema);
  } else {
    std::cout << culprit::verdict_to_text(verdict, text_opt);
  }
  std::cout.flush();
  if (a.has("timings")) {
    double output_ms = ms_since(t_output), whole_ms = ms_since(t_diagnose);
    auto per_s = [](int64_t n, double ms) { return ms > 0 ? static_cast<double>(n) / (ms / 1000.0) : 0.0; };
    std::cerr << fmt::format(
        "timings: start-up {:.1f} ms (bundle, catalog, self-tests); read {:.1f} ms; scan {:.1f} ms ({} thread{}); "
        "engine {:.1f} ms; output {:.1f} ms\n"
        "timings: {} events, {} symptoms; engine {:.0f} events/s; whole diagnosis (read to output) {:.0f} events/s; "
        "malloc {}\n",
        startup_ms, timings.read_ms, timings.scan_ms, timings.threads, timings.threads == 1 ? "" : "s", timings.engine_ms,
        output_ms, timings.events, timings.symptoms, per_s(timings.events, timings.engine_ms), per_s(timings.events, whole_ms),
        culprit::cli::malloc_description());
    std::string slow;
    for (const auto& [name, ms] : timings.slowest_rules) slow += fmt::format("{}{} {:.1f} ms", slow.empty() ? "" : ", ", name, ms);
    if (!slow.empty()) std::cerr << "timings: slowest rules: " << slow << "\n";
    std::string stages;
    for (const auto& [name, ms] : timings.stage_ms) stages += fmt::format("{}{} {:.1f} ms", stages.empty() ? "" : ", ", name, ms);
    if (!stages.empty()) std::cerr << "timings: rules by stage: " << stages << "\n";
    std::cerr << fmt::format("timings: evaluation steps {} (budget {})\n", timings.eval_steps, timings.eval_budget);
  }
  static_cast<void>(owned_verdict.release());  // see above: left to the process's exit
  return std::cout.good() ? kOk : kBadInput;
}

// ------------------------------------------------------ check --explain
// One line per query: where it is, what it queries, how it is answered.

std::string one_line(std::string text, size_t max) {
  for (char& c : text)
    if (c == '\n' || c == '\t') c = ' ';
  if (text.size() > max) text = text.substr(0, max - 3) + "...";
  return text;
}

std::string query_text(const culprit::plan::QueryPlan& p, const culprit::ir::Catalog& cat) {
  if (p.expr) return one_line(culprit::plan::expression_text(*p.expr, cat), 96);
  return fmt::format("{} {} {}", p.role, p.query->symptom ? "symptom" : "event", culprit::plan::kinds_text(*p.query, cat));
}

void explain_plans(const culprit::Program& program) {
  const auto& cat = program.catalog();
  // How each extractor's captures are taken (runtime/capture_regex.h).
  for (size_t i = 0; i < cat.extractors.size(); ++i) {
    const auto& x = cat.extractors[i];
    const auto& c = program.extractor_capture(static_cast<int32_t>(i));
    std::cout << fmt::format("{}:{}: extractor {}: captures by {}\n", x.where.file ? x.where.file->path : "?", x.where.line, x.name,
                             c.fast() ? "PCRE2 (JIT)" : "RE2: " + c.why_not_fast());
  }
  const culprit::ir::Rule* last = nullptr;
  for (const auto& p : program.query_plans().plans()) {
    if (p.rule != last) {
      last = p.rule;
      const auto& w = p.rule->where;
      std::cout << fmt::format("{}:{}: rule {} (stage {})\n", w.file ? w.file->path : "?", w.line, p.rule->name,
                               culprit::ir::kStageNames[static_cast<size_t>(p.rule->stage)]);
    }
    std::cout << fmt::format("  {}\n      -> {}\n", query_text(p, cat), culprit::plan::describe(p, cat));
  }
}

// Counts of the access paths, for `check --timings`.
std::string plan_summary(const culprit::Program& program) {
  size_t n = 0, keyed = 0, node_only = 0, window = 0, first = 0, memo = 0, scans = 0;
  for (const auto& p : program.query_plans().plans()) {
    ++n;
    if (!p.keys.empty()) ++keyed;
    else if (p.by_node) ++node_only;
    else ++scans;
    window += p.time_window;
    first += p.first_hit;
    memo += p.memoized;
  }
  return fmt::format("{} queries: {} by key, {} by node only, {} over all of their kinds; {} with `within` by binary search, "
                     "{} stop at the first hit, {} computed once while their inputs do not change (check --explain lists them)",
                     n, keyed, node_only, scans, window, first, memo);
}

// ------------------------------------------------------ check --timings
// The parent runs `check --timings-run` twice in fresh processes sharing an
// empty temporary cache: the first is a cold start, the second a warm one.
// Each child prints "name<TAB>value" lines; the parent adds the wall time
// of the whole process (exec, dynamic linking, everything) and tabulates.

int timings_run(const culprit::AttributorConfig& config) {
  auto t0 = std::chrono::steady_clock::now();
  culprit::AttributorStart start;
  auto attributor = open_attributor("check", config, true, "", &start);
  if (!attributor) return start.self_test && start.self_test->failed ? kTestsFailed : kBadInput;
  const auto& program = attributor->program();
  const culprit::TestReport& report = *start.self_test;
  double tests_ms = start.self_test_ms;
  const auto& bt = program->timings();
  std::map<std::string, std::string> out;
  auto num = [](double v) { return fmt::format("{:.1f}", v); };
  out["parse"] = num(start.parse_ms);
  out["sema"] = num(start.sema_ms);
  out["hyperscan"] = num(bt.hyperscan_ms);
  out["hyperscan_cached"] = bt.hyperscan_cached ? "1" : "0";
  out["native"] = num(bt.native_ms);
  out["self_tests"] = num(tests_ms);
  out["tests"] = fmt::format("{} passed, {} failed{}", report.passed, report.failed,
                             report.recorded ? " (recorded by an earlier run of this build on these rules)" : "");
  out["tests_recorded"] = report.recorded ? "1" : "0";
  out["catalog_cached"] = start.catalog_from_image ? "1" : "0";
  out["evaluator"] = program->evaluator();
  out["plans"] = plan_summary(*program);
  if (const auto* st = culprit::native_stats(program->native())) {
    out["llvm_codegen"] = num(st->codegen_ms);
    out["llvm_optimize"] = num(st->optimize_ms);
    out["llvm_emit"] = num(st->emit_ms);
    out["llvm_wall"] = st->cache_hit ? "-" : fmt::format("{} ({} thread{})", num(st->compile_wall_ms), st->threads,
                                                        st->threads == 1 ? "" : "s");
    out["jit_cache"] = num(st->cache_ms);
    out["jit_link"] = num(st->link_ms);
    out["jit_cached"] = st->cache_hit ? "1" : "0";
    out["native_exprs"] = fmt::format("{}/{}", st->compiled, st->expressions);
    out["distinct_exprs"] = std::to_string(st->distinct);
    out["object_bytes"] = std::to_string(st->object_bytes);
  }
  out["total"] = num(ms_since(t0));
  for (const auto& [k, v] : out) std::cout << k << "\t" << v << "\n";
  return report.failed ? kTestsFailed : kOk;
}

// Runs `args` with stdout captured; false when it could not be started.
bool run_child(const std::vector<std::string>& args, std::string& out, int& status, double& wall_ms) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<char*> argv;
  for (const auto& s : args) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return false;
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  waitpid(pid, &status, 0);
  wall_ms = ms_since(t0);
  return true;
}

int check_timings(const Args& a, const culprit::AttributorConfig& engine) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string exe = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec) {
    std::cerr << "culprit check: cannot find my own executable for --timings\n";
    return kBadInput;
  }
  char tmpl[] = "/tmp/culprit-timings-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::cerr << "culprit check: cannot create a temporary cache directory\n";
    return kBadInput;
  }
  std::string dir = tmpl;
  std::vector<std::string> args = {exe, "check", "--timings-run", "--engine", engine.jit ? "jit" : "interp"};
  if (engine.jit_options.use_cache) args.insert(args.end(), {"--cache-dir", dir});
  else args.push_back("--no-cache");
  if (a.has("no-stdlib")) args.push_back("--no-stdlib");
  args.insert(args.end(), a.positionals.begin(), a.positionals.end());

  std::map<std::string, std::string> run[2];
  double wall[2] = {0, 0};
  int rc = kOk;
  for (int i = 0; i < 2 && rc == kOk; ++i) {
    std::string out;
    int status = 0;
    if (!run_child(args, out, status, wall[i])) {
      std::cerr << "culprit check: cannot run " << exe << "\n";
      rc = kBadInput;
      break;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = WIFEXITED(status) ? WEXITSTATUS(status) : kBadInput;
    size_t pos = 0;
    while (pos < out.size()) {
      size_t end = out.find('\n', pos);
      if (end == std::string::npos) end = out.size();
      std::string line = out.substr(pos, end - pos);
      size_t tab = line.find('\t');
      if (tab != std::string::npos) run[i][line.substr(0, tab)] = line.substr(tab + 1);
      pos = end + 1;
    }
  }
  fs::remove_all(dir, ec);
  if (rc != kOk && run[0].empty()) return rc;

  auto cell = [&](int i, const char* key) {
    auto it = run[i].find(key);
    return it == run[i].end() ? std::string("-") : it->second;
  };
  auto cached = [&](int i, const char* flag) { return cell(i, flag) == "1" ? " (cache hit)" : ""; };
  std::cout << fmt::format("{:<34} {:>22} {:>22}\n", "phase (ms)", "cold", "warm");
  auto row = [&](const std::string& name, const char* key, const char* hit_flag = nullptr) {
    std::string c = cell(0, key), w = cell(1, key);
    if (hit_flag) {
      c += cached(0, hit_flag);
      w += cached(1, hit_flag);
    }
    std::cout << fmt::format("{:<34} {:>22} {:>22}\n", name, c, w);
  };
  row("parse (ANTLR)", "parse");
  row("sema (types, regex checks) / image", "sema", "catalog_cached");
  row("Hyperscan compile / load", "hyperscan", "hyperscan_cached");
  if (engine.jit) {
    row("LLVM codegen (IR -> LLVM IR)*", "llvm_codegen");
    row("LLVM optimize*", "llvm_optimize");
    row("LLVM emit (machine code)*", "llvm_emit");
    row("  LLVM elapsed (parallel modules)", "llvm_wall");
    row("JIT cache read/write", "jit_cache", "jit_cached");
    row("JIT link + symbol lookup", "jit_link");
    row("native code total", "native");
  }
  row("self-tests (run, or record read)", "self_tests", "tests_recorded");
  row("in-process total", "total");
  std::cout << fmt::format("{:<34} {:>22.1f} {:>22.1f}\n", "process wall time", wall[0], wall[1]);
  std::cout << fmt::format("evaluator: {}", cell(0, "evaluator"));
  if (engine.jit)
    std::cout << fmt::format("; native expressions: {} ({} distinct); object code: {} bytes", cell(0, "native_exprs"),
                             cell(0, "distinct_exprs"), cell(0, "object_bytes"));
  std::cout << fmt::format("\nself-tests: {}\n", cell(0, "tests"));
  std::cout << fmt::format("query plans: {}\n", cell(0, "plans"));
  if (engine.jit) std::cout << "* summed over the threads that compile modules in parallel\n";
  return rc;
}

int cmd_check(int argc, char** argv) {
  ArgSpec spec = with_catalog_options({{"help", "timings", "timings-run", "explain"}, {"format"}}, false);
  Args a;
  std::string err;
  if (!culprit::cli::parse_args(argc, argv, 2, spec, a, err)) return usage_error("check", err);
  if (a.has("help")) {
    std::cout << kCheckHelp;
    return kOk;
  }
  culprit::AttributorConfig config;
  if (!catalog_config(a, a.positionals, config, err)) return usage_error("check", err);
  if (a.has("timings-run")) return timings_run(config);
  if (a.has("timings")) return check_timings(a, config);
  std::string format = a.last("format").value_or("text");
  if (format != "text" && format != "json") return usage_error("check", "--format must be text or json");
  const bool json = format == "json";
  if (json && a.has("explain")) return usage_error("check", "--explain prints text; it does not combine with --format json");
  culprit::AttributorStart start;
  std::shared_ptr<const culprit::Attributor> attributor;
  if (json) {
    config.self_test = false;
    attributor = culprit::Attributor::open(config, start);
  } else {
    attributor = open_attributor("check", config, false);
  }
  if (!attributor) {
    if (json) std::cout << culprit::cli::check_report_json(start, culprit::Diagnostics{}, nullptr);
    return kBadInput;
  }
  const auto& c = attributor->catalog();
  // Warnings about how the rules will run, not whether they compile: they
  // need the query plans, which exist only once the program is built.
  culprit::Diagnostics perf;
  // The bundled catalog's own nestings are over kinds a job has a few of;
  // what they cost is measured on every example against the budget
  // (docs/robustness.md), so only the rules given here are warned about.
  std::string bundled = a.has("no-stdlib") || c.parts.empty() ? std::string() : c.parts.front().root;
  if (!bundled.empty() && bundled.back() != '/') bundled += '/';
  culprit::plan::warn_unindexed_nesting(c, attributor->program()->query_plans(), perf, [&](const culprit::ir::Rule& r) {
    return !bundled.empty() && r.where.file && r.where.file->path.starts_with(bundled);
  });
  if (json) {
    std::cout << culprit::cli::check_report_json(start, perf, &c);
    return kOk;
  }
  if (!perf.all().empty()) std::cerr << perf.render(culprit::cli::auto_color(STDERR_FILENO));
  if (a.has("explain")) explain_plans(*attributor->program());
  std::vector<std::string> parts;
  for (const auto& p : c.parts) parts.push_back(p.version.empty() ? p.name : p.name + " " + p.version);
  std::cout << fmt::format("ok: catalog {} ({}): {} files, {} extractors, {} rules, {} scenarios\n", fmt::join(parts, " + "),
                           c.digest, c.files.size(), c.extractors.size(), c.rules.size(), c.scenarios.size());
  return kOk;
}

int cmd_version() {
  std::string catalog = "unavailable (the bundled catalog does not compile)";
  culprit::set_regex_verdict_cache(culprit::resolved_cache_dir({}));
  auto loaded = culprit::load_catalog({culprit::stdlib_directory()}, culprit::resolved_cache_dir({}));
  if (loaded.ok()) catalog = fmt::format("{} {} ({})", loaded.catalog->name, loaded.catalog->version, loaded.catalog->digest);
  // The active engine: the JIT unless $CULPRIT_ENGINE says otherwise or it cannot run here.
  std::string why;
  const char* env_engine = std::getenv("CULPRIT_ENGINE");
  bool interp = env_engine && (std::string(env_engine) == "interp" || std::string(env_engine) == "interpreter");
  std::string evaluator = !interp && culprit::jit_available(why) ? "jit" : "interpreter";
  std::cout << fmt::format("Culprit {}\ncatalog: {}\nANTLR runtime: {}\nHyperscan: {}\nRE2: {}\nPCRE2: {}\nLLVM: {}\nevaluator: {}\n",
                           CULPRIT_VERSION, catalog, culprit::antlr_runtime_version(), culprit::hyperscan_version(),
                           culprit::re2_version(), culprit::pcre2_version(), culprit::jit::llvm_version(), evaluator);
  return kOk;
}

int run(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kMainHelp;
    return kBadInput;
  }
  std::string cmd = argv[1];
  if (cmd == "help" && argc == 3 && std::string(argv[2]) != "help") {
    // `culprit help COMMAND` is `culprit COMMAND --help`.
    char help_flag[] = "--help";
    char* again[] = {argv[0], argv[2], help_flag, nullptr};
    return run(3, again);
  }
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << kMainHelp;
    return kOk;
  }
  if (cmd == "--version" || cmd == "version") return cmd_version();
  if (cmd == "serve") return culprit::cli::cmd_serve(argc, argv);
  if (cmd == "run") return culprit::cli::cmd_run(argc, argv);
  if (cmd == "dashboard") return culprit::cli::cmd_dashboard(argc, argv);
  if (cmd == "offenders") return culprit::cli::cmd_offenders(argc, argv);
  if (culprit::cli::wants_remote_diagnose(argc, argv)) return culprit::cli::cmd_diagnose_remote(argc, argv);
  if (cmd == "diagnose") return cmd_diagnose(argc, argv);
  if (cmd == "test") return culprit::cli::cmd_test(argc, argv);
  if (cmd == "check") return cmd_check(argc, argv);
  if (cmd == "eval") return culprit::cli::cmd_eval(argc, argv);
  if (cmd == "match") return culprit::cli::cmd_match(argc, argv);
  if (cmd == "fmt") return culprit::cli::cmd_fmt(argc, argv);
  if (cmd == "lsp") return culprit::cli::cmd_lsp(argc, argv);
  if (cmd == "export-patterns") return culprit::cli::cmd_export_patterns(argc, argv);
  std::string hint;
  if (auto m = culprit::closest_match(cmd, {"diagnose", "test", "check", "eval", "serve", "export-patterns", "match", "fmt", "lsp", "run", "dashboard", "offenders", "help"}))
    hint = fmt::format(" (did you mean '{}'?)", *m);
  std::cerr << fmt::format("culprit: unknown command '{}'{}\n\n{}", culprit::escape_for_terminal(cmd), hint, kMainHelp);
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
