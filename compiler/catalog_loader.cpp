#include "compiler/catalog_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/build_id.h"
#include "base/limits.h"
#include "compiler/catalog_image.h"
#include "compiler/jit/cache.h"
#include "compiler/parser.h"
#include "compiler/regex_check.h"
#include "compiler/sema.h"
#include "base/sha256.h"
#include "base/suggest.h"

namespace culprit {
namespace fs = std::filesystem;

namespace {

const char* type_name(fs::file_type t) {
  switch (t) {
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::block: return "a block device";
    case fs::file_type::character: return "a character device";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::directory: return "a directory";
    default: return "not a regular file";
  }
}

// Reads one rule file: a regular file (checked on the open descriptor, so a
// FIFO never blocks the compiler) of at most limits::kRuleFileBytes.
// False with `why` (and `code`) on failure.
bool read_rule_file(const fs::path& p, std::string& out, std::string& code, std::string& why) {
  code = "E0002";
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    why = fmt::format("cannot read rule file '{}': {}", p.string(), std::strerror(errno));
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    std::error_code ec;
    why = fmt::format("cannot read rule file '{}': it is {}", p.string(), type_name(fs::status(p, ec).type()));
    return false;
  }
  out.clear();
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) {
      why = fmt::format("cannot read rule file '{}': {}", p.string(), std::strerror(errno));
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > limits::kRuleFileBytes) {
      ::close(fd);
      code = "E0701";
      why = limits::exceeded("rule_file_bytes", limits::kRuleFileBytes,
                             fmt::format("'{}' is {} bytes", p.string(),
                                         std::max<uint64_t>(static_cast<uint64_t>(st.st_size), out.size() + static_cast<size_t>(n))));
      return false;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

// SHA-256 over (relative path, size, bytes) of each file, in order.
std::string digest_of(const std::vector<std::pair<std::string, std::string>>& inputs, size_t begin, size_t end) {
  Sha256 h;
  for (size_t i = begin; i < end; ++i) {
    const auto& [rel, text] = inputs[i];
    h.update(rel);
    h.update(std::string_view("\0", 1));
    h.update(std::to_string(text.size()));
    h.update(std::string_view("\0", 1));
    h.update(text);
  }
  auto d = h.finish();
  std::string hex;
  for (uint8_t b : d) hex += fmt::format("{:02x}", b);
  return "sha256:" + hex;
}

// The regexes of a parsed catalog: each extractor's `match`, and every
// `matches` in an expression, as check_regex will be asked about them.
class RegexCollector {
 public:
  std::vector<RegexToCheck> out;

  void file(const ast::File& f) {
    for (const auto& x : f.extractors) {
      for (const auto& m : x.matches) add(m.regex, m.flags, true);
      bool table_ref = false;
      for (const auto& m : x.matches) table_ref = table_ref || m.regex.find("(?&") != std::string::npos;
      if (x.matches.size() > 1 && !table_ref) {
        // The pattern the clauses are scanned with together (sema_extractors.cpp).
        std::vector<MatchClauseRegex> clauses;
        for (const auto& m : x.matches) clauses.push_back(clause_regex(m.regex, m.flags));
        auto u = match_union(clauses);
        out.push_back({u.pattern, u.caseless, u.dotall, true});
      }
      for (const auto& init : x.emit_fields) expr(init.value.get());
    }
    for (const auto& r : f.rules) {
      query(r.for_query.get());
      for (const auto& w : r.wheres) expr(w.get());
      for (const auto& k : r.group_keys) expr(k.get());
      for (const auto& a : r.actions) {
        for (const ast::Expr* e : {a.node.get(), a.key.get(), a.priority.get(), a.at.get(), a.value.get()}) expr(e);
        for (const auto& init : a.fields) expr(init.value.get());
        query(a.query.get());
      }
    }
  }

 private:
  void add(const std::string& pattern, const std::string& flags, bool scanned) {
    // A (?&TABLE.COLUMN) is expanded by sema from its table; asked as
    // written, the engines would only refuse it.
    if (pattern.find("(?&") != std::string::npos) return;
    auto c = clause_regex(pattern, flags);
    out.push_back({c.pattern, c.caseless, c.dotall, scanned});
  }
  void query(const ast::Query* q) {
    if (q) expr(q->filter.get());
  }
  // Expressions nest at most limits::kExprDepth deep (the parser refuses
  // deeper ones), so this recursion is bounded.
  void expr(const ast::Expr* e) {
    if (!e) return;
    if (e->kind == ast::ExprKind::Matches) add(e->text, e->regex_flags, false);
    for (const auto& a : e->args) expr(a.get());
    query(e->query.get());
  }
};

std::vector<RegexToCheck> regexes_of(const ast::File& file) {
  RegexCollector c;
  c.file(file);
  return std::move(c.out);
}

// Analysis checks every regex with Hyperscan, a compile of a few
// milliseconds each when the verdict cache does not know it. The parser
// runs on one thread (under a lock), so those compiles start on the other
// cores as soon as a file is parsed, and use every core once all are.
unsigned precheck_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// `infos` has one entry per part with root and files filled in; the names,
// versions and digests come from the parsed headers and the file texts.
LoadedCatalog finish(std::vector<CatalogPart>& parts, Diagnostics& diags, RegexPrecheck& precheck,
                     const std::vector<std::pair<std::string, std::string>>& digest_inputs,
                     std::vector<std::string> files, std::vector<ir::CatalogPartInfo> infos) {
  LoadedCatalog out;
  auto sema_start = std::chrono::steady_clock::now();
  if (!diags.has_errors()) {
    for (size_t i = 0; i < parts.size() && i < infos.size(); ++i)
      for (const auto& f : parts[i].files)
        if (f.catalog) {
          infos[i].name = f.catalog->name;
          infos[i].version = f.catalog->version;
          break;
        }
    precheck.finish();
    auto cat = std::make_shared<ir::Catalog>(analyze(parts, diags));
    cat->digest = digest_of(digest_inputs, 0, digest_inputs.size());
    size_t at = 0;
    for (auto& info : infos) {
      info.digest = digest_of(digest_inputs, at, at + info.files.size());
      at += info.files.size();
    }
    cat->parts = std::move(infos);
    cat->files = std::move(files);
    if (!diags.has_errors()) out.catalog = std::move(cat);
  }
  precheck.cancel();  // no analysis: its verdicts are not needed (no-op after finish())
  out.sema_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sema_start).count();
  out.diagnostics = std::move(diags);
  return out;
}

}  // namespace

