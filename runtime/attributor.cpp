#include "runtime/attributor.h"

#include <fmt/format.h>

#include <chrono>
#include <future>
#include <system_error>

#include "compiler/regex_check.h"
#include "runtime/self_test_record.h"

namespace culprit {

namespace {
// The directories of the catalog's parts, in load order.
std::vector<std::string> root_paths(const ir::Catalog& c) {
  std::vector<std::string> out;
  for (const auto& p : c.parts) out.push_back(p.root);
  return out;
}
}  // namespace

std::shared_ptr<const Attributor> Attributor::open(const AttributorConfig& config, AttributorStart& start) {
  if (config.rule_paths.empty()) {
    start.error = "no rules to load";
    return nullptr;
  }
  std::string cache_dir = resolved_cache_dir(config.jit_options);
  // Regex verdicts (Hyperscan and RE2 acceptance) are cached with the rest.
  set_regex_verdict_cache(cache_dir);
  // Setting up LLVM's native target and the JIT session takes a few
  // milliseconds that need no catalog: done on another core while this one
  // loads the rules. (The future waits for it on every return.)
  std::future<void> jit_ready;
  if (config.jit) {
    try {
      jit_ready = std::async(std::launch::async, [] {
        std::string why;
        static_cast<void>(jit_available(why));
      });
    } catch (const std::system_error&) {
      // No thread: the first compile sets it up.
    }
  }
  LoadedCatalog loaded = load_catalog(config.rule_paths, cache_dir);
  start.parse_ms = loaded.parse_ms;
  start.sema_ms = loaded.sema_ms;
  start.catalog_from_image = loaded.from_image;
  start.diagnostics = std::move(loaded.diagnostics);
  if (!loaded.ok()) {
    size_t n = start.diagnostics.error_count();
    start.error = fmt::format("the rules do not compile ({} error{})", n, n == 1 ? "" : "s");
    return nullptr;
  }
  // The recovery tables load before anything is compiled to native code:
  // a table that does not parse refuses the catalog as a rule would.
  auto recovery = load_recovery_table(root_paths(*loaded.catalog), start.diagnostics, loaded.catalog.get());
  if (!recovery) {
    size_t n = start.diagnostics.error_count();
    start.error = fmt::format("the recovery table does not load ({} error{})", n, n == 1 ? "" : "s");
    return nullptr;
  }
  std::string error;
  auto program = Program::build(loaded.catalog, error, config.jit ? jit_factory(config.jit_options) : NativeCodeFactory{},
                                cache_dir);
  if (!program) {
    start.error = error;
    return nullptr;
  }
  if (config.jit && !program->native())
    start.warning = fmt::format("the JIT is unavailable ({}); using the interpreter", program->native_warning());
  if (config.self_test) {
    auto t0 = std::chrono::steady_clock::now();
    std::string record_key = config.self_test_record && !cache_dir.empty() ? self_test_record_key(*program) : "";
    TestReport recorded;
    std::string note;
    if (load_self_test_record(cache_dir, record_key, recorded, note)) {
      start.self_test = std::move(recorded);
    } else {
      start.self_test = run_inline_tests(program);
      // A record that cannot be written only costs the next start-up the tests.
      if (start.self_test->failed == 0) store_self_test_record(cache_dir, record_key, *start.self_test, note);
    }
    start.self_test_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (start.self_test->failed > 0) {
      start.error = fmt::format("the catalog fails {} of its {} inline tests", start.self_test->failed,
                                start.self_test->results.size());
      return nullptr;
    }
  }
  return std::make_shared<const Attributor>(std::move(program), std::move(recovery));
}

EngineInfo Attributor::info() const {
  EngineInfo e = engine_info(*program_);
  e.recovery_digest = recovery_->digest;
  return e;
}

bool Attributor::attribute(DiagnoseRequest&& evidence, const DiagnoseOptions& options, Verdict& out,
                           std::string& error) const {
  if (!diagnose(program_, std::move(evidence), options, out, error)) return false;
  out.recommendation = recommend(out, *recovery_);
  out.engine.recovery_digest = recovery_->digest;
  return true;
}

}  // namespace culprit
