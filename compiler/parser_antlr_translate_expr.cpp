// Inside the ANTLR fence (compiler/parser_internal.h lists its files): the
// Translator's source ranges, literals, queries and expressions, from ANTLR's
// parse tree to ast::Expr and ast::Query.
//
// Separate from the declarations (parser_antlr_translate_decls.cpp) because
// expressions are a job of their own: the limits on their depth and on their
// operator chains are enforced here, and every declaration uses them.

#include "compiler/parser_antlr_translator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstdlib>

#include "base/limits.h"
#include "compiler/parser_internal.h"

namespace culprit::parser_internal {

bool Translator::too_deep(antlr4::ParserRuleContext* ctx) {
  if (depth_ <= limits::kExprDepth) return false;
  if (!depth_reported_) {
    depth_reported_ = true;
    diags_.error("E0703", range(ctx),
                 limits::exceeded("expr_depth", limits::kExprDepth, "the expression nests deeper"));
  }
  return true;
}

SourceRange Translator::range(antlr4::Token* start, antlr4::Token* stop) const {
  SourceRange r;
  r.file = &file_;
  if (!start) return r;
  r.line = static_cast<uint32_t>(start->getLine());
  r.col = byte_column(file_, start->getLine(), start->getCharPositionInLine());
  antlr4::Token* end = stop ? stop : start;
  r.end_line = static_cast<uint32_t>(end->getLine());
  size_t end_cp = end->getCharPositionInLine() + utf32_length(end->getText());
  r.end_col = byte_column(file_, end->getLine(), end_cp);
  if (r.end_line == r.line && r.end_col <= r.col) r.end_col = r.col + 1;
  return r;
}

size_t Translator::utf32_length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string Translator::unquote(antlr4::tree::TerminalNode* n) {
  std::string raw = n->getText();
  std::string out;
  for (size_t i = 1; i + 1 < raw.size(); ++i) {
    char c = raw[i];
    if (c != '\\' || i + 2 >= raw.size()) {
      out += c;
      continue;
    }
    char e = raw[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case 'x': {
        int v = 0;
        if (i + 2 < raw.size() && std::isxdigit(static_cast<unsigned char>(raw[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(raw[i + 2]))) {
          std::from_chars(raw.data() + i + 1, raw.data() + i + 3, v, 16);
          out += static_cast<char>(v);
          i += 2;
        } else {
          out += "\\x";
        }
        break;
      }
      default: out += '\\'; out += e; break;  // kept verbatim (regex-like text in test lines)
    }
  }
  return out;
}

std::string Translator::kind_name(P::KindNameContext* k) {
  std::string s;
  for (auto* n : k->name()) s += (s.empty() ? "" : ".") + n->getText();
  return s;
}

std::string Translator::kind_pattern(P::KindPatternContext* k) {
  if (dynamic_cast<P::AnyKindContext*>(k)) return "*";
  return k->getText();  // tokens are adjacent without spaces in the text of a pattern
}

int64_t Translator::parse_int(antlr4::tree::TerminalNode* n, int base) {
  std::string t = n->getText();
  const char* b = t.data() + (base == 16 ? 2 : 0);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(b, t.data() + t.size(), v, base);
  if (ec != std::errc() || p != t.data() + t.size() || (base == 10 && v > static_cast<uint64_t>(INT64_MAX))) {
    diags_.error("E0001", range(n), fmt::format("integer literal '{}' is out of range", t));
    return 0;
  }
  return static_cast<int64_t>(v);  // hex literals may use all 64 bits
}

int64_t Translator::parse_duration(antlr4::tree::TerminalNode* n) {
  std::string t = n->getText();
  size_t i = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + i, v);
  std::string unit = t.substr(i);
  int64_t mul = unit == "ns" ? 1 : unit == "us" ? 1000 : unit == "ms" ? 1000000 : unit == "s" ? 1000000000LL
              : unit == "m" ? 60000000000LL : unit == "h" ? 3600000000000LL : 86400000000000LL;
  if (ec != std::errc() || v > static_cast<uint64_t>(INT64_MAX / mul)) {
    diags_.error("E0001", range(n), fmt::format("duration literal '{}' is out of range", t));
    return 0;
  }
  return static_cast<int64_t>(v) * mul;
}

void Translator::regex(antlr4::tree::TerminalNode* n, std::string& body, std::string& flags) {
  std::string t = n->getText();
  size_t close = t.rfind('/');
  flags = t.substr(close + 1);
  body.clear();
  for (size_t i = 1; i < close; ++i) {
    if (t[i] == '\\' && i + 1 < close && t[i + 1] == '/') {
      body += '/';
      ++i;
    } else {
      body += t[i];
    }
  }
}

std::unique_ptr<ast::Query> Translator::query(P::QueryContext* q) {
  auto out = std::make_unique<ast::Query>();
  out->where = range(q);
  out->symptom = q->itemType()->getText() == "symptom";
  out->kind_pattern = kind_pattern(q->kindPattern());
  out->kind_range = range(q->kindPattern());
  if (auto* rel = q->nodeRelation()) {
    if (dynamic_cast<P::SameNodeContext*>(rel)) out->relation = ast::NodeRelation::Same;
    else if (dynamic_cast<P::OtherNodesContext*>(rel)) out->relation = ast::NodeRelation::Other;
  }
  if (q->expr()) out->filter = expr(q->expr());
  if (auto* w = q->withinClause()) {
    out->has_within = true;
    out->within_ns = parse_duration(w->DURATION());
    std::string d = w->direction->getText();
    out->direction = d == "before" ? ast::WithinDirection::Before
                   : d == "after"  ? ast::WithinDirection::After
                                   : ast::WithinDirection::Around;
    out->anchor = w->IDENT()->getText();
    out->anchor_range = range(w->IDENT());
  }
  return out;
}

ast::ExprPtr Translator::make(ast::ExprKind k, antlr4::ParserRuleContext* ctx) {
  auto e = std::make_unique<ast::Expr>();
  e->kind = k;
  e->where = range(ctx);
  return e;
}

// A chain of one associative boolean operator (`a or b or c ...`, left
// nested by ANTLR) as a balanced tree over its operands, so a long chain
// does not make a deep tree: same operands, same left-to-right order, same
// value. Short chains keep ANTLR's shape.
ast::ExprPtr Translator::bool_chain(P::BinaryExprContext* top, const std::string& op) {
  std::vector<P::ExprContext*> operands;  // right to left, then reversed
  P::ExprContext* cur = top;
  for (;;) {
    auto* b = dynamic_cast<P::BinaryExprContext*>(cur);
    if (!b || b->op->getText() != op) break;
    operands.push_back(b->expr(1));
    cur = b->expr(0);
    if (operands.size() > limits::kExprAlternatives) break;
  }
  operands.push_back(cur);
  if (operands.size() > limits::kExprAlternatives) {
    diags_.error("E0704", range(top),
                 limits::exceeded("expr_alternatives", limits::kExprAlternatives,
                                  fmt::format("a chain of more operands of '{}'", op)));
    depth_reported_ = true;  // one message for this expression
    return make(ast::ExprKind::NullLit, top);
  }
  std::reverse(operands.begin(), operands.end());
  std::vector<ast::ExprPtr> kids;
  for (auto* o : operands) kids.push_back(expr(o));
  return balanced(kids, 0, kids.size(), op);
}

ast::ExprPtr Translator::balanced(std::vector<ast::ExprPtr>& kids, size_t lo, size_t hi, const std::string& op) {
  if (hi - lo == 1) return std::move(kids[lo]);
  size_t mid = lo + (hi - lo) / 2;
  auto e = std::make_unique<ast::Expr>();
  e->kind = ast::ExprKind::Binary;
  e->op = op;
  e->args.push_back(balanced(kids, lo, mid, op));
  e->args.push_back(balanced(kids, mid, hi, op));
  const SourceRange& a = e->args[0]->where;
  const SourceRange& b = e->args[1]->where;
  e->where = {a.file, a.line, a.col, b.end_line, b.end_col};
  return e;
}

ast::ExprPtr Translator::expr(P::ExprContext* ctx) {
  using K = ast::ExprKind;
  DepthGuard guard(*this);
  if (too_deep(ctx)) return make(K::NullLit, ctx);
  if (auto* c = dynamic_cast<P::PrimaryExprContext*>(ctx)) return primary(c->primary());
  if (auto* c = dynamic_cast<P::FieldExprContext*>(ctx)) {
    auto e = make(K::Field, c);
    e->text = name(c->name());
    e->args.push_back(expr(c->expr()));
    return e;
  }
  if (auto* c = dynamic_cast<P::NegateExprContext*>(ctx)) {
    auto e = make(K::Unary, c);
    e->op = "-";
    e->args.push_back(expr(c->expr()));
    return e;
  }
  if (auto* c = dynamic_cast<P::NotExprContext*>(ctx)) {
    auto e = make(K::Unary, c);
    e->op = "not";
    e->args.push_back(expr(c->expr()));
    return e;
  }
  if (auto* c = dynamic_cast<P::BinaryExprContext*>(ctx)) {
    std::string op = c->op->getText();
    if (op == "or" || op == "and") {
      size_t n = 1;
      for (auto* b = c; b && b->op->getText() == op && n <= kBalanceAbove; b = dynamic_cast<P::BinaryExprContext*>(b->expr(0)))
        ++n;
      if (n > kBalanceAbove) return bool_chain(c, op);
    }
    auto e = make(K::Binary, c);
    e->op = c->op->getText();
    e->args.push_back(expr(c->expr(0)));
    e->args.push_back(expr(c->expr(1)));
    return e;
  }
  if (auto* c = dynamic_cast<P::MatchesExprContext*>(ctx)) {
    auto e = make(K::Matches, c);
    regex(c->REGEX(), e->text, e->regex_flags);
    e->regex_range = range(c->REGEX());
    e->args.push_back(expr(c->expr()));
    return e;
  }
  if (auto* c = dynamic_cast<P::IsNullExprContext*>(ctx)) {
    auto e = make(K::IsNull, c);
    e->negated = c->negated != nullptr;
    e->args.push_back(expr(c->expr()));
    return e;
  }
  if (auto* c = dynamic_cast<P::OrderExprContext*>(ctx)) {
    auto e = make(K::Order, c);
    e->op = c->op->getText();
    e->negated = c->negated != nullptr;
    e->args.push_back(expr(c->expr(0)));
    e->args.push_back(expr(c->expr(1)));
    return e;
  }
  if (auto* c = dynamic_cast<P::InExprContext*>(ctx)) {
    auto e = make(K::In, c);
    e->negated = c->negated != nullptr;
    if (c->expr().size() - 1 > limits::kInList) {
      diags_.error("E0705", range(c),
                   limits::exceeded("in_list", limits::kInList, fmt::format("the list has {} elements", c->expr().size() - 1)));
      return make(K::NullLit, c);
    }
    for (auto* a : c->expr()) e->args.push_back(expr(a));
    return e;
  }
  auto e = make(K::NullLit, ctx);  // unreachable with a grammar-conforming tree
  return e;
}

ast::ExprPtr Translator::primary(P::PrimaryContext* ctx) {
  using K = ast::ExprKind;
  if (auto* c = dynamic_cast<P::IntLitContext*>(ctx)) {
    auto e = make(K::IntLit, c);
    e->int_value = parse_int(c->INT(), 10);
    return e;
  }
  if (auto* c = dynamic_cast<P::HexLitContext*>(ctx)) {
    auto e = make(K::IntLit, c);
    e->int_value = parse_int(c->HEX(), 16);
    return e;
  }
  if (auto* c = dynamic_cast<P::FloatLitContext*>(ctx)) {
    auto e = make(K::FloatLit, c);
    e->float_value = std::strtod(c->FLOAT()->getText().c_str(), nullptr);
    return e;
  }
  if (auto* c = dynamic_cast<P::DurationLitContext*>(ctx)) {
    auto e = make(K::DurationLit, c);
    e->int_value = parse_duration(c->DURATION());
    return e;
  }
  if (auto* c = dynamic_cast<P::StringLitContext*>(ctx)) {
    auto e = make(K::StringLit, c);
    e->text = unquote(c->STRING());
    return e;
  }
  if (auto* c = dynamic_cast<P::BoolLitContext*>(ctx)) {
    auto e = make(K::BoolLit, c);
    e->bool_value = c->getText() == "true";
    return e;
  }
  if (dynamic_cast<P::NullLitContext*>(ctx)) return make(K::NullLit, ctx);
  if (auto* c = dynamic_cast<P::QueryAggContext*>(ctx)) {
    auto e = make(K::QueryAggregate, c);
    e->text = c->fn->getText();
    e->binding = c->IDENT()->getText();
    e->binding_range = range(c->IDENT());
    e->query = query(c->query());
    return e;
  }
  if (auto* c = dynamic_cast<P::QueryValueAggContext*>(ctx)) {
    auto e = make(K::QueryAggregate, c);
    e->text = c->fn->getText();
    e->binding = c->IDENT()->getText();
    e->binding_range = range(c->IDENT());
    e->query = query(c->query());
    e->args.push_back(expr(c->expr()));
    return e;
  }
  if (auto* c = dynamic_cast<P::CallExprContext*>(ctx)) {
    auto e = make(K::Call, c);
    e->text = name(c->name());
    for (auto* a : c->expr()) e->args.push_back(expr(a));
    return e;
  }
  if (auto* c = dynamic_cast<P::NameRefContext*>(ctx)) {
    auto e = make(K::Name, c);
    e->text = name(c->name());
    return e;
  }
  if (auto* c = dynamic_cast<P::ParenExprContext*>(ctx)) return expr(c->expr());
  return make(K::NullLit, ctx);
}

}  // namespace culprit::parser_internal
