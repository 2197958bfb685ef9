// `culprit export-patterns`: see export_patterns.h.
//
// The pcre dialect is the RE2 pattern with capture names dropped (ripgrep's
// Rust regex accepts RE2 syntax); python is the RE2 pattern nearly as is. The ERE
// dialect is a translation for `grep -E`: groups become plain groups, Perl
// classes become bracket expressions, lazy quantifiers become greedy (the
// set of matching lines is unchanged), and case-insensitive parts - a
// caseless extractor or an inline (?i) / (?i:...) - have every letter spelled
// as both cases ([aA]), so one pattern file serves `grep -E -f` without -i.
// A pattern that cannot be translated is reported on stderr and skipped.
#include "cli/export_patterns.h"

#include <fmt/format.h>

#include <cctype>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "cli/args.h"
#include "compiler/catalog_loader.h"

namespace culprit::cli {
namespace {

constexpr int kOk = 0, kBadInput = 2;

const char* kHelp = R"(Usage: culprit export-patterns [options]

Prints the catalog's extractor patterns, one per line, for peer tools:
  rg -j1 -c -f FILE        (--dialect pcre, the default)
  grep -E -c -f FILE       (--dialect ere)
  bench/python_baseline.py (--dialect python)

Options:
  --dialect pcre|ere|python  pattern syntax (default pcre)
  --source S                 only extractors that read source S (repeatable)
  --rules PATH               add a rule directory or .attr file (repeatable)
  --no-stdlib                do not load the bundled catalog
  --test-lines               instead of patterns, print each exported pattern's
                             must-match test lines as "INDEX<TAB>LINE", INDEX
                             being the pattern's 0-based line in the output
  -h, --help                 this help

Case-insensitive extractors are wrapped in (?i:...) in the pcre dialect
(ripgrep joins all patterns into one), get a leading (?i) in python; in the ere dialect their letters are spelled [aA], so no -i is
needed. Patterns that cannot be translated are reported on stderr (with a
count) and skipped.

Exit status: 0 patterns printed, 2 bad usage or rules that do not compile.
)";

struct Translation {
  std::string out;
  std::string error;
};

// Adds c, and its other case when caseless, to a bracket expression's items.
void add_class_char(std::set<char>& chars, char c, bool caseless) {
  chars.insert(c);
  if (caseless && std::isalpha(static_cast<unsigned char>(c))) {
    chars.insert(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    chars.insert(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  }
}

// Translates one RE2 pattern to a POSIX ERE for GNU grep.
Translation to_ere(const std::string& p, bool caseless_all) {
  Translation t;
  std::string& o = t.out;
  // Per group: the caseless flag in force outside it (restored at ')').
  std::vector<bool> stack;
  bool ci = caseless_all;
  size_t i = 0, n = p.size();
  auto fail = [&](const std::string& why) {
    t.error = fmt::format("{} at offset {}", why, i);
    return t;
  };
  auto literal = [&](char c) {
    if (ci && std::isalpha(static_cast<unsigned char>(c))) {
      o += '[';
      o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      o += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      o += ']';
      return;
    }
    if (std::string(".[]()*+?{}|^$\\").find(c) != std::string::npos) o += '\\';
    o += c;
  };
  while (i < n) {
    char c = p[i];
    if (c == '\\') {
      if (i + 1 >= n) return fail("trailing backslash");
      char e = p[i + 1];
      i += 2;
      switch (e) {
        case 'd': o += "[0-9]"; break;
        case 'D': o += "[^0-9]"; break;
        case 's': o += "[[:space:]]"; break;
        case 'S': o += "[^[:space:]]"; break;
        case 'w': o += "[[:alnum:]_]"; break;
        case 'W': o += "[^[:alnum:]_]"; break;
        case 'b': o += "\\b"; break;  // GNU extension
        case 'B': o += "\\B"; break;
        case 'A': o += "^"; break;
        case 'z': o += "$"; break;
        case 't': o += '\t'; break;
        case 'n': case 'r': case 'f': case 'v': return fail(fmt::format("escape \\{} (no such character in a line)", e));
        default:
          if (std::isalnum(static_cast<unsigned char>(e))) return fail(fmt::format("unsupported escape \\{}", e));
          literal(e);
      }
      continue;
    }
    if (c == '[') {
      // Bracket expression: collect items, re-emit in POSIX order.
      ++i;
      bool neg = false;
      if (i < n && p[i] == '^') neg = true, ++i;
      std::set<char> chars;
      std::vector<std::string> ranges, classes;
      bool first = true;
      while (i < n && (p[i] != ']' || first)) {
        first = false;
        char lo;
        if (p[i] == '[' && i + 1 < n && p[i + 1] == ':') {
          size_t end = p.find(":]", i + 2);
          if (end == std::string::npos) return fail("bad POSIX class");
          classes.push_back(p.substr(i, end + 2 - i));
          i = end + 2;
          continue;
        }
        if (p[i] == '\\') {
          if (i + 1 >= n) return fail("trailing backslash");
          char e = p[i + 1];
          i += 2;
          if (e == 'd') { classes.push_back("[:digit:]"); continue; }
          if (e == 's') { classes.push_back("[:space:]"); continue; }
          if (e == 'w') { classes.push_back("[:alnum:]"); chars.insert('_'); continue; }
          if (e == 'D' || e == 'S' || e == 'W') return fail(fmt::format("\\{} inside a class", e));
          if (e == 't') lo = '\t';
          else if (e == 'n' || e == 'r') { continue; }  // never inside a line
          else if (std::isalnum(static_cast<unsigned char>(e))) return fail(fmt::format("unsupported escape \\{} in a class", e));
          else lo = e;
        } else {
          lo = p[i++];
        }
        if (i + 1 < n && p[i] == '-' && p[i + 1] != ']') {
          char hi = p[i + 1];
          i += 2;
          if (hi == '\\') {
            if (i >= n) return fail("trailing backslash");
            hi = p[i++];
            if (std::isalnum(static_cast<unsigned char>(hi))) return fail("escape as a range end");
          }
          ranges.push_back(std::string{lo, '-', hi});
          if (ci && std::isalpha(static_cast<unsigned char>(lo)) && std::isalpha(static_cast<unsigned char>(hi))) {
            bool lower = std::islower(static_cast<unsigned char>(lo));
            auto sw = [&](char x) {
              return static_cast<char>(lower ? std::toupper(static_cast<unsigned char>(x)) : std::tolower(static_cast<unsigned char>(x)));
            };
            ranges.push_back(std::string{sw(lo), '-', sw(hi)});
          }
          continue;
        }
        add_class_char(chars, lo, ci);
      }
      if (i >= n) return fail("unterminated class");
      ++i;  // ']'
      std::string body;
      bool close = chars.erase(']'), dash = chars.erase('-'), caret = chars.erase('^');
      if (close) body += ']';
      for (const auto& r : ranges) body += r;
      for (const auto& k : classes) body += k;
      for (char ch : chars) body += ch;
      if (caret) body += '^';  // never first: ']' or something precedes, or it is alone (below)
      if (dash) body += '-';
      if (body == "^" && !neg) {
        o += "\\^";
      } else if (body.empty()) {
        if (!neg) return fail("empty class");
        o += '.';  // [^\n]: any character of a line
      } else {
        if (caret && body[0] == '^') body = body.substr(1) + "^";  // keep '^' away from the front
        if (body == "^" && neg) return fail("class [^^]");
        o += '[';
        if (neg) o += '^';
        o += body;
        o += ']';
      }
      continue;
    }
    if (c == '(') {
      stack.push_back(ci);
      ++i;
      if (i < n && p[i] == '?') {
        ++i;
        if (i < n && p[i] == ':') {
          ++i;
        } else if (i < n && (p[i] == 'P' || p[i] == '<')) {
          size_t end = p.find('>', i);
          if (end == std::string::npos) return fail("bad named group");
          i = end + 1;
        } else {
          // Flags: (?flags) or (?flags:...). Only i, s (and their negation) mean anything here.
          bool on = true, flag_ci = ci;
          while (i < n && p[i] != ')' && p[i] != ':') {
            char f = p[i++];
            if (f == '-') on = false;
            else if (f == 'i') flag_ci = on;
            else if (f == 's' || f == 'm' || f == 'U') {
              if (f == 'U') return fail("flag U");
            } else return fail(fmt::format("unknown flag {}", f));
          }
          if (i >= n) return fail("unterminated flags");
          if (p[i] == ')') {  // (?i): applies to the rest of the enclosing group
            ++i;
            stack.pop_back();
            ci = flag_ci;
            continue;
          }
          ++i;  // ':'
          ci = flag_ci;
        }
      }
      o += '(';
      continue;
    }
    if (c == ')') {
      if (stack.empty()) return fail("unbalanced ')'");
      ci = stack.back();
      stack.pop_back();
      o += ')';
      ++i;
      continue;
    }
    if (c == '*' || c == '+' || c == '?' || c == '}') {
      o += c;
      ++i;
      if (i < n && p[i] == '?') ++i;  // lazy -> greedy: the same lines match
      continue;
    }
    if (c == '{' || c == '|' || c == '^' || c == '$' || c == '.') {
      o += c;
      ++i;
      continue;
    }
    literal(c);
    ++i;
  }
  if (!stack.empty()) return fail("unbalanced '('");
  return t;
}

// ripgrep joins every -f pattern into one alternation: a capture name used
// by two extractors would clash, and a leading (?i) would leak into the
// patterns after it. So names are dropped and case-insensitivity is scoped.
Translation to_pcre(const std::string& p, bool caseless) {
  Translation t;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\' && i + 1 < p.size()) {
      t.out += p.substr(i, 2);
      ++i;
    } else if (p.compare(i, 4, "(?P<") == 0 || (p.compare(i, 3, "(?<") == 0 && i + 3 < p.size() && p[i + 3] != '=' && p[i + 3] != '!')) {
      size_t end = p.find('>', i);
      if (end == std::string::npos) {
        t.error = "bad named group";
        return t;
      }
      t.out += '(';
      i = end;
    } else if (p[i] == '[') {  // copy a class verbatim ('(' inside is literal)
      size_t j = i + 1;
      if (j < p.size() && p[j] == '^') ++j;
      if (j < p.size() && p[j] == ']') ++j;
      while (j < p.size() && p[j] != ']') j += (p[j] == '\\') ? 2 : 1;
      t.out += p.substr(i, j + 1 - i);
      i = j;
    } else {
      t.out += p[i];
    }
  }
  if (caseless) t.out = "(?i:" + t.out + ")";
  return t;
}

Translation to_python(const std::string& p, bool caseless) {
  Translation t;
  std::string& o = t.out;
  if (caseless) o = "(?i)";
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\' && i + 1 < p.size()) {
      char e = p[i + 1];
      if (e == 'z') o += "\\Z";
      else if (e == 'C' || e == 'p' || e == 'P' || e == 'Q' || e == 'E') {
        t.error = fmt::format("escape \\{} has no Python equivalent", e);
        return t;
      } else o += p.substr(i, 2);
      ++i;
      continue;
    }
    // Inline global flags are only allowed at the start in Python >= 3.11;
    // a (?i) mid-pattern becomes a scoped (?i:...) of the rest of its group.
    if (p.compare(i, 4, "(?i)") == 0 && i > 0) {
      t.error = "(?i) in mid-pattern";
      return t;
    }
    o += p[i];
  }
  return t;
}

}  // namespace

