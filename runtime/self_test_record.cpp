#include "runtime/self_test_record.h"

#include <fmt/format.h>

#include <string_view>

#include "base/build_id.h"
#include "base/sha256.h"
#include "compiler/jit/cache.h"
#include "compiler/regex_check.h"
#include "runtime/capture_regex.h"
#include "runtime/native_code.h"

namespace culprit {

namespace {
// The entry's format; a change of the payload's layout bumps it.
constexpr const char* kRecordFormat = "culprit-selftest-2";
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
  return fmt::format("{}\nbuild {}\nculprit {}\nregex {}\npcre2 {}\ncatalog {}\nfiles {}\nscan {}\ncode {}\n",
                     kRecordFormat, build, CULPRIT_VERSION, regex_engines_identity(), pcre2_identity(), catalog.digest,
                     sha256_hex(files), sha256_hex(program.scan_cache_key()), code);
}

namespace {

// The payload: a format line, then per result its kind, name, location and
// file, each as "<length>:<bytes>". That is what start-up reports of a test
// (counts; the service's catalog lists each test and where it is); what a
// test exercised (for rule coverage) is not kept: `culprit test` runs them.
// Plain lengths and bytes: 536 results read in well under a millisecond.
constexpr std::string_view kPayloadHead = "culprit self-test record 1\n";

void put_field(std::string& out, std::string_view v) {
  out += std::to_string(v.size());
  out += ':';
  out += v;
}

bool take_field(std::string_view& in, std::string& out) {
  size_t colon = in.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 9) return false;
  size_t n = 0;
  for (char c : in.substr(0, colon)) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  in.remove_prefix(colon + 1);
  if (n > in.size()) return false;
  out.assign(in.substr(0, n));
  in.remove_prefix(n);
  return true;
}

}  // namespace

bool load_self_test_record(const std::string& cache_dir, const std::string& key, TestReport& out, std::string& note) {
  note.clear();
  if (cache_dir.empty() || key.empty()) return false;
  std::string payload;
  if (!cache::load(cache_dir, "selftest", key, payload, note)) return false;
  std::string_view in(payload);
  if (in.substr(0, kPayloadHead.size()) != kPayloadHead) {
    note = "the record does not parse";
    return false;
  }
  in.remove_prefix(kPayloadHead.size());
  TestReport report;
  report.recorded = true;
  while (!in.empty()) {
    TestResult t;
    if (!take_field(in, t.kind) || !take_field(in, t.name) || !take_field(in, t.location) || !take_field(in, t.file) ||
        t.kind.empty() || t.name.empty()) {
      note = "the record does not parse";
      return false;
    }
    t.passed = true;
    report.results.push_back(std::move(t));
  }
  if (report.results.empty()) {
    note = "the record does not parse";
    return false;
  }
  report.passed = report.results.size();
  out = std::move(report);
  return true;
}

bool store_self_test_record(const std::string& cache_dir, const std::string& key, const TestReport& report,
                            std::string& note) {
  note.clear();
  if (cache_dir.empty() || key.empty()) return false;
  std::string payload(kPayloadHead);
  for (const auto& r : report.results) {
    if (!r.passed || report.failed > 0) {
      note = "only a report in which every test passed is recorded";
      return false;
    }
    for (const std::string* f : {&r.kind, &r.name, &r.location, &r.file}) put_field(payload, *f);
  }
  if (report.results.empty()) {
    note = "only a report in which every test passed is recorded";
    return false;
  }
  return cache::store(cache_dir, "selftest", key, payload, note);
}

}  // namespace culprit
