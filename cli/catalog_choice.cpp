#include "cli/catalog_choice.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/text_output.h"

namespace culprit::cli {

ArgSpec with_catalog_options(ArgSpec spec, bool rules_option) {
  spec.flags.insert({"no-stdlib", "no-cache"});
  spec.options.insert({"engine", "cache-dir"});
  if (rules_option) spec.options.insert("rules");
  return spec;
}

bool catalog_config(const Args& a, const std::vector<std::string>& extra_paths, AttributorConfig& out, std::string& err) {
  std::string engine = a.last("engine").value_or("");
  if (engine.empty())
    if (const char* e = std::getenv("CULPRIT_ENGINE"); e && *e) engine = e;
  if (engine.empty()) engine = "jit";
  if (engine != "jit" && engine != "interp" && engine != "interpreter") {
    err = "--engine must be jit or interp";
    return false;
  }
  out.jit = engine == "jit";
  out.jit_options.use_cache = !a.has("no-cache");
  if (auto d = a.last("cache-dir")) out.jit_options.cache_dir = *d;

  namespace fs = std::filesystem;
  std::error_code ec;
  bool stdlib = !a.has("no-stdlib");
  std::string std_dir = stdlib_directory();
  fs::path std_canon = fs::weakly_canonical(std_dir, ec);
  out.rule_paths.clear();
  if (stdlib) out.rule_paths.push_back(std_dir);
  std::vector<std::string> extra = a.all("rules");
  extra.insert(extra.end(), extra_paths.begin(), extra_paths.end());
  for (const auto& p : extra) {
    if (stdlib && fs::weakly_canonical(p, ec) == std_canon) continue;
    out.rule_paths.push_back(p);
  }
  if (out.rule_paths.empty()) {
    err = "no rules to load (give a rule PATH or drop --no-stdlib)";
    return false;
  }
  return true;
}

std::shared_ptr<const Attributor> open_attributor(const std::string& cmd, AttributorConfig config, bool self_test,
                                                  const std::string& refusal, AttributorStart* start_out) {
  config.self_test = self_test;
  AttributorStart start;
  auto attributor = Attributor::open(config, start);
  if (!start.diagnostics.all().empty()) std::cerr << start.diagnostics.render(auto_color(STDERR_FILENO));
  if (!start.warning.empty()) std::cerr << fmt::format("culprit {}: warning: {}\n", cmd, start.warning);
  if (start.self_test)
    for (const auto& r : start.self_test->results)
      if (!r.passed) std::cerr << fmt::format("{}: FAIL {} {}: {}\n", r.location, r.kind, r.name, r.message);
  if (!attributor) {
    std::string hint = start.self_test && start.self_test->failed && !refusal.empty() ? "; " + refusal : "";
    std::cerr << fmt::format("culprit {}: {}{}\n", cmd, start.error, hint);
  }
  if (start_out) *start_out = std::move(start);
  return attributor;
}

}  // namespace culprit::cli
