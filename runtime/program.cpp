#include "runtime/program.h"

#include <fmt/format.h>
#include <hs/hs.h>
#include <re2/re2.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>

#include "compiler/jit/cache.h"
#include "compiler/regex_check.h"

namespace culprit {

namespace {

using SourceIds = std::map<std::string, std::vector<int32_t>>;

// The Hyperscan cache key: the library, the host platform it compiles for,
// and every pattern with its flags, per source, in database order.
std::string hyperscan_cache_key(const ir::Catalog& catalog, const SourceIds& by_source) {
  hs_platform_info_t platform{};
  hs_populate_platform(&platform);
  std::string key = fmt::format("culprit-hs-1\n{}\ntune {} features {}\n", hs_version(), platform.tune, platform.cpu_features);
  for (const auto& [source, ids] : by_source) {
    key += fmt::format("source {} {}\n", source.size(), source);
    for (int32_t id : ids) {
      const auto& x = catalog.extractors[static_cast<size_t>(id)];
      std::string hs_pattern = to_hyperscan_syntax(x.pattern);
      key += fmt::format("{} {} {}\n", hyperscan_flags(x.caseless, x.dotall), hs_pattern.size(), hs_pattern);
    }
  }
  return key;
}

void put_bytes(std::string& out, std::string_view s) {
  uint64_t n = s.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(s);
}

bool take_bytes(std::string_view& in, std::string_view& out) {
  uint64_t n = 0;
  if (in.size() < sizeof n) return false;
  std::memcpy(&n, in.data(), sizeof n);
  in.remove_prefix(sizeof n);
  if (n > in.size()) return false;
  out = in.substr(0, n);
  in.remove_prefix(n);
  return true;
}

// Loads one database per source, in `by_source` order; all or nothing.
bool load_databases(const std::string& dir, const std::string& key, const SourceIds& by_source,
                    std::vector<hs_database_t*>& dbs, std::string& note) {
  std::string payload;
  if (!cache::load(dir, "hyperscan", key, payload, note)) {
    if (note.empty()) note = "miss";
    return false;
  }
  std::string_view in = payload;
  bool ok = true;
  for (const auto& [source, ids] : by_source) {
    std::string_view name, bytes;
    hs_database_t* db = nullptr;
    ok = take_bytes(in, name) && name == source && take_bytes(in, bytes) &&
         hs_deserialize_database(bytes.data(), bytes.size(), &db) == HS_SUCCESS;
    if (!ok) break;
    dbs.push_back(db);
  }
  if (ok && in.empty()) return true;
  for (auto* db : dbs) hs_free_database(db);
  dbs.clear();
  note = "cached databases do not deserialize";
  return false;
}

void store_databases(const std::string& dir, const std::string& key, const std::vector<Program::SourceDatabase>& dbs,
                     std::string& note) {
  std::string payload;
  for (const auto& d : dbs) {
    char* bytes = nullptr;
    size_t length = 0;
    if (hs_serialize_database(d.db, &bytes, &length) != HS_SUCCESS) {
      note = "cannot serialize a Hyperscan database";
      return;
    }
    put_bytes(payload, d.source);
    put_bytes(payload, std::string_view(bytes, length));
    std::free(bytes);
  }
  if (!cache::store(dir, "hyperscan", key, payload, note)) note = "not stored: " + note;
}

}  // namespace

std::string hyperscan_version() {
  std::string v = hs_version();
  auto sp = v.find(' ');
  return sp == std::string::npos ? v : v.substr(0, sp);
}

std::string re2_version() {
  // RE2 exposes no version at run time; this is the Debian package's release.
  return "2022-06-01";
}

Program::~Program() {
  for (auto& d : databases_) hs_free_database(d.db);
  hs_free_scratch(scratch_);
}

const Program::SourceDatabase* Program::database_for(std::string_view source) const {
  auto it = std::lower_bound(databases_.begin(), databases_.end(), source,
                             [](const SourceDatabase& d, std::string_view s) { return d.source < s; });
  return it != databases_.end() && it->source == source ? &*it : nullptr;
}

std::shared_ptr<const Program> Program::build(std::shared_ptr<const ir::Catalog> catalog, std::string& error,
                                              const NativeCodeFactory& native, const std::string& cache_dir) {
  std::shared_ptr<Program> p(new Program());
  p->catalog_ = catalog;
  std::map<std::string, std::vector<int32_t>> by_source;
  for (size_t i = 0; i < catalog->extractors.size(); ++i) {
    const auto& x = catalog->extractors[i];
    for (const auto& s : x.sources) by_source[s].push_back(static_cast<int32_t>(i));
    RE2::Options opt;
    opt.set_log_errors(false);
    opt.set_case_sensitive(!x.caseless);
    opt.set_dot_nl(x.dotall);
    // Log lines are bytes, not necessarily UTF-8; Latin-1 mode matches any byte.
    opt.set_encoding(RE2::Options::EncodingLatin1);
    auto re = std::make_unique<RE2>(x.re2_pattern, opt);
    if (!re->ok()) {
      error = fmt::format("extractor '{}': RE2: {}", x.name, re->error());
      return nullptr;
    }
    p->extractor_regexes_.push_back(std::move(re));
  }
  for (const auto& r : catalog->regexes) {
    RE2::Options opt;
    opt.set_log_errors(false);
    opt.set_case_sensitive(!r.caseless);
    opt.set_dot_nl(r.dotall);
    p->expression_regexes_.push_back(std::make_unique<RE2>(r.pattern, opt));
  }
  auto hs_start = std::chrono::steady_clock::now();
  std::string hs_key;
  std::vector<hs_database_t*> cached;  // one per source when the cache has them
  if (!cache_dir.empty()) {
    hs_key = hyperscan_cache_key(*catalog, by_source);
    p->timings_.hyperscan_cached = load_databases(cache_dir, hs_key, by_source, cached, p->timings_.hyperscan_cache_note);
    if (p->timings_.hyperscan_cached) p->timings_.hyperscan_cache_note.clear();
  }
  size_t next_cached = 0;
  auto free_unused = [&]() {
    for (size_t i = next_cached; i < cached.size(); ++i) hs_free_database(cached[i]);
  };
  for (auto& [source, ids] : by_source) {
    std::vector<std::string> hs_patterns;
    std::vector<const char*> patterns;
    std::vector<unsigned> flags, hs_ids;
    for (int32_t id : ids) hs_patterns.push_back(to_hyperscan_syntax(catalog->extractors[static_cast<size_t>(id)].pattern));
    for (size_t k = 0; k < ids.size(); ++k) {
      const auto& x = catalog->extractors[static_cast<size_t>(ids[k])];
      patterns.push_back(hs_patterns[k].c_str());
      flags.push_back(hyperscan_flags(x.caseless, x.dotall));
      hs_ids.push_back(static_cast<unsigned>(k));
    }
    hs_database_t* db = nullptr;
    hs_compile_error_t* err = nullptr;
    if (next_cached < cached.size()) {
      db = cached[next_cached++];
    } else if (hs_compile_multi(patterns.data(), flags.data(), hs_ids.data(), static_cast<unsigned>(patterns.size()),
                         HS_MODE_BLOCK, nullptr, &db, &err) != HS_SUCCESS) {
      int bad = err ? err->expression : -1;
      error = fmt::format("Hyperscan database for source '{}': {}{}", source, err && err->message ? err->message : "failed",
                          bad >= 0 ? " (extractor " + catalog->extractors[static_cast<size_t>(ids[static_cast<size_t>(bad)])].name + ")" : "");
      hs_free_compile_error(err);
      return nullptr;
    }
    if (hs_alloc_scratch(db, &p->scratch_) != HS_SUCCESS) {
      hs_free_database(db);
      free_unused();
      error = "cannot allocate Hyperscan scratch";
      return nullptr;
    }
    p->databases_.push_back({source, db, ids});
  }
  if (!cache_dir.empty() && !p->timings_.hyperscan_cached)
    store_databases(cache_dir, hs_key, p->databases_, p->timings_.hyperscan_cache_note);
  p->timings_.hyperscan_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - hs_start).count();
  if (native) {
    auto native_start = std::chrono::steady_clock::now();
    p->native_ = native(*catalog, p->native_warning_);
    if (p->native_) p->native_warning_.clear();
    p->timings_.native_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - native_start).count();
  }
  return p;
}

}  // namespace culprit
