#include "runtime/self_test_record.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/build_id.h"
#include "base/sha256.h"
#include "compiler/jit/cache.h"
#include "runtime/capture_regex.h"
#include "runtime/native_code.h"

namespace culprit {

namespace {
// The entry's format; a change of the payload's layout bumps it.
constexpr const char* kRecordFormat = "culprit-selftest-1";
}  // namespace

std::string self_test_record_key(const Program& program) {
  const std::string& build = build_id();
  if (build.empty() || program.scan_cache_key().empty()) return "";
  const ir::Catalog& catalog = program.catalog();
  std::string code = "interpreter";
  if (program.native()) {
    const jit::Stats* st = native_stats(program.native());
    // Code that was not hashed cannot be named, so its results are not kept.
    if (!st || st->code_digest.empty()) return "";
    code = "jit " + st->code_digest;
  }
  // Test locations name the rule files as they were loaded, so the paths are
  // part of the key as well as the digest of their contents.
  std::string files;
  for (const auto& f : catalog.files) files += fmt::format("{} {}\n", f.size(), f);
  return fmt::format("{}\nbuild {}\nculprit {}\nhyperscan {}\nre2 {}\npcre2 {}\ncatalog {}\nfiles {}\nscan {}\ncode {}\n",
                     kRecordFormat, build, CULPRIT_VERSION, hyperscan_version(), re2_version(), pcre2_version(),
                     catalog.digest, sha256_hex(files), sha256_hex(program.scan_cache_key()), code);
}

bool load_self_test_record(const std::string& cache_dir, const std::string& key, TestReport& out, std::string& note) {
  note.clear();
  if (cache_dir.empty() || key.empty()) return false;
  std::string payload;
  if (!cache::load(cache_dir, "selftest", key, payload, note)) return false;
  nlohmann::json j = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("results") || !j["results"].is_array()) {
    note = "the record does not parse";
    return false;
  }
  TestReport report;
  report.recorded = true;
  for (const auto& r : j["results"]) {
    if (!r.is_object()) {
      note = "the record does not parse";
      return false;
    }
    TestResult t;
    t.kind = r.value("kind", "");
    t.name = r.value("name", "");
    t.location = r.value("location", "");
    t.file = r.value("file", "");
    t.ms = r.value("ms", 0.0);
    t.passed = true;
    for (const char* list : {"extractors_matched", "rules_acted"}) {
      auto it = r.find(list);
      if (it == r.end() || !it->is_array()) continue;
      auto& dst = std::string_view(list) == "rules_acted" ? t.rules_acted : t.extractors_matched;
      for (const auto& v : *it)
        if (v.is_string()) dst.push_back(v.get<std::string>());
    }
    if (t.kind.empty() || t.name.empty()) {
      note = "the record does not parse";
      return false;
    }
    report.results.push_back(std::move(t));
  }
  report.passed = report.results.size();
  out = std::move(report);
  return true;
}

bool store_self_test_record(const std::string& cache_dir, const std::string& key, const TestReport& report,
                            std::string& note) {
  note.clear();
  if (cache_dir.empty() || key.empty()) return false;
  if (report.failed > 0 || report.results.empty()) {
    note = "only a report in which every test passed is recorded";
    return false;
  }
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : report.results) {
    if (!r.passed) {
      note = "only a report in which every test passed is recorded";
      return false;
    }
    results.push_back({{"kind", r.kind}, {"name", r.name}, {"location", r.location}, {"file", r.file}, {"ms", r.ms},
                       {"extractors_matched", r.extractors_matched}, {"rules_acted", r.rules_acted}});
  }
  nlohmann::json j = {{"results", std::move(results)}};
  return cache::store(cache_dir, "selftest", key, j.dump(), note);
}

}  // namespace culprit
