#include "compiler/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <mutex>

#include "base/build_id.h"
#include "base/limits.h"
#include "base/text_util.h"

#include "AttrLexer.h"
#include "AttrParser.h"
#include "antlr4-runtime.h"

namespace culprit {
namespace {

using P = culprit_antlr::AttrParser;

// ANTLR counts columns in code points (its input stream is UTF-32); the
// diagnostics count bytes so carets line up with the UTF-8 source line.
uint32_t byte_column(const SourceFile& f, size_t line, size_t cp_col) {
  std::string_view text = f.line_text(static_cast<uint32_t>(line));
  size_t cp = 0, i = 0;
  while (i < text.size() && cp < cp_col) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    i += len;
    ++cp;
  }
  return static_cast<uint32_t>(i + 1);
}

// One syntax error as ANTLR reported it, before it is turned into a
// diagnostic (parse_attr decides which errors are follow-ons of another).
struct RawSyntaxError {
  SourceRange where;
  std::string message;        // ANTLR's text
  std::string token;          // text of the offending token ("" at the end of the file)
  bool at_eof = false;
  size_t token_index = 0;     // in the token stream
};

class ErrorCollector : public antlr4::BaseErrorListener {
 public:
  explicit ErrorCollector(const SourceFile& f) : file_(f) {}
  void syntaxError(antlr4::Recognizer*, antlr4::Token* offending, size_t line, size_t col,
                   const std::string& msg, std::exception_ptr) override {
    RawSyntaxError e;
    e.where.file = &file_;
    e.where.line = static_cast<uint32_t>(line);
    e.where.col = byte_column(file_, line, col);
    e.where.end_line = e.where.line;
    e.where.end_col = e.where.col + 1;
    e.message = msg;
    if (offending) {
      e.token_index = offending->getTokenIndex();
      e.at_eof = offending->getType() == antlr4::Token::EOF;
      if (!e.at_eof) {
        e.token = offending->getText();
        e.where.end_col = e.where.col + static_cast<uint32_t>(std::max<size_t>(1, e.token.size()));
      }
    }
    errors.push_back(std::move(e));
  }
  std::vector<RawSyntaxError> errors;

 private:
  const SourceFile& file_;
};

// ANTLR's token names in an expected set, as a person would say them.
std::string say_token(const std::string& t) {
  static const std::pair<const char*, const char*> names[] = {
      {"IDENT", "a name"}, {"STRING", "a string"}, {"REGEX", "a /regex/"}, {"INT", "a number"},
      {"FLOAT", "a number"}, {"HEX", "a number"}, {"DURATION", "a duration"}, {"<EOF>", "the end of the file"}};
  for (const auto& [k, v] : names)
    if (t == k) return v;
  return t;
}

// "{'a', 'b', IDENT}" or "'a'" -> the items, in ANTLR's order.
std::vector<std::string> expected_items(const std::string& set) {
  std::vector<std::string> out;
  std::string s = set;
  if (s.size() >= 2 && s.front() == '{' && s.back() == '}') s = s.substr(1, s.size() - 2);
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == ',')) ++i;
    if (i >= s.size()) break;
    size_t j = i;
    if (s[i] == '\'') {
      j = s.find('\'', i + 1);
      j = j == std::string::npos ? s.size() : j + 1;
    } else {
      while (j < s.size() && s[j] != ',') ++j;
    }
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// ", expected X, Y or Z" for a short expected set; "" for a long one (a
// list of twenty tokens helps nobody) or when it is an expression's start.
std::string expected_phrase(const std::string& set) {
  auto items = expected_items(set);
  bool expr = std::find(items.begin(), items.end(), "STRING") != items.end() &&
              std::find(items.begin(), items.end(), "INT") != items.end() &&
              std::find(items.begin(), items.end(), "'('") != items.end();
  if (expr) return "; expected an expression";
  if (items.empty() || items.size() > 6) return "";
  std::vector<std::string> said;
  for (const auto& t : items) {
    std::string w = say_token(t);
    if (std::find(said.begin(), said.end(), w) == said.end()) said.push_back(w);
  }
  std::string out = "; expected ";
  for (size_t i = 0; i < said.size(); ++i) {
    if (i) out += i + 1 == said.size() ? " or " : ", ";
    out += said[i];
  }
  return out;
}

