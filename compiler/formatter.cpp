#include "compiler/formatter.h"

#include <algorithm>
#include <set>
#include <vector>

#include "compiler/parser.h"

namespace culprit {

namespace {

using Kind = AttrToken::Kind;

bool one_of(const std::string& s, std::initializer_list<const char*> list) {
  for (const char* x : list)
    if (s == x) return true;
  return false;
}

// Words that begin a statement when they start a line outside parentheses.
bool statement_word(const std::string& w) {
  return one_of(w, {"match", "emit", "test", "line", "expect", "for", "where", "group", "symptom", "demote", "scrub", "set",
                    "classify", "nodes", "workload", "terminal", "window", "log", "catalog", "extractor", "rule", "scenario",
                    "table", "columns", "row"});
}

bool declaration_word(const std::string& w) { return one_of(w, {"catalog", "extractor", "rule", "scenario", "table"}); }

// Words after which '(' is a parenthesized expression, not a call.
bool operator_word(const std::string& w) {
  return one_of(w, {"and", "or", "not", "in", "where", "matches", "is", "because", "on", "by", "as", "stage", "within", "for",
                    "from", "to", "exit", "key", "priority", "emit", "symptom"});
}

// The text between two tokens: newlines and comments, in order.
struct GapItem {
  bool comment = false;
  std::string text;  // the comment, without trailing blanks
};

std::vector<GapItem> gap_items(std::string_view gap) {
  std::vector<GapItem> out;
  for (size_t i = 0; i < gap.size(); ++i) {
    if (gap[i] == '\n') {
      out.push_back({false, ""});
    } else if (gap[i] == '#') {
      size_t e = gap.find('\n', i);
      if (e == std::string_view::npos) e = gap.size();
      std::string c(gap.substr(i, e - i));
      while (!c.empty() && (c.back() == ' ' || c.back() == '\t' || c.back() == '\r')) c.pop_back();
      out.push_back({true, c});
      i = e - 1;
    }
  }
  return out;
}

class Layout {
 public:
  explicit Layout(const std::string& text, const std::vector<AttrToken>& toks) : text_(text), toks_(toks) {}

  std::string run() {
    for (size_t i = 0; i <= toks_.size(); ++i) {
      size_t gap_begin = i == 0 ? 0 : toks_[i - 1].end;
      size_t gap_end = i == toks_.size() ? text_.size() : toks_[i].begin;
      gap(i, gap_items(std::string_view(text_).substr(gap_begin, gap_end - gap_begin)));
      if (i < toks_.size()) token(i);
    }
    end_line();
    while (out_.size() >= 2 && out_[out_.size() - 1] == '\n' && out_[out_.size() - 2] == '\n') out_.pop_back();
    if (out_ == "\n") out_.clear();
    return out_;
  }

 private:
  const std::string& text_;
  const std::vector<AttrToken>& toks_;
  std::string out_, cur_;
  bool line_open_ = false;     // cur_ holds something
  int depth_ = 0, paren_ = 0;  // open '{', open '(' and '['
  int newlines_ = 0;           // since the last token or comment
  bool pending_because_ = false;
  size_t line_indent_ = 0;            // of the current line
  std::vector<size_t> paren_indent_;  // the indent of the line each open '(' or '[' is on
  // The indent of the current `where` line at each paren level (-1: none),
  // for the `and`/`or` lines of its condition.
  std::vector<int> where_indent_ = {-1};
  bool need_blank_ = false;
  std::string last_on_line_;   // the previous line's last token

  void end_line() {
    if (!line_open_) return;
    while (!cur_.empty() && cur_.back() == ' ') cur_.pop_back();
    out_ += cur_ + "\n";
    cur_.clear();
    line_open_ = false;
  }
  void blank_line() {
    if (!out_.empty() && (out_.size() < 2 || out_.substr(out_.size() - 2) != "\n\n")) out_ += "\n";
  }
  void start_line(const std::string& indent) {
    if (need_blank_ || newlines_ >= 2) blank_line();
    need_blank_ = false;
    cur_ = indent;
    line_open_ = true;
  }

  int base_depth(size_t i) const { return std::max(0, depth_ - (i < toks_.size() && toks_[i].text == "}" ? 1 : 0)); }

  void gap(size_t next, const std::vector<GapItem>& items) {
    newlines_ = 0;
    // A blank line between top-level declarations, before their comments.
    if (next < toks_.size() && depth_ == 0 && declaration_word(toks_[next].text) && next > 0 &&
        (toks_[next - 1].text == "}" || toks_[next - 1].kind == Kind::String))
      need_blank_ = true;
    for (const auto& it : items) {
      if (!it.comment) {
        ++newlines_;
        continue;
      }
      if (newlines_ == 0 && line_open_) {
        cur_ += "  " + it.text;  // trailing comment
      } else {
        end_line();
        start_line(std::string(static_cast<size_t>(2 * base_depth(next)), ' '));
        cur_ += it.text;
        end_line();
      }
      newlines_ = 0;
    }
  }

