// The ANTLR fence's door (compiler/parser_internal.h lists the fence's
// files): parse_attr and lex_attr (compiler/parser.h) run the generated lexer
// and parser here, behind the process-wide lock, with two-stage prediction;
// a nesting pre-check keeps ANTLR's recursion bounded; syntax errors are
// collected from ANTLR's listener and grouped into one diagnostic per cause.
//
// Separate from the translation of the parse tree (parser_antlr_translate_*.cpp)
// because running ANTLR (its streams, its lock, its exceptions, its error
// recovery) is a different job from reading the tree it built.

#include "compiler/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "base/build_id.h"
#include "base/limits.h"
#include "base/text_util.h"
#include "compiler/parser_antlr_translator.h"
#include "compiler/parser_internal.h"

#include "AttrLexer.h"
#include "AttrParser.h"
#include "antlr4-runtime.h"

namespace culprit {
namespace {

using parser_internal::byte_column;
using parser_internal::first_invalid_utf8;
using parser_internal::P;
using parser_internal::plain_syntax_message;
using parser_internal::point_at;
using parser_internal::RawSyntaxError;
using parser_internal::Translator;

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
      if (toks[i]->getCharPositionInLine() == 0 && (t == "extractor" || t == "rule" || t == "scenario" || t == "catalog" || t == "table"))
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