namespace {

// One rule file as read, before it is parsed.
struct RuleText {
  size_t part = 0;      // index into the parts
  fs::path path;
  std::string rel;      // relative to its part's root
  std::string text;
};

// The cache key of a catalog image: everything the analysis of these files
// depends on. The files enter with the paths they were loaded by (diagnostics
// and test locations name them) and their bytes; the code that analyzes them
// is named by this build's ID and the libraries it loads that judge syntax
// (ANTLR's runtime parses; Hyperscan and RE2 accept or refuse every regex),
// by their versions and build IDs: a library upgrade is another key.
std::string image_key(const std::vector<RuleText>& texts, const std::vector<ir::CatalogPartInfo>& infos) {
  Sha256 h;
  for (const auto& info : infos) h.update(fmt::format("part {} {} {} {}\n", info.root.size(), info.root, info.name.size(), info.name));
  for (const auto& t : texts) {
    std::string path = t.path.string();
    h.update(fmt::format("file {} {} {} {} {} {}\n", t.part, path.size(), path, t.rel.size(), t.rel, t.text.size()));
    h.update(t.text);
  }
  std::string files;
  for (uint8_t b : h.finish()) files += fmt::format("{:02x}", b);
  return fmt::format("culprit-catalog-image\nbuild {}\nantlr {}\nregex {}\nfiles {}\n", build_id(),
                     antlr_runtime_identity(), regex_engines_identity(), files);
}

}  // namespace

