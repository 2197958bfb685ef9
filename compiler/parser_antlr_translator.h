// Private to the parser, and inside the ANTLR fence (compiler/parser_internal.h
// lists the fence's files): the Translator, which turns ANTLR's parse tree
// into ast:: structs. Only parser_antlr*.cpp may include this header, since
// it includes the generated parser.
//
// A header because the translation is two files: parser_antlr_translate_expr.cpp
// (source ranges, literals, queries, expressions) and
// parser_antlr_translate_decls.cpp (declarations: extractors, rules and their
// actions, scenarios); parser_antlr.cpp calls file() on a tree that parsed
// without syntax errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ast.h"
#include "compiler/diagnostics.h"

#include "AttrParser.h"
#include "antlr4-runtime.h"

namespace culprit::parser_internal {

using P = culprit_antlr::AttrParser;

// Translates ANTLR's parse tree into ast:: structs. Every method takes a
// context that the parser produced without syntax errors.
class Translator {
 public:
  Translator(const SourceFile& f, Diagnostics& d) : file_(f), diags_(d) {}

  // ----------------------------- parser_antlr_translate_expr.cpp
  // Expression nesting as translated (limit expr_depth): every later pass
  // (sema, the interpreter, the JIT) recurses over the tree, so nothing
  // deeper than the limit leaves the parser. The token pre-check in
  // parse_attr keeps ANTLR's own recursion (parentheses, prefix operators)
  // shallow; this bounds what ANTLR builds iteratively (operator chains).
  struct DepthGuard {
    Translator& t;
    explicit DepthGuard(Translator& tr) : t(tr) { ++t.depth_; }
    ~DepthGuard() { --t.depth_; }
  };
  bool too_deep(antlr4::ParserRuleContext* ctx);

  SourceRange range(antlr4::Token* start, antlr4::Token* stop) const;
  SourceRange range(antlr4::ParserRuleContext* ctx) const { return range(ctx->getStart(), ctx->getStop()); }
  SourceRange range(antlr4::tree::TerminalNode* n) const { return range(n->getSymbol(), n->getSymbol()); }
  static size_t utf32_length(const std::string& s);

  std::string unquote(antlr4::tree::TerminalNode* n);
  std::string name(P::NameContext* n) { return n->getText(); }
  std::string kind_name(P::KindNameContext* k);
  std::string kind_pattern(P::KindPatternContext* k);
  int64_t parse_int(antlr4::tree::TerminalNode* n, int base);
  int64_t parse_duration(antlr4::tree::TerminalNode* n);
  void regex(antlr4::tree::TerminalNode* n, std::string& body, std::string& flags);

  std::unique_ptr<ast::Query> query(P::QueryContext* q);
  ast::ExprPtr make(ast::ExprKind k, antlr4::ParserRuleContext* ctx);
  ast::ExprPtr bool_chain(P::BinaryExprContext* top, const std::string& op);
  ast::ExprPtr balanced(std::vector<ast::ExprPtr>& kids, size_t lo, size_t hi, const std::string& op);
  static constexpr size_t kBalanceAbove = 32;  // operands; below, ANTLR's left-nested shape is kept
  ast::ExprPtr expr(P::ExprContext* ctx);
  ast::ExprPtr primary(P::PrimaryContext* ctx);

  // ---------------------------- parser_antlr_translate_decls.cpp
  std::vector<ast::FieldInit> field_inits(P::FieldInitsContext* f);
  void extractor(P::ExtractorDeclContext* c, ast::File& out);
  ast::Action action(P::ActionContext* c);
  void rule(P::RuleDeclContext* c, ast::File& out);
  void scenario(P::ScenarioDeclContext* c, ast::File& out);
  void table(P::TableDeclContext* c, ast::File& out);
  void file(P::FileContext* f, ast::File& out);

 private:
  const SourceFile& file_;
  Diagnostics& diags_;
  size_t depth_ = 0;
  bool depth_reported_ = false;
};

}  // namespace culprit::parser_internal
