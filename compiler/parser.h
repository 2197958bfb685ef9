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
#include <string>
#include <vector>

#include "compiler/ast.h"
#include "compiler/diagnostics.h"

namespace culprit {

// Parses `source` into `out` (out.source is set to `source`). Returns false
// if any syntax error was reported; `out` then holds whatever parsed cleanly
// and must not be compiled further.
bool parse_attr(std::shared_ptr<const SourceFile> source, ast::File& out, Diagnostics& diags);

}  // namespace culprit

namespace culprit {

// One token of an .attr file as the lexer cuts it. Whitespace and comments
// are not tokens: they are the text between `end` of one token and `begin`
// of the next (for the formatter, compiler/formatter.h).
struct AttrToken {
  enum class Kind { Word, String, Regex, Number, Punct, Unknown };
  Kind kind = Kind::Punct;
  std::string text;
  size_t begin = 0, end = 0;  // byte offsets into the source text, end exclusive
};

// The tokens of `source`, in order. False (with `out` filled as far as it
// got) when the lexer met a character that is no token (the parser reports
// it as a syntax error). Serialized behind the parser's lock.
bool lex_attr(const SourceFile& source, std::vector<AttrToken>& out);

// Version of the ANTLR C++ runtime the parser runs on (e.g. "4.9").
std::string antlr_runtime_version();

// The version and the build ID of the loaded ANTLR runtime library (for
// cache keys: base/build_id.h), e.g. "4.9 4f1c...".
std::string antlr_runtime_identity();
}  // namespace culprit
