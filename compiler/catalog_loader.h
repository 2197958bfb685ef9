// Loading a catalog: rule directories and files -> one compiled ir::Catalog.
//
// Each path is a directory (every `*.attr` below it, recursively, in sorted
// path order) or a single `.attr` file. Paths form the parts of one catalog,
// in the order given; the first part's `catalog` header names it. The digest
// is SHA-256 over every file's path relative to its part root and its bytes,
// in load order, so it identifies the exact rule text that produced a verdict.
//
// No exception escapes: unreadable paths are E0002 diagnostics.
//
// Thread-safety: load_catalog() may run on several threads at once (parsing
// takes the parser's lock); the catalog it returns is immutable and shared.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/diagnostics.h"
#include "compiler/ir.h"

namespace culprit {

struct LoadedCatalog {
  std::shared_ptr<const ir::Catalog> catalog;  // null when diagnostics has errors
  Diagnostics diagnostics;
  bool ok() const { return catalog != nullptr; }
  double parse_ms = 0;  // time spent parsing (for `culprit check --timings`)
  double sema_ms = 0;   // and in semantic analysis, including regex checks and the digest
                        // (or, from an image, in reading it back)
  bool from_image = false;  // the catalog came from its image in the cache (no parse, no analysis)
};

// With a `cache_dir`, a catalog that compiled without any diagnostic is
// stored there as an image (compiler/catalog_image.h), and the next load of
// the same files (same paths, same bytes) by the same build reads it back
// instead of parsing and analyzing them again; the result is the same
// Catalog. An upgrade of the ANTLR, Hyperscan or RE2 library is another key
// (their build IDs are in it), so it compiles again. Files with a warning, or that cannot all be read, always compile.
LoadedCatalog load_catalog(const std::vector<std::string>& paths, const std::string& cache_dir = "");

// Compiles in-memory sources (name, text) as one part; for tests and tools.
LoadedCatalog compile_sources(const std::vector<std::pair<std::string, std::string>>& files);

// The directory of the bundled catalog: $CULPRIT_STDLIB if set, else
// <exe>/../share/culprit/stdlib-rules if it exists, else the source tree's.
std::string stdlib_directory();

}  // namespace culprit
