// Semantic analysis: checks parsed .attr files and lowers them to the IR.
//
// Input is every file of a catalog, already parsed, in load order. Output is
// an ir::Catalog in which every name is resolved and every expression typed.
// All problems are reported to `diags` (codes in docs/language.md §7);
// analysis continues past errors to report as many as useful, but the
// returned catalog must not be used when diags.has_errors().
//
// What is checked: duplicate names, unknown kinds/fields/names/stages, types
// of every operator and function, regexes in both Hyperscan and RE2, captures
// referenced but not defined, actions allowed per stage, inline test shape
// (both polarities per extractor, a target per test), scenario expectations,
// tables (a cell per column, a type per column, unique lookup keys). Table
// lookups and (?&TABLE.COLUMN) in regexes are lowered here, to `if`/`in`
// and plain alternations: the IR has no tables.
//
// Thread-safety: analyze() keeps its state in the call (an Analyzer of its
// own, sema_internal.h), so analyses may run on different threads at once.
// The ir::Catalog returned is immutable.
#pragma once

#include <string>
#include <vector>

#include "compiler/ast.h"
#include "compiler/diagnostics.h"
#include "compiler/ir.h"

namespace culprit {

struct CatalogPart {
  std::vector<ast::File> files;  // one directory (or file list) of a catalog, in load order
};

// `parts` are compiled together as one catalog; the first part's `catalog`
// header names it. Each part may declare at most one header.
ir::Catalog analyze(std::vector<CatalogPart>& parts, Diagnostics& diags);

}  // namespace culprit
