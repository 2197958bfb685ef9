#include "runtime/attributor.h"

#include <fmt/format.h>

#include "compiler/regex_check.h"

namespace culprit {

std::shared_ptr<const Attributor> Attributor::open(const AttributorConfig& config, AttributorStart& start) {
  if (config.rule_paths.empty()) {
    start.error = "no rules to load";
    return nullptr;
  }
  std::string cache_dir = resolved_cache_dir(config.jit_options);
  // Regex verdicts (Hyperscan and RE2 acceptance) are cached with the rest.
  set_regex_verdict_cache(cache_dir);
  LoadedCatalog loaded = load_catalog(config.rule_paths);
  start.parse_ms = loaded.parse_ms;
  start.sema_ms = loaded.sema_ms;
  start.diagnostics = std::move(loaded.diagnostics);
  if (!loaded.ok()) {
    size_t n = start.diagnostics.error_count();
    start.error = fmt::format("the rules do not compile ({} error{})", n, n == 1 ? "" : "s");
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
    start.self_test = run_inline_tests(program);
    if (start.self_test->failed > 0) {
      start.error = fmt::format("the catalog fails {} of its {} inline tests", start.self_test->failed,
                                start.self_test->results.size());
      return nullptr;
    }
  }
  return std::make_shared<const Attributor>(std::move(program));
}

bool Attributor::attribute(DiagnoseRequest&& evidence, const DiagnoseOptions& options, Verdict& out,
                           std::string& error) const {
  return diagnose(program_, std::move(evidence), options, out, error);
}

}  // namespace culprit
