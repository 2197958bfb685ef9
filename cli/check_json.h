// `culprit check --format json`: what the compiler said about a catalog, for
// editors and CI (one JSON document on stdout; the base of editor support).
//
//   {"schema": "culprit.check/v1", "ok": true|false,
//    "catalog": {"parts": [...], "digest", "files", "extractors", "rules", "scenarios"} | null,
//    "error": "" | why the catalog could not be opened,
//    "diagnostics": [{"severity": "error"|"warning"|"note", "code": "E0201",
//                     "file", "line", "col", "end_line", "end_col",
//                     "message", "help", "notes": [{"file", "line", "col", "message"}]}]}
//
// Lines and columns are 1-based, the end exclusive (as the text diagnostics'
// carets); a diagnostic without a place has file "" and line 0. Diagnostics
// come in the order the compiler gave them, then the rules' warnings about
// how they will run. Pure function; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "compiler/diagnostics.h"
#include "runtime/attributor.h"

namespace culprit::cli {

std::string check_report_json(const AttributorStart& start, const Diagnostics& run_warnings, const ir::Catalog* catalog);

// One element of "diagnostics" above; `culprit lsp` sends the same object
// as an LSP diagnostic's `data`, so a tool sees one schema either way.
nlohmann::ordered_json diagnostic_json(const Diagnostic& d);

}  // namespace culprit::cli
