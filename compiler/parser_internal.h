// Private to the parser (compiler/parser_*.cpp); not part of the compiler's
// interface, which is compiler/parser.h.
//
// The parser is split by whether a file touches ANTLR. ANTLR is fenced in
// the files named parser_antlr*: only they include its headers (the
// generated parser is C++17 code, built in its own target, and its runtime
// shares caches between parsers, so it runs under one lock), and no ANTLR
// exception or type leaves them:
//   parser_antlr.cpp                  runs the lexer and the parser under the lock, groups syntax errors
//   parser_antlr_translator.h         the Translator: ANTLR's parse tree -> ast:: structs
//   parser_antlr_translate_expr.cpp   ... source ranges, literals, queries, expressions
//   parser_antlr_translate_decls.cpp  ... declarations: extractors, rules and their actions, scenarios
// This header is ANTLR-free, and so is the file that defines what it declares:
//   parser_diagnostics.cpp            byte columns, ANTLR's messages in plain words, invalid UTF-8
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/diagnostics.h"

namespace culprit::parser_internal {

// One syntax error as ANTLR reported it, before it is turned into a
// diagnostic (parse_attr decides which errors are follow-ons of another).
struct RawSyntaxError {
  SourceRange where;
  std::string message;        // ANTLR's text
  std::string token;          // text of the offending token ("" at the end of the file)
  bool at_eof = false;
  size_t token_index = 0;     // in the token stream
};

// The 1-based byte column of code point `cp_col` (0-based, as ANTLR counts) of `line`.
uint32_t byte_column(const SourceFile& f, size_t line, size_t cp_col);

// ANTLR's message of `e` in the words of docs/language.md.
std::string plain_syntax_message(const RawSyntaxError& e);

// The first byte of `text` that is not well-formed UTF-8, or npos.
size_t first_invalid_utf8(std::string_view text);

// A one-byte range at byte `offset` of `f`.
SourceRange point_at(const SourceFile& f, size_t offset);

}  // namespace culprit::parser_internal