LoadedCatalog load_catalog(const std::vector<std::string>& paths, const std::string& cache_dir) {
  Diagnostics diags;
  std::vector<RuleText> texts;
  std::vector<ir::CatalogPartInfo> infos;
  size_t total_bytes = 0;
  for (const auto& root : paths) {
    if (total_bytes > limits::kCatalogBytes) break;
    std::error_code ec;
    std::vector<fs::path> found;
    fs::path rootp(root);
    if (fs::is_directory(rootp, ec)) {
      // Every .attr file is read, whatever its type: one that is not a
      // regular file is an error, never skipped in silence.
      for (fs::recursive_directory_iterator it(rootp, fs::directory_options::skip_permission_denied, ec), end;
           !ec && it != end; it.increment(ec)) {
        if (it->path().extension() == ".attr" && !it->is_directory(ec)) found.push_back(it->path());
      }
      if (ec) diags.error("E0002", {}, fmt::format("cannot read rule directory '{}': {}", root, ec.message()));
      std::sort(found.begin(), found.end());
    } else if (auto st = fs::status(rootp, ec); st.type() == fs::file_type::not_found || ec) {
      diags.error("E0002", {}, ec && st.type() != fs::file_type::not_found
                                   ? fmt::format("cannot read rule path '{}': {}", root, ec.message())
                                   : fmt::format("rule path '{}' does not exist", root));
      continue;
    } else {
      found.push_back(rootp);  // a file, or a FIFO or device: read_rule_file says which
      rootp = rootp.parent_path();
    }
    if (found.empty() && fs::is_directory(fs::path(root), ec)) {
      // A directory of rules without rules is a mistake (a typo in an
      // extension, the wrong directory); compiling "nothing" would pass
      // every test it was meant to run.
      std::vector<std::string> near;
      for (fs::recursive_directory_iterator it(rootp, fs::directory_options::skip_permission_denied, ec), end;
           !ec && it != end && near.size() < 3; it.increment(ec)) {
        std::string ext = it->path().extension().string();
        if (it->is_regular_file(ec) && ext != ".attr" && ext.size() > 1 && edit_distance(ext, ".attr") <= 2)
          near.push_back(it->path().lexically_relative(rootp).generic_string());
      }
      std::sort(near.begin(), near.end());
      diags.error("E0002", {}, fmt::format("rule directory '{}' holds no .attr files", root),
                  near.empty() ? std::string("rule files end in .attr")
                               : fmt::format("rule files end in .attr; did you mean to rename {}?", fmt::join(near, ", ")));
      continue;
    }
    ir::CatalogPartInfo info;
    info.root = root;
    info.name = fs::path(root).filename().string();
    if (info.name.empty()) info.name = fs::path(root).parent_path().filename().string();
    if (!fs::is_directory(fs::path(root), ec)) info.name = fs::path(root).stem().string();
    for (const auto& p : found) {
      std::string text, code, why;
      if (!read_rule_file(p, text, code, why)) {
        diags.error(code, {}, why);
        continue;
      }
      total_bytes += text.size();
      if (total_bytes > limits::kCatalogBytes) {
        diags.error("E0702", {}, limits::exceeded("catalog_bytes", limits::kCatalogBytes,
                                                  "the catalog's .attr files add up to more bytes", p.string()));
        break;
      }
      texts.push_back({infos.size(), p, p.lexically_relative(rootp).generic_string(), std::move(text)});
      info.files.push_back(texts.back().rel);
    }
    infos.push_back(std::move(info));
  }

  // Files that read cleanly and were compiled by this build before, without
  // a word from the compiler, come back from their image: no parse, no
  // analysis. Anything else (a read error, a warning) compiles as always.
  bool use_image = !cache_dir.empty() && !build_id().empty() && diags.all().empty() && !texts.empty();
  std::string key = use_image ? image_key(texts, infos) : "";
  if (use_image) {
    auto start = std::chrono::steady_clock::now();
    std::string image, note;
    if (cache::load(cache_dir, "catalog", key, image, note)) {
      std::vector<std::shared_ptr<const SourceFile>> sources;
      for (const auto& t : texts) sources.push_back(make_source_file(t.path.string(), t.text));
      auto cat = std::make_shared<ir::Catalog>();
      std::string why;
      if (decode_catalog(image, std::move(sources), *cat, why)) {
        LoadedCatalog out;
        out.catalog = std::move(cat);
        out.from_image = true;
        out.sema_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        return out;
      }
      // The entry passed the cache's checks but is not an image this build
      // reads: compile, and the store below replaces it.
    }
  }

  std::vector<CatalogPart> parts(infos.size());
  std::vector<std::pair<std::string, std::string>> digest_inputs;
  std::vector<std::string> files;
  double parse_ms = 0;
  RegexPrecheck precheck(precheck_threads());
  for (auto& t : texts) {
    auto src = make_source_file(t.path.string(), t.text);
    ast::File file;
    auto parse_start = std::chrono::steady_clock::now();
    parse_attr(src, file, diags);
    parse_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - parse_start).count();
    if (!diags.has_errors()) precheck.add(regexes_of(file));
    parts[t.part].files.push_back(std::move(file));
    files.push_back(t.path.string());
    digest_inputs.emplace_back(std::move(t.rel), std::move(t.text));
  }
  LoadedCatalog out = finish(parts, diags, precheck, digest_inputs, std::move(files), std::move(infos));
  out.parse_ms = parse_ms;
  if (use_image && out.ok() && out.diagnostics.all().empty()) {
    std::string image = encode_catalog(*out.catalog), note;
    // An image that cannot be written only costs the next start-up a compile.
    if (!image.empty()) cache::store(cache_dir, "catalog", key, image, note);
  }
  return out;
}

