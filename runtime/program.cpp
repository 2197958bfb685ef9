#include "runtime/program.h"

#include <fmt/format.h>
#include <hs/hs.h>
#include <re2/re2.h>

#include <algorithm>
#include <map>

#include "compiler/regex_check.h"

namespace culprit {

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
                                              const NativeCodeFactory& native) {
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
  for (auto& [source, ids] : by_source) {
    std::vector<const char*> patterns;
    std::vector<unsigned> flags, hs_ids;
    for (size_t k = 0; k < ids.size(); ++k) {
      const auto& x = catalog->extractors[static_cast<size_t>(ids[k])];
      patterns.push_back(x.pattern.c_str());
      flags.push_back(hyperscan_flags(x.caseless, x.dotall));
      hs_ids.push_back(static_cast<unsigned>(k));
    }
    hs_database_t* db = nullptr;
    hs_compile_error_t* err = nullptr;
    if (hs_compile_multi(patterns.data(), flags.data(), hs_ids.data(), static_cast<unsigned>(patterns.size()),
                         HS_MODE_BLOCK, nullptr, &db, &err) != HS_SUCCESS) {
      int bad = err ? err->expression : -1;
      error = fmt::format("Hyperscan database for source '{}': {}{}", source, err && err->message ? err->message : "failed",
                          bad >= 0 ? " (extractor " + catalog->extractors[static_cast<size_t>(ids[static_cast<size_t>(bad)])].name + ")" : "");
      hs_free_compile_error(err);
      return nullptr;
    }
    if (hs_alloc_scratch(db, &p->scratch_) != HS_SUCCESS) {
      hs_free_database(db);
      error = "cannot allocate Hyperscan scratch";
      return nullptr;
    }
    p->databases_.push_back({source, db, ids});
  }
  if (native) {
    p->native_ = native(*catalog, p->native_warning_);
    if (p->native_) p->native_warning_.clear();
  }
  return p;
}

}  // namespace culprit
