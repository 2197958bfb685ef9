// Parsing .attr text into the syntax tree (compiler/ast.h).
//
// This is the only place that touches ANTLR: the generated lexer/parser run
// here, ANTLR's tree is translated into ast:: structs, and syntax errors
// become E0001 diagnostics. ANTLR exceptions never leave this module.
//
// Thread-safety: the ANTLR 4.9 C++ runtime shares caches between parser
// instances without synchronization, so parse_attr serializes all parses
// behind one process-wide lock. Callers may call it from any thread.
#pragma once

#include <memory>

#include "compiler/ast.h"
#include "compiler/diagnostics.h"

namespace culprit {

// Parses `source` into `out` (out.source is set to `source`). Returns false
// if any syntax error was reported; `out` then holds whatever parsed cleanly
// and must not be compiled further.
bool parse_attr(std::shared_ptr<const SourceFile> source, ast::File& out, Diagnostics& diags);

}  // namespace culprit

namespace culprit {
// Version of the ANTLR C++ runtime the parser runs on (e.g. "4.9").
std::string antlr_runtime_version();
}  // namespace culprit