int cmd_export_patterns(int argc, char** argv) {
  ArgSpec spec{{"no-stdlib", "help", "test-lines"}, {"dialect", "source", "rules"}};
  Args a;
  std::string err;
  auto usage = [](const std::string& msg) {
    std::cerr << fmt::format("culprit export-patterns: {}\nTry 'culprit export-patterns --help'.\n", msg);
    return kBadInput;
  };
  if (!parse_args(argc, argv, 2, spec, a, err)) return usage(err);
  if (a.has("help")) {
    std::cout << kHelp;
    return kOk;
  }
  if (!a.positionals.empty()) return usage(fmt::format("unexpected argument '{}'", a.positionals[0]));
  std::string dialect = a.last("dialect").value_or("pcre");
  if (dialect != "pcre" && dialect != "ere" && dialect != "python") return usage("--dialect must be pcre, ere or python");
  std::vector<std::string> paths;
  if (!a.has("no-stdlib")) paths.push_back(stdlib_directory());
  for (const auto& r : a.all("rules")) paths.push_back(r);
  if (paths.empty()) return usage("no rules to load (give --rules or drop --no-stdlib)");
  auto loaded = load_catalog(paths);
  if (!loaded.ok()) {
    std::cerr << loaded.diagnostics.render(false);
    std::cerr << "culprit export-patterns: the rules do not compile\n";
    return kBadInput;
  }
  std::set<std::string> want;
  for (const auto& s : a.all("source")) want.insert(s);
  int skipped = 0, index = 0;
  for (const auto& x : loaded.catalog->extractors) {
    if (!want.empty()) {
      bool hit = false;
      for (const auto& s : x.sources) hit = hit || want.count(s);
      if (!hit) continue;
    }
    Translation t;
    if (dialect == "pcre") t = to_pcre(x.re2_pattern, x.caseless);
    else if (dialect == "python") t = to_python(x.re2_pattern, x.caseless);
    else t = to_ere(x.re2_pattern, x.caseless);
    if (t.out.find('\n') != std::string::npos && t.error.empty()) t.error = "newline in the pattern";
    if (!t.error.empty()) {
      std::cerr << fmt::format("culprit export-patterns: skipped {} ({}): {}\n", x.name, dialect, t.error);
      ++skipped;
      continue;
    }
    if (a.has("test-lines")) {
      for (const auto& lt : x.tests)
        if (!lt.expect_none) std::cout << index << '\t' << lt.line << '\n';
    } else {
      std::cout << t.out << '\n';
    }
    ++index;
  }
  if (skipped) std::cerr << fmt::format("culprit export-patterns: {} pattern{} skipped\n", skipped, skipped == 1 ? "" : "s");
  std::cerr << fmt::format("culprit export-patterns: {} pattern{} exported ({})\n", index, index == 1 ? "" : "s", dialect);
  return kOk;
}

}  // namespace culprit::cli