LoadedCatalog compile_sources(const std::vector<std::pair<std::string, std::string>>& sources) {
  Diagnostics diags;
  std::vector<CatalogPart> parts(1);
  std::vector<std::string> files;
  size_t total_bytes = 0;
  RegexPrecheck precheck(precheck_threads());
  for (const auto& [name, text] : sources) {
    total_bytes += text.size();
    if (text.size() > limits::kRuleFileBytes || total_bytes > limits::kCatalogBytes) {
      bool file_limit = text.size() > limits::kRuleFileBytes;
      diags.error(file_limit ? "E0701" : "E0702", {},
                  file_limit ? limits::exceeded("rule_file_bytes", limits::kRuleFileBytes,
                                                fmt::format("'{}' is {} bytes", name, text.size()))
                             : limits::exceeded("catalog_bytes", limits::kCatalogBytes,
                                                "the catalog's sources add up to more bytes", name));
      continue;
    }
    ast::File file;
    parse_attr(make_source_file(name, text), file, diags);
    if (!diags.has_errors()) precheck.add(regexes_of(file));
    parts[0].files.push_back(std::move(file));
    files.push_back(name);
  }
  ir::CatalogPartInfo info;
  info.name = "sources";
  for (const auto& [name, text] : sources) info.files.push_back(name);
  return finish(parts, diags, precheck, sources, std::move(files), {std::move(info)});
}

std::string stdlib_directory() {
  if (const char* env = std::getenv("CULPRIT_STDLIB"); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "culprit" / "stdlib-rules";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
#ifdef CULPRIT_STDLIB_DIR
  return CULPRIT_STDLIB_DIR;
#else
  return "stdlib-rules";
#endif
}

}  // namespace culprit