// ANTLR's message in the words of docs/language.md: "unexpected 'X'",
// "missing 'X' before 'Y'", with the expected tokens only when few.
std::string plain_syntax_message(const RawSyntaxError& e) {
  const std::string& m = e.message;
  std::string what = e.at_eof ? std::string("the end of the file") : "'" + e.token + "'";
  auto after = [&](const std::string& key) {
    size_t p = m.find(key);
    return p == std::string::npos ? std::string() : m.substr(p + key.size());
  };
  if (m.rfind("missing ", 0) == 0) {
    size_t at = m.rfind(" at ");
    std::string missing = m.substr(8, at == std::string::npos ? std::string::npos : at - 8);
    return fmt::format("missing {} before {}", say_token(missing), what);
  }
  if (m.rfind("extraneous input", 0) == 0 || m.rfind("mismatched input", 0) == 0)
    return fmt::format("unexpected {}{}", what, expected_phrase(after(" expecting ")));
  if (m.rfind("token recognition error", 0) == 0) return fmt::format("unexpected character {}", what);
  return fmt::format("unexpected {}", what);
}

// Translates ANTLR's parse tree into ast:: structs. Every method takes a
// context that the parser produced without syntax errors.
class Translator {
 public:
  Translator(const SourceFile& f, Diagnostics& d) : file_(f), diags_(d) {}

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
  bool too_deep(antlr4::ParserRuleContext* ctx) {
    if (depth_ <= limits::kExprDepth) return false;
    if (!depth_reported_) {
      depth_reported_ = true;
      diags_.error("E0703", range(ctx),
                   limits::exceeded("expr_depth", limits::kExprDepth, "the expression nests deeper"));
    }
    return true;
  }