  bool field_init(size_t i) const { return toks_[i].kind == Kind::Word && i + 1 < toks_.size() && toks_[i + 1].text == ":"; }

  // Whether `tok` continues the previous line's statement.
  bool continuation(size_t i) const {
    const std::string& t = toks_[i].text;
    if (paren_ > 0) return true;
    if (t == "}" || last_on_line_ == "{" || last_on_line_ == "}" || last_on_line_.empty()) return false;
    if (field_init(i) && depth_ > 0) return false;
    if (toks_[i].kind == Kind::Word && statement_word(t)) return pending_because_ && t == "where" ? true : false;
    return true;
  }

  bool space_between(size_t i) const {
    const AttrToken& p = toks_[i - 1];
    const AttrToken& c = toks_[i];
    if (one_of(c.text, {",", ")", "]", ":", "."})) return false;
    if (one_of(p.text, {"(", "[", "."})) return false;
    if (p.text == "{" && c.text == "}") return false;
    if (c.text == "(" && p.kind == Kind::Word && !operator_word(p.text)) return false;  // a call
    if (p.text == "-" && unary_minus(i - 1)) return false;
    return true;
  }

  bool unary_minus(size_t i) const {
    if (i == 0) return true;
    const AttrToken& p = toks_[i - 1];
    if (p.kind == Kind::Punct) return !one_of(p.text, {")", "]", "}"});
    if (p.kind == Kind::Word) return operator_word(p.text) || one_of(p.text, {"exit", "then", "row"});
    return false;
  }

  void token(size_t i) {
    const AttrToken& t = toks_[i];
    bool new_line = !line_open_ || newlines_ > 0 || (depth_ == 0 && declaration_word(t.text) && i > 0);
    if (new_line) {
      end_line();
      size_t indent = static_cast<size_t>(2 * base_depth(i));
      int& where = where_indent_.back();
      if (one_of(t.text, {"and", "or"}) && where >= 0 && (paren_indent_.empty() || continuation(i))) {
        indent = static_cast<size_t>(where) + 2;  // the conditions of a `where`, under it
      } else if (!paren_indent_.empty()) {
        // Inside ( or [: a hanging indent under the line that opened it;
        // the closing one goes back to that line's indent.
        indent = paren_indent_.back() + (one_of(t.text, {")", "]"}) ? 0 : 4);
      } else if (!continuation(i)) {
        where = -1;
      } else {
        indent += 4;
      }
      if (t.text == "where") where = static_cast<int>(indent);
      start_line(std::string(indent, ' '));
      line_indent_ = indent;
      if (t.kind == Kind::Word && paren_ == 0 && one_of(t.text, {"demote", "scrub"})) pending_because_ = true;
    } else if (space_between(i)) {
      cur_ += ' ';
    }
    cur_ += t.text;
    if (t.text == "{") ++depth_;
    else if (t.text == "}") depth_ = std::max(0, depth_ - 1);
    else if (t.text == "(" || t.text == "[") {
      ++paren_;
      paren_indent_.push_back(line_indent_);
      where_indent_.push_back(-1);
    } else if (t.text == ")" || t.text == "]") {
      paren_ = std::max(0, paren_ - 1);
      if (!paren_indent_.empty()) paren_indent_.pop_back();
      if (where_indent_.size() > 1) where_indent_.pop_back();
    }
    else if (t.text == "because") pending_because_ = false;
    last_on_line_ = t.text;
    newlines_ = 0;
  }
};

bool same_tokens(const std::vector<AttrToken>& a, const std::vector<AttrToken>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].text != b[i].text) return false;
  return true;
}

}  // namespace

bool format_attr(std::shared_ptr<const SourceFile> source, std::string& out, Diagnostics& diags) {
  out.clear();
  ast::File tree;
  if (!parse_attr(source, tree, diags)) return false;
  std::vector<AttrToken> toks;
  if (!lex_attr(*source, toks)) return false;
  std::string first = Layout(source->text, toks).run();
  // The layout must keep every token and be its own fixed point.
  auto again = make_source_file(source->path, first);
  std::vector<AttrToken> toks2;
  bool ok = lex_attr(*again, toks2) && same_tokens(toks, toks2) && Layout(again->text, toks2).run() == first;
  if (!ok) {
    diags.error("E0001", SourceRange{source.get(), 1, 1, 1, 2},
                "internal error: the formatter would change this file's tokens; it is left as it is");
    return false;
  }
  out = std::move(first);
  return true;
}

}  // namespace culprit
