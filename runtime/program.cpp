#include "runtime/program.h"

#include <fmt/format.h>
#include <hs/hs.h>
#include <re2/filtered_re2.h>
#include <re2/re2.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <system_error>

#include "runtime/capture_regex.h"

#include "compiler/jit/cache.h"
#include "compiler/regex_check.h"

namespace culprit {

namespace {

using SourceIds = std::map<std::string, std::vector<int32_t>>;

// Atoms shorter than this are too common to filter on (FilteredRE2 then
// looks for longer alternatives, or leaves the regex unfiltered).
constexpr int kMinAtomLength = 3;

// What Hyperscan compiles for one source: atoms first, then the regexes of
// unfiltered extractors.
struct ScanPlan {
  std::shared_ptr<re2::FilteredRE2> filter;
  std::vector<std::string> atoms;       // all of the filter's atoms
  std::vector<int> scanned, implied;    // atom indices: scanned for (by Hyperscan id), taken as present
  std::vector<int32_t> unfiltered;      // local indices
  std::vector<std::string> patterns;    // Hyperscan syntax, by Hyperscan id
  std::vector<unsigned> flags;
};

std::string literal_pattern(const std::string& atom) {
  // Every byte that is not alphanumeric is written as \xHH: no regex meaning survives.
  std::string out;
  for (unsigned char c : atom) out += std::isalnum(c) ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  return out;
}

// A regex's literal text, lowercased, its escapes undone ("NET\/IB" ->
// "net/ib"): near enough to tell which atoms a regex spells out, which is all
// choose_atoms asks of it.
std::string lowered_literal_text(const std::string& pattern) {
  std::string out;
  out.reserve(pattern.size());
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size() && !std::isalnum(static_cast<unsigned char>(pattern[i + 1]))) c = pattern[++i];
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// Which atoms Hyperscan looks for (see SourceDatabase). Greedy: an atom is
// left out if, with it and every atom left out so far taken as present, the
// filter still names no filtered extractor. Each such extractor then still
// needs a scanned atom on its lines, so none is missed whatever the order;
// the order decides how many benign lines become candidates. Tried first
// (left out first) are the atoms that most of the source's regexes share:
// a literal many extractors spell is the log format's own vocabulary ("nccl
// info ", "kernel: ", "mlx5_core") and is on most lines, while a literal of
// one extractor alone is its message and rare. Then the shortest (common
// words), then by text, so the choice is deterministic. Length alone chose
// "nccl info " (10 bytes, on a quarter to most of an NCCL_DEBUG=INFO log's
// lines) over "bootstrap" (9), and the scan ran at a third of its speed.
// Cost: one filter query per atom, once.
void choose_atoms(ScanPlan& plan, const std::vector<std::string>& regex_texts) {
  // Every atom comes from at least one regex, even where the text does not
  // spell it ("[Ss]tep " gives the atom "step ").
  std::vector<int> shared(plan.atoms.size(), 0);
  for (size_t a = 0; a < plan.atoms.size(); ++a) {
    for (const auto& text : regex_texts) shared[a] += text.find(plan.atoms[a]) != std::string::npos;
    shared[a] = std::max(shared[a], 1);
  }
  std::vector<int> order(plan.atoms.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const auto &x = plan.atoms[static_cast<size_t>(a)], &y = plan.atoms[static_cast<size_t>(b)];
    int sx = shared[static_cast<size_t>(a)], sy = shared[static_cast<size_t>(b)];
    if (sx != sy) return sx > sy;
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  std::vector<int> trial, found;
  for (int a : order) {
    trial = plan.implied;
    trial.insert(std::lower_bound(trial.begin(), trial.end(), a), a);
    plan.filter->AllPotentials(trial, &found);
    bool gated = std::all_of(found.begin(), found.end(), [&](int local) {
      return std::binary_search(plan.unfiltered.begin(), plan.unfiltered.end(), local);
    });
    if (gated) plan.implied = std::move(trial);
  }
  for (int a = 0; a < static_cast<int>(plan.atoms.size()); ++a)
    if (!std::binary_search(plan.implied.begin(), plan.implied.end(), a)) plan.scanned.push_back(a);
}

bool plan_source(const ir::Catalog& catalog, const std::vector<int32_t>& ids, ScanPlan& plan, std::string& error) {
  plan.filter = std::make_shared<re2::FilteredRE2>(kMinAtomLength);
  for (int32_t id : ids) {
    const auto& x = catalog.extractors[static_cast<size_t>(id)];
    RE2::Options opt;
    opt.set_log_errors(false);
    opt.set_case_sensitive(!x.caseless);
    opt.set_dot_nl(x.dotall);
    opt.set_encoding(RE2::Options::EncodingLatin1);
    int local = 0;
    if (plan.filter->Add(x.re2_pattern, opt, &local) != RE2::NoError) {
      error = fmt::format("extractor '{}': RE2 rejects its regex", x.name);
      return false;
    }
  }
  plan.filter->Compile(&plan.atoms);
  // With no atom at all, FilteredRE2 reports exactly the unfiltered regexes.
  plan.filter->AllPotentials({}, &plan.unfiltered);
  std::sort(plan.unfiltered.begin(), plan.unfiltered.end());
  std::vector<std::string> regex_texts;
  for (int32_t id : ids) regex_texts.push_back(lowered_literal_text(catalog.extractors[static_cast<size_t>(id)].re2_pattern));
  choose_atoms(plan, regex_texts);
  for (int a : plan.scanned) {
    plan.patterns.push_back(literal_pattern(plan.atoms[static_cast<size_t>(a)]));
    plan.flags.push_back(HS_FLAG_CASELESS);  // atoms are lowercased
  }
  for (int32_t local : plan.unfiltered) {
    const auto& x = catalog.extractors[static_cast<size_t>(ids[static_cast<size_t>(local)])];
    plan.patterns.push_back(to_hyperscan_syntax(x.pattern));
    plan.flags.push_back(hyperscan_flags(x.caseless, x.dotall));
  }
  return true;
}

// The Hyperscan cache key: the library, the host platform it compiles for,
// and every compiled pattern with its flags, per source, in database order.
std::string hyperscan_cache_key(const std::map<std::string, ScanPlan>& plans) {
  hs_platform_info_t platform{};
  hs_populate_platform(&platform);
  std::string key = fmt::format("culprit-hs-2\n{}\ntune {} features {}\n", hs_version(), platform.tune, platform.cpu_features);
  for (const auto& [source, plan] : plans) {
    key += fmt::format("source {} {}\n", source.size(), source);
    for (size_t i = 0; i < plan.patterns.size(); ++i)
      key += fmt::format("{} {} {}\n", plan.flags[i], plan.patterns[i].size(), plan.patterns[i]);
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
  // Native code needs only the catalog: it is built (or, warm, read from the
  // cache and linked) on its own thread while this one compiles the regexes
  // and builds the Hyperscan databases. A warm start is otherwise one thread
  // of work on a machine with more than one core. The future is declared
  // after everything the task reads, so an early return waits for it first.
  std::string native_why;
  double native_ms = 0;
  auto native_start = std::chrono::steady_clock::now();
  auto build_native = [&]() -> std::shared_ptr<const NativeCode> {
    auto code = native(*catalog, native_why);
    native_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - native_start).count();
    return code;
  };
  std::future<std::shared_ptr<const NativeCode>> native_code;
  if (native) {
    try {
      native_code = std::async(std::launch::async, build_native);
    } catch (const std::system_error&) {
      // No thread to be had: built on this one at the end.
    }
  }
  p->plans_ = plan::plan_catalog(*catalog);
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
    p->extractor_captures_.push_back(std::make_unique<CaptureRegex>(*re, x.re2_pattern, x.caseless, x.dotall));
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
  std::map<std::string, ScanPlan> plans;
  for (const auto& [source, ids] : by_source)
    if (!plan_source(*catalog, ids, plans[source], error)) return nullptr;
  std::string hs_key;
  std::vector<hs_database_t*> cached;  // one per source when the cache has them
  if (!cache_dir.empty()) {
    hs_key = hyperscan_cache_key(plans);
    p->timings_.hyperscan_cached = load_databases(cache_dir, hs_key, by_source, cached, p->timings_.hyperscan_cache_note);
    if (p->timings_.hyperscan_cached) p->timings_.hyperscan_cache_note.clear();
  }
  size_t next_cached = 0;
  auto free_unused = [&]() {
    for (size_t i = next_cached; i < cached.size(); ++i) hs_free_database(cached[i]);
  };
  for (auto& [source, ids] : by_source) {
    ScanPlan& plan = plans[source];
    std::vector<const char*> patterns;
    std::vector<unsigned> hs_ids;
    for (size_t k = 0; k < plan.patterns.size(); ++k) {
      patterns.push_back(plan.patterns[k].c_str());
      hs_ids.push_back(static_cast<unsigned>(k));
    }
    const std::vector<unsigned>& flags = plan.flags;
    hs_database_t* db = nullptr;
    hs_compile_error_t* err = nullptr;
    if (next_cached < cached.size()) {
      db = cached[next_cached++];
    } else if (hs_compile_multi(patterns.data(), flags.data(), hs_ids.data(), static_cast<unsigned>(patterns.size()),
                         HS_MODE_BLOCK, nullptr, &db, &err) != HS_SUCCESS) {
      int bad = err ? err->expression : -1;
      std::string what;
      if (bad >= 0 && bad < static_cast<int>(plan.scanned.size()))
        what = " (atom '" + plan.atoms[static_cast<size_t>(plan.scanned[static_cast<size_t>(bad)])] + "')";
      else if (bad >= 0)
        what = " (extractor " + catalog->extractors[static_cast<size_t>(ids[static_cast<size_t>(plan.unfiltered[static_cast<size_t>(bad) - plan.scanned.size()])])].name + ")";
      error = fmt::format("Hyperscan database for source '{}': {}{}", source, err && err->message ? err->message : "failed", what);
      hs_free_compile_error(err);
      return nullptr;
    }
    if (hs_alloc_scratch(db, &p->scratch_) != HS_SUCCESS) {
      hs_free_database(db);
      free_unused();
      error = "cannot allocate Hyperscan scratch";
      return nullptr;
    }
    SourceDatabase sd;
    sd.source = source;
    sd.db = db;
    sd.extractors = ids;
    sd.filter = plan.filter;
    sd.atom_count = static_cast<int32_t>(plan.scanned.size());
    sd.atom_index = plan.scanned;
    sd.implied_atoms = plan.implied;
    sd.unfiltered = plan.unfiltered;
    sd.atoms = plan.atoms;
    p->databases_.push_back(std::move(sd));
  }
  if (!cache_dir.empty() && !p->timings_.hyperscan_cached)
    store_databases(cache_dir, hs_key, p->databases_, p->timings_.hyperscan_cache_note);
  p->scan_cache_key_ = std::move(hs_key);
  p->timings_.hyperscan_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - hs_start).count();
  if (native) {
    p->native_ = native_code.valid() ? native_code.get() : build_native();
    if (!p->native_) p->native_warning_ = native_why;
    p->timings_.native_ms = native_ms;
  }
  return p;
}

}  // namespace culprit