  SourceRange range(antlr4::Token* start, antlr4::Token* stop) const {
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
  SourceRange range(antlr4::ParserRuleContext* ctx) const { return range(ctx->getStart(), ctx->getStop()); }
  SourceRange range(antlr4::tree::TerminalNode* n) const { return range(n->getSymbol(), n->getSymbol()); }

  static size_t utf32_length(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  }

  std::string unquote(antlr4::tree::TerminalNode* n) {
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

  std::string name(P::NameContext* n) { return n->getText(); }

  std::string kind_name(P::KindNameContext* k) {
    std::string s;
    for (auto* n : k->name()) s += (s.empty() ? "" : ".") + n->getText();
    return s;
  }

  std::string kind_pattern(P::KindPatternContext* k) {
    if (dynamic_cast<P::AnyKindContext*>(k)) return "*";
    return k->getText();  // tokens are adjacent without spaces in the text of a pattern
  }

  int64_t parse_int(antlr4::tree::TerminalNode* n, int base) {
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

  int64_t parse_duration(antlr4::tree::TerminalNode* n) {
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

  void regex(antlr4::tree::TerminalNode* n, std::string& body, std::string& flags) {
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

  std::unique_ptr<ast::Query> query(P::QueryContext* q) {
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

  ast::ExprPtr make(ast::ExprKind k, antlr4::ParserRuleContext* ctx) {
    auto e = std::make_unique<ast::Expr>();
    e->kind = k;
    e->where = range(ctx);
    return e;
  }

  // A chain of one associative boolean operator (`a or b or c ...`, left
  // nested by ANTLR) as a balanced tree over its operands, so a long chain
  // does not make a deep tree: same operands, same left-to-right order, same
  // value. Short chains keep ANTLR's shape.
  ast::ExprPtr bool_chain(P::BinaryExprContext* top, const std::string& op) {
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
  ast::ExprPtr balanced(std::vector<ast::ExprPtr>& kids, size_t lo, size_t hi, const std::string& op) {
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
  static constexpr size_t kBalanceAbove = 32;  // operands; below, ANTLR's left-nested shape is kept

  ast::ExprPtr expr(P::ExprContext* ctx) {
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

  ast::ExprPtr primary(P::PrimaryContext* ctx) {
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

  std::vector<ast::FieldInit> field_inits(P::FieldInitsContext* f) {
    std::vector<ast::FieldInit> out;
    if (!f) return out;
    for (auto* fi : f->fieldInit()) {
      ast::FieldInit x;
      x.name = name(fi->name());
      x.where = range(fi->name());
      x.value = expr(fi->expr());
      out.push_back(std::move(x));
    }
    return out;
  }

  void extractor(P::ExtractorDeclContext* c, ast::File& out) {
    ast::Extractor x;
    x.name = c->IDENT()->getText();
    x.where = range(c->IDENT());
    for (auto* n : c->name()) x.sources.emplace_back(name(n), range(n));
    if (auto* k = c->keepClause()) {
      x.keep_range = range(k);
      for (auto* side : k->keepSide()) {
        auto& slot = side->side->getText() == "before" ? x.keep_before_ns : x.keep_after_ns;
        if (slot) diags_.error("E0101", range(side), "'keep' gives the " + side->side->getText() + " side twice");
        slot = parse_duration(side->DURATION());
      }
    }
    for (auto* item : c->extractorItem()) {
      if (auto* m = dynamic_cast<P::MatchItemContext*>(item)) {
        ast::MatchClause clause;
        regex(m->REGEX(), clause.regex, clause.flags);
        clause.range = range(m->REGEX());
        x.matches.push_back(std::move(clause));
      } else if (auto* em = dynamic_cast<P::EmitItemContext*>(item)) {
        if (x.has_emit) diags_.error("E0101", range(em), "extractor '" + x.name + "' has more than one 'emit'");
        x.has_emit = true;
        x.emit_kind = kind_name(em->kindName());
        x.emit_range = range(em->kindName());
        x.emit_fields = field_inits(em->fieldInits());
      } else if (auto* t = dynamic_cast<P::LineTestItemContext*>(item)) {
        ast::LineTest lt;
        auto strings = t->STRING();
        lt.where = range(t);
        if (strings.size() == 2) lt.title = unquote(strings[0]);
        lt.line = unquote(strings.back());
        auto* ex = t->expectLine();
        if (dynamic_cast<P::ExpectNoneContext*>(ex)) {
          lt.expect_none = true;
        } else if (auto* ev = dynamic_cast<P::ExpectEventContext*>(ex)) {
          lt.expect_kind = kind_name(ev->kindName());
          lt.expect_range = range(ev->kindName());
          lt.fields = field_inits(ev->fieldInits());
        }
        x.tests.push_back(std::move(lt));
      }
    }
    out.extractors.push_back(std::move(x));
  }

  ast::Action action(P::ActionContext* c) {
    ast::Action a;
    a.where = range(c);
    auto target = [&](P::NodeTargetContext* t) {
      if (!t) return;
      if (dynamic_cast<P::JobTargetContext*>(t)) a.on_job = true;
      else if (auto* e = dynamic_cast<P::ExprTargetContext*>(t)) a.node = expr(e->expr());
    };
    if (auto* e = dynamic_cast<P::EmitActionContext*>(c)) {
      a.kind = ast::ActionKind::Emit;
      a.kind_name = kind_name(e->kindName());
      a.kind_range = range(e->kindName());
      target(e->nodeTarget());
      a.fields = field_inits(e->fieldInits());
    } else if (auto* s = dynamic_cast<P::SymptomActionContext*>(c)) {
      a.kind = ast::ActionKind::Symptom;
      a.kind_name = kind_name(s->kindName());
      a.kind_range = range(s->kindName());
      target(s->nodeTarget());
      if (s->keyClause()) a.key = expr(s->keyClause()->expr());
      if (s->priorityClause()) a.priority = expr(s->priorityClause()->expr());
      if (s->atClause()) a.at = expr(s->atClause()->expr());
      a.fields = field_inits(s->fieldInits());
    } else if (auto* d = dynamic_cast<P::DemoteActionContext*>(c)) {
      a.kind = ast::ActionKind::Demote;
      a.binding = d->IDENT()->getText();
      a.binding_range = range(d->IDENT());
      if (d->query()) a.query = query(d->query());
      a.reason = unquote(d->STRING());
      a.reason_range = range(d->STRING());
    } else if (auto* s2 = dynamic_cast<P::ScrubActionContext*>(c)) {
      a.kind = ast::ActionKind::Scrub;
      a.binding = s2->IDENT()->getText();
      a.binding_range = range(s2->IDENT());
      if (s2->query()) a.query = query(s2->query());
      a.reason = unquote(s2->STRING());
      a.reason_range = range(s2->STRING());
    } else if (auto* p = dynamic_cast<P::SetPriorityActionContext*>(c)) {
      a.kind = ast::ActionKind::SetPriority;
      a.binding = p->IDENT()->getText();
      a.binding_range = range(p->IDENT());
      a.value = expr(p->expr());
    } else if (auto* cl = dynamic_cast<P::ClassifyActionContext*>(c)) {
      a.kind = ast::ActionKind::Classify;
      a.binding = cl->IDENT()->getText();
      a.binding_range = range(cl->IDENT());
      a.domain = name(cl->name());
      a.domain_range = range(cl->name());
      a.sub_domain = unquote(cl->STRING());
      a.sub_domain_range = range(cl->STRING());
    } else if (auto* o = dynamic_cast<P::SetOutcomeActionContext*>(c)) {
      a.kind = ast::ActionKind::SetOutcome;
      auto names = o->name();
      auto strings = o->STRING();
      a.status = name(names[0]);
      a.domain_range = range(names[0]);
      if (names.size() > 1) {
        a.domain = name(names[1]);
        a.domain_range = range(names[1]);
        a.sub_domain = unquote(strings[0]);
        a.sub_domain_range = range(strings[0]);
      }
      a.reason = unquote(strings.back());
      a.reason_range = range(strings.back());
    }
    return a;
  }

  void rule(P::RuleDeclContext* c, ast::File& out) {
    ast::Rule r;
    r.name = c->IDENT()->getText();
    r.where = range(c->IDENT());
    r.stage = name(c->name());
    r.stage_range = range(c->name());
    if (auto* f = c->forClause()) {
      r.for_binding = f->IDENT()->getText();
      r.for_binding_range = range(f->IDENT());
      r.for_query = query(f->query());
    }
    for (auto* w : c->whereClause()) r.wheres.push_back(expr(w->expr()));
    if (auto* g = c->groupClause()) {
      r.has_group = true;
      r.group_range = range(g);
      for (auto* k : g->expr()) r.group_keys.push_back(expr(k));
      if (g->DURATION()) r.group_within_ns = parse_duration(g->DURATION());
    }
    for (auto* a : c->action()) r.actions.push_back(action(a));
    out.rules.push_back(std::move(r));
  }

  void scenario(P::ScenarioDeclContext* c, ast::File& out) {
    ast::Scenario s;
    s.title = unquote(c->STRING());
    s.where = range(c->STRING());
    for (auto* item : c->scenarioItem()) {
      if (auto* n = dynamic_cast<P::ScenarioNodesContext*>(item)) {
        for (auto* str : n->STRING()) s.nodes.push_back(unquote(str));
      } else if (auto* wl = dynamic_cast<P::ScenarioWorkloadContext*>(item)) {
        s.workload_id = unquote(wl->STRING());
        if (wl->name()) {
          s.scheduler = name(wl->name());
          s.scheduler_range = range(wl->name());
        }
      } else if (auto* t = dynamic_cast<P::ScenarioTerminalContext*>(item)) {
        s.terminal_state = name(t->name());
        s.terminal_range = range(t->name());
        if (auto* si = t->signedInt()) {
          int64_t v = parse_int(si->INT(), 10);
          s.terminal_exit = si->getText()[0] == '-' ? -v : v;
        }
      } else if (auto* w = dynamic_cast<P::ScenarioWindowContext*>(item)) {
        s.has_window = true;
        s.window_start = unquote(w->STRING(0));
        s.window_end = unquote(w->STRING(1));
        s.window_range = range(w);
      } else if (auto* l = dynamic_cast<P::ScenarioLogContext*>(item)) {
        ast::ScenarioLog log;
        log.host = unquote(l->STRING(0));
        log.source = name(l->name());
        log.text = unquote(l->STRING(1));
        log.where = range(l);
        s.logs.push_back(std::move(log));
      } else if (auto* m = dynamic_cast<P::ScenarioMetricContext*>(item)) {
        ast::ScenarioMetric sm;
        sm.host = unquote(m->STRING(0));
        sm.source = name(m->name());
        sm.ts = unquote(m->STRING(1));
        sm.name = unquote(m->STRING(2));
        if (auto* ls = m->metricLabels())
          for (size_t k = 0; k < ls->name().size(); ++k) sm.labels.emplace_back(name(ls->name(k)), unquote(ls->STRING(k)));
        auto* num = m->signedNumber();
        std::string text = num->INT() ? num->INT()->getText() : num->FLOAT()->getText();
        sm.value = std::strtod(text.c_str(), nullptr);
        if (num->getText()[0] == '-') sm.value = -sm.value;
        sm.where = range(m);
        s.metrics.push_back(std::move(sm));
      } else if (auto* e = dynamic_cast<P::ScenarioExpectItemContext*>(item)) {
        ast::ScenarioExpect x;
        auto* se = e->scenarioExpect();
        x.where = range(e);
        if (auto* st = dynamic_cast<P::ExpectStatusContext*>(se)) {
          x.kind = ast::ScenarioExpectKind::Status;
          x.value = name(st->name());
        } else if (auto* d = dynamic_cast<P::ExpectDomainContext*>(se)) {
          x.kind = ast::ScenarioExpectKind::Domain;
          x.value = name(d->name());
        } else if (auto* sd = dynamic_cast<P::ExpectSubDomainContext*>(se)) {
          x.kind = ast::ScenarioExpectKind::SubDomain;
          x.value = unquote(sd->STRING());
        } else if (auto* cu = dynamic_cast<P::ExpectCulpritsContext*>(se)) {
          x.kind = ast::ScenarioExpectKind::Culprits;
          for (auto* str : cu->STRING()) x.culprits.push_back(unquote(str));
        } else if (auto* ss = dynamic_cast<P::ExpectSymptomStateContext*>(se)) {
          x.kind = ast::ScenarioExpectKind::SymptomState;
          x.kind_pattern = kind_pattern(ss->kindPattern());
          if (ss->STRING()) x.node = unquote(ss->STRING());
          x.value = name(ss->name());
        } else if (auto* ns = dynamic_cast<P::ExpectNoSymptomContext*>(se)) {
          x.kind = ast::ScenarioExpectKind::NoSymptom;
          x.kind_pattern = kind_pattern(ns->kindPattern());
          if (ns->STRING()) x.node = unquote(ns->STRING());
        }
        s.expects.push_back(std::move(x));
      }
    }
    out.scenarios.push_back(std::move(s));
  }

  void file(P::FileContext* f, ast::File& out) {
    for (auto* d : f->decl()) {
      if (auto* c = d->catalogDecl()) {
        if (out.catalog) {
          diags_.error("E0102", range(c), "a file may declare its catalog only once");
          continue;
        }
        out.catalog = ast::CatalogHeader{unquote(c->STRING(0)), unquote(c->STRING(1)), range(c)};
      } else if (auto* x = d->extractorDecl()) {
        extractor(x, out);
      } else if (auto* r = d->ruleDecl()) {
        rule(r, out);
      } else if (auto* s = d->scenarioDecl()) {
        scenario(s, out);
      }
    }
  }

 private:
  const SourceFile& file_;
  Diagnostics& diags_;
  size_t depth_ = 0;
  bool depth_reported_ = false;
};

// The first byte of `text` that is not well-formed UTF-8, or npos.
size_t first_invalid_utf8(std::string_view text) {
  size_t i = ascii_prefix_length(text);
  if (i == text.size()) return std::string_view::npos;
  // Sequence by sequence from the first non-ASCII byte: the longest valid
  // prefix ends where is_valid_utf8 fails.
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > text.size() || !is_valid_utf8(text.substr(i, len))) return i;
    i += len;
  }
  return std::string_view::npos;
}

SourceRange point_at(const SourceFile& f, size_t offset) {
  SourceRange r;
  r.file = &f;
  auto it = std::upper_bound(f.line_starts.begin(), f.line_starts.end(), static_cast<uint32_t>(offset));
  size_t line = static_cast<size_t>(it - f.line_starts.begin());  // 1-based
  r.line = static_cast<uint32_t>(line);
  r.col = static_cast<uint32_t>(offset - f.line_starts[line - 1] + 1);
  r.end_line = r.line;
  r.end_col = r.col + 1;
  return r;
}

// ANTLR's recursive descent recurses once per parenthesis, bracket and
// prefix operator (`not`, unary `-`): 20,000 of them overflow the stack
// inside the generated parser. Before parsing, the tokens are scanned for
// that nesting without recursion (per bracket level, the prefix operators
// still waiting for their operand), and a file deeper than the limit is
// refused at the token where it gets too deep.
bool nesting_within_limit(antlr4::CommonTokenStream& tokens, const SourceFile& f, Diagnostics& diags) {
  tokens.fill();
  std::vector<size_t> pending{0};  // prefix operators waiting, per open bracket
  size_t prefix_total = 0;
  for (antlr4::Token* t : tokens.getTokens()) {
    if (t->getType() == antlr4::Token::EOF || t->getChannel() != antlr4::Token::DEFAULT_CHANNEL) continue;
    std::string text = t->getText();
    if (text == "(" || text == "[" || text == "{") {
      pending.push_back(0);
    } else if (text == ")" || text == "]" || text == "}") {
      if (pending.size() > 1) {
        prefix_total -= pending.back();
        pending.pop_back();
      }
      prefix_total -= pending.back();  // the bracketed operand completes the level's prefix operators
      pending.back() = 0;
    } else if (text == "not" || text == "-") {
      ++pending.back();
      ++prefix_total;
    } else {
      prefix_total -= pending.back();
      pending.back() = 0;
    }
    size_t depth = pending.size() - 1 + prefix_total;
    if (depth > limits::kExprDepth) {
      SourceRange r;
      r.file = &f;
      r.line = static_cast<uint32_t>(t->getLine());
      r.col = byte_column(f, t->getLine(), t->getCharPositionInLine());
      r.end_line = r.line;
      r.end_col = r.col + static_cast<uint32_t>(std::max<size_t>(1, text.size()));
      diags.error("E0703", r,
                  limits::exceeded("expr_depth", limits::kExprDepth,
                                   "parentheses, brackets and prefix operators nest deeper"));
      return false;
    }
  }
  return true;
}

// Turns the raw errors of one file into diagnostics, one per root cause:
//  * an unclosed '{' (braces are counted on tokens, so braces inside strings
//    and regexes do not count) is the cause of every error after it: one
//    error where the parser gave up, with a note at the brace;
//  * otherwise an error is kept only when a declaration (extractor, rule,
//    scenario, catalog at the start of a line) begins between it and the
//    error before it: ANTLR's recovery inside one declaration produces
//    follow-ons that describe its own confusion, not the text;
//  * '=' where a comparison was expected gets the '==' hint.
void report_syntax_errors(const SourceFile& file, const std::vector<antlr4::Token*>& toks,
                          const std::vector<RawSyntaxError>& errors, Diagnostics& diags) {
  auto token_range = [&](antlr4::Token* t) {
    SourceRange r;
    r.file = &file;
    r.line = static_cast<uint32_t>(t->getLine());
    r.col = byte_column(file, t->getLine(), t->getCharPositionInLine());
    r.end_line = r.line;
    r.end_col = r.col + static_cast<uint32_t>(std::max<size_t>(1, t->getText().size()));
    return r;
  };
  std::vector<antlr4::Token*> open;
  for (auto* t : toks) {
    if (t->getType() == antlr4::Token::EOF) break;
    std::string text = t->getText();
    if (text == "{") open.push_back(t);
    else if (text == "}" && !open.empty()) open.pop_back();
  }
  if (!open.empty()) {
    // The innermost unclosed brace is the one the parser was inside when it
    // failed; report at the first error after it.
    antlr4::Token* brace = open.back();
    const RawSyntaxError* at = &errors.front();
    for (const auto& e : errors)
      if (e.token_index > brace->getTokenIndex()) {
        at = &e;
        break;
      }
    std::string msg = fmt::format("syntax error: unexpected {}: the '{{' on line {} is never closed",
                                  at->at_eof ? std::string("end of file") : "'" + at->token + "'", brace->getLine());
    std::vector<DiagnosticNote> notes;
    for (size_t i = open.size(); i-- > 0 && notes.size() < 3;)
      notes.push_back({token_range(open[i]), notes.empty() ? "'{' opened here" : "and this '{' is not closed either"});
    diags.error("E0001", at->where, msg, open.size() == 1 ? "add the missing '}'" : fmt::format("add the {} missing '}}'", open.size()),
                std::move(notes));
    return;
  }
  auto declaration_between = [&](size_t from, size_t to) {
    for (size_t i = from + 1; i <= to && i < toks.size(); ++i) {
      std::string t = toks[i]->getText();
      if (toks[i]->getCharPositionInLine() == 0 && (t == "extractor" || t == "rule" || t == "scenario" || t == "catalog"))
        return true;
    }
    return false;
  };
  const RawSyntaxError* prev = nullptr;
  for (const auto& e : errors) {
    if (prev && !declaration_between(prev->token_index, e.token_index)) continue;
    prev = &e;
    std::string help;
    if (e.token == "=") help = "to compare two values write '=='; a single '=' only assigns, in 'set X.priority = EXPR'";
    diags.error("E0001", e.where, "syntax error: " + plain_syntax_message(e), help);
  }
}

// ANTLR's own input stream converts between UTF-8 and UTF-32 with
// std::wstring_convert, one virtual call per character: for the bundled
// catalog that conversion alone cost about as much as lexing. The text is
// checked to be valid UTF-8 before it gets here (E0003), so decoding needs
// no error handling; token texts are encoded back the same way. Same
// characters, same indices (code points), same token texts as the base class.
class Utf8InputStream final : public antlr4::ANTLRInputStream {
 public:
  explicit Utf8InputStream(std::string_view text) {
    _data.reserve(text.size());
    const auto* b = reinterpret_cast<const unsigned char*>(text.data());
    const auto* end = b + text.size();
    while (b < end) {
      const unsigned char c = *b;
      const int extra = c < 0x80 ? 0 : c < 0xE0 ? 1 : c < 0xF0 ? 2 : 3;
      char32_t cp = extra == 0 ? c : extra == 1 ? (c & 0x1F) : extra == 2 ? (c & 0x0F) : (c & 0x07);
      for (int k = 1; k <= extra && b + k < end; ++k) cp = (cp << 6) | (b[k] & 0x3F);
      _data.push_back(cp);
      b += 1 + extra;
    }
    p = 0;
  }

  std::string getText(const antlr4::misc::Interval& interval) override {
    if (interval.a < 0 || interval.b < 0) return "";
    const size_t start = static_cast<size_t>(interval.a);
    if (start >= _data.size()) return "";
    const size_t stop = std::min(static_cast<size_t>(interval.b), _data.size() - 1);
    std::string out;
    out.reserve(stop - start + 1);
    for (size_t i = start; i <= stop; ++i) append_utf8(out, static_cast<uint32_t>(_data[i]));
    return out;
  }
};

std::mutex& antlr_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

bool parse_attr(std::shared_ptr<const SourceFile> source, ast::File& out, Diagnostics& diags) {
  out = ast::File{};
  out.source = source;
  diags.keep(source);
  // ANTLR's input stream converts the text to UTF-32 and throws on the
  // first invalid byte without saying where; say it here, precisely.
  if (size_t bad = first_invalid_utf8(source->text); bad != std::string_view::npos) {
    diags.error("E0003", point_at(*source, bad),
                fmt::format("the file is not valid UTF-8 (byte 0x{:02x} at offset {})",
                            static_cast<unsigned char>(source->text[bad]), bad));
    return false;
  }
  std::lock_guard<std::mutex> lock(antlr_mutex());
  size_t errors_before = diags.error_count();
  try {
    Utf8InputStream input(source->text);
    culprit_antlr::AttrLexer lexer(&input);
    antlr4::CommonTokenStream tokens(&lexer);
    culprit_antlr::AttrParser parser(&tokens);
    ErrorCollector collector(*source);
    lexer.removeErrorListeners();
    lexer.addErrorListener(&collector);
    if (!nesting_within_limit(tokens, *source, diags)) return false;
    tokens.seek(0);
    // Two-stage parsing: SLL prediction without error recovery first (most
    // of the parse time goes to full-context prediction, which a valid
    // catalog never needs); only a file it cannot parse is parsed again in
    // full LL mode, whose errors are the ones reported. Same tree either way.
    parser.removeErrorListeners();
    parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
    parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::SLL);
    P::FileContext* tree = nullptr;
    try {
      tree = parser.file();
    } catch (const antlr4::ParseCancellationException&) {
      tree = nullptr;
    }
    if (!tree) {
      tokens.seek(0);
      parser.reset();
      parser.setErrorHandler(std::make_shared<antlr4::DefaultErrorStrategy>());
      parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::LL);
      parser.addErrorListener(&collector);
      tree = parser.file();
    }
    if (!collector.errors.empty()) {
      tokens.fill();
      report_syntax_errors(*source, tokens.getTokens(), collector.errors, diags);
      return false;
    }
    Translator(*source, diags).file(tree, out);
  } catch (const std::exception& e) {
    // ANTLR reports problems through the listener; anything thrown is an
    // internal failure (e.g. invalid UTF-8 in the input stream) and is
    // reported as a syntax error at the top of the file.
    SourceRange r{source.get(), 1, 1, 1, 2};
    diags.error("E0001", r, std::string("cannot parse file: ") + e.what());
    return false;
  }
  return diags.error_count() == errors_before;
}

}  // namespace culprit

namespace culprit {

bool lex_attr(const SourceFile& source, std::vector<AttrToken>& out) {
  out.clear();
  if (first_invalid_utf8(source.text) != std::string_view::npos) return false;  // as parse_attr: E0003
  // ANTLR's indices count code points; map them back to bytes.
  std::vector<size_t> byte_of;
  byte_of.reserve(source.text.size() + 1);
  for (size_t i = 0; i < source.text.size(); ++i)
    if ((static_cast<unsigned char>(source.text[i]) & 0xC0) != 0x80) byte_of.push_back(i);
  byte_of.push_back(source.text.size());
  std::lock_guard<std::mutex> lock(antlr_mutex());
  bool ok = true;
  try {
    Utf8InputStream input(source.text);
    culprit_antlr::AttrLexer lexer(&input);
    lexer.removeErrorListeners();
    using L = culprit_antlr::AttrLexer;
    for (auto t = lexer.nextToken(); t->getType() != antlr4::Token::EOF; t = lexer.nextToken()) {
      AttrToken a;
      a.text = t->getText();
      size_t b = t->getStartIndex(), e = t->getStopIndex() + 1;
      a.begin = b < byte_of.size() ? byte_of[b] : source.text.size();
      a.end = e < byte_of.size() ? byte_of[e] : source.text.size();
      switch (t->getType()) {
        case L::STRING: a.kind = AttrToken::Kind::String; break;
        case L::REGEX: a.kind = AttrToken::Kind::Regex; break;
        case L::INT: case L::HEX: case L::FLOAT: case L::DURATION: a.kind = AttrToken::Kind::Number; break;
        case L::IDENT: a.kind = AttrToken::Kind::Word; break;
        case L::UNKNOWN_CHAR: a.kind = AttrToken::Kind::Unknown; ok = false; break;
        default:
          a.kind = !a.text.empty() && (std::isalpha(static_cast<unsigned char>(a.text[0])) || a.text[0] == '_') ? AttrToken::Kind::Word
                                                                                                                 : AttrToken::Kind::Punct;
      }
      out.push_back(std::move(a));
    }
  } catch (const std::exception&) {
    return false;
  }
  return ok;
}

std::string antlr_runtime_version() { return antlr4::RuntimeMetaData::VERSION; }

std::string antlr_runtime_identity() {
  // A function's address, not a variable's: data may be copied into the
  // executable (copy relocations), code never is.
  auto in_runtime = static_cast<size_t (*)()>(&antlr4::misc::MurmurHash::initialize);
  return antlr_runtime_version() + " " + build_id_of(reinterpret_cast<const void*>(in_runtime));
}
}  // namespace culprit
