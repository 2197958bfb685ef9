// A catalog ready to run: the IR plus everything compiled from it once.
//
// Building a Program compiles one Hyperscan database per log source (all the
// extractors reading that source, in one database), one RE2 per extractor
// (and, where it means the same, a PCRE2 JIT program for its captures:
// runtime/capture_regex.h), and the RE2 objects of `matches` expressions. It is immutable
// afterwards and shared by all threads; per-thread scan state (Hyperscan
// scratch) lives in Scanner objects.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir.h"
#include "compiler/query_plan.h"

struct hs_database;
struct hs_scratch;
namespace re2 { class RE2; class FilteredRE2; }

namespace culprit {

class CaptureRegex;
class NativeCode;

// Builds native code for a catalog (the JIT). Returns null, with a message in
// `why`, when it cannot; the Program then interprets everything.
using NativeCodeFactory = std::function<std::shared_ptr<const NativeCode>(const ir::Catalog&, std::string& why)>;

class Program {
 public:
  // How one log source is scanned. Hyperscan does not run the extractors'
  // regexes: it looks for their atoms (literal strings every match must
  // contain, found by RE2's FilteredRE2), case-insensitively, in one pass.
  // A line with atoms is a candidate; `filter` turns its atoms into the
  // extractors that may match, whose RE2 then decides and takes captures.
  // An extractor with no usable atom is "unfiltered": its full regex is in
  // the same database, and a hit names it directly.
  // Not every atom is scanned for: where a regex needs several atoms at once
  // (an AND in its filter), one finds its lines, so the shorter (common)
  // ones are left out as long as every filtered extractor still needs a
  // scanned atom. The atoms left out count as present on every candidate
  // line (`implied_atoms`); the filter is monotone, so it stays a superset of
  // the matches, while benign lines holding a frequent word ("step ", " ip")
  // are no longer candidates and the database has fewer literals.
  struct SourceDatabase {
    std::string source;
    hs_database* db = nullptr;
    std::vector<int32_t> extractors;   // local index -> extractor index in the catalog
    std::shared_ptr<const re2::FilteredRE2> filter;  // atoms -> local indices; const, thread-safe
    int32_t atom_count = 0;            // Hyperscan ids [0, atom_count) are scanned atoms
    std::vector<int> atom_index;       // Hyperscan id k < atom_count -> the filter's atom index
    std::vector<int> implied_atoms;    // the filter's atoms not scanned for, sorted
    std::vector<int32_t> unfiltered;   // Hyperscan id atom_count + k -> local index unfiltered[k]
    std::vector<std::string> atoms;    // all of the filter's atoms, by its index (for diagnostics)
  };

  // How long build() took, by phase (for `culprit check --timings`).
  struct BuildTimings {
    double hyperscan_ms = 0;        // compiling, or loading from the cache, the databases
    bool hyperscan_cached = false;  // the databases came from the cache
    std::string hyperscan_cache_note;  // why the cache was not used ("" if it was or is off)
    double native_ms = 0;           // the native code factory (JIT compile or cache load), on
                                    // its own thread alongside the Hyperscan work
  };

  // Returns null with `error` set if a database cannot be built. With a
  // `native` factory, expressions run as native code where it succeeds;
  // `native_warning` then says why it did not (empty when it did). With a
  // `cache_dir`, serialized Hyperscan databases are reused from there and
  // stored there (compiler/jit/cache.h); a bad entry is rebuilt.
  static std::shared_ptr<const Program> build(std::shared_ptr<const ir::Catalog> catalog, std::string& error,
                                              const NativeCodeFactory& native = {}, const std::string& cache_dir = "");
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const ir::Catalog& catalog() const { return *catalog_; }
  std::shared_ptr<const ir::Catalog> catalog_ptr() const { return catalog_; }
  const SourceDatabase* database_for(std::string_view source) const;
  const std::vector<SourceDatabase>& databases() const { return databases_; }
  const re2::RE2& extractor_regex(int32_t extractor) const { return *extractor_regexes_[static_cast<size_t>(extractor)]; }
  // How the scanner takes the extractor's captures (PCRE2 where it can, else RE2).
  const CaptureRegex& extractor_capture(int32_t extractor) const { return *extractor_captures_[static_cast<size_t>(extractor)]; }
  const std::vector<std::unique_ptr<re2::RE2>>& expression_regexes() const { return expression_regexes_; }
  // A scratch big enough for every database; Scanners clone it.
  hs_scratch* prototype_scratch() const { return scratch_; }
  // Native code for expressions, or null (interpret everything).
  const NativeCode* native() const { return native_.get(); }
  // "jit" when native code is attached, else "interpreter".
  std::string evaluator() const { return native_ ? "jit" : "interpreter"; }
  const std::string& native_warning() const { return native_warning_; }
  const BuildTimings& timings() const { return timings_; }
  // The Hyperscan cache key: every scanned pattern with its flags, the
  // library version and the CPU tuning it compiles for. "" when the Program
  // was built without a cache directory.
  const std::string& scan_cache_key() const { return scan_cache_key_; }
  // How each query is answered (index, first hit, memoized; compiler/query_plan.h).
  const plan::CatalogPlans& query_plans() const { return plans_; }

 private:
  Program() = default;
  std::shared_ptr<const ir::Catalog> catalog_;
  std::vector<SourceDatabase> databases_;   // sorted by source
  std::vector<std::unique_ptr<re2::RE2>> extractor_regexes_;
  std::vector<std::unique_ptr<CaptureRegex>> extractor_captures_;  // by extractor, over extractor_regexes_
  std::vector<std::unique_ptr<re2::RE2>> expression_regexes_;
  hs_scratch* scratch_ = nullptr;
  std::shared_ptr<const NativeCode> native_;
  std::string native_warning_;
  BuildTimings timings_;
  std::string scan_cache_key_;
  plan::CatalogPlans plans_;
};

std::string hyperscan_version();
std::string re2_version();

}  // namespace culprit
