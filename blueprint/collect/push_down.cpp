#include "blueprint/collect/push_down.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace culprit::blueprint {

std::string regex_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string logql_quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) out += fmt::format("\\x{:02x}", c);
        else out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

namespace {

// Capture groups become plain groups: the filter only tests, and Go's
// regexp would reject a name used twice in one alternation.
std::string plain_groups(const std::string& re) {
  std::string out;
  for (size_t i = 0; i < re.size(); ++i) {
    if (re[i] == '\\' && i + 1 < re.size()) {
      out += re[i];
      out += re[++i];
      continue;
    }
    if (re.compare(i, 3, "(?P") == 0 && i + 3 < re.size() && re[i + 3] == '<') {
      size_t close = re.find('>', i);
      if (close != std::string::npos) {
        out += '(';
        i = close;
        continue;
      }
    }
    if (re.compare(i, 3, "(?<") == 0 && i + 3 < re.size() && re[i + 3] != '=' && re[i + 3] != '!') {
      size_t close = re.find('>', i);
      if (close != std::string::npos) {
        out += '(';
        i = close;
        continue;
      }
    }
    out += re[i];
  }
  return out;
}

// The longest run of printable ASCII in `atom` (a line holding the atom
// holds the run too), so the filter never carries bytes that FilteredRE2
// lower-cased as Latin-1 out of a UTF-8 sequence.
std::string ascii_part(const std::string& atom) {
  std::string best, cur;
  for (unsigned char c : atom) {
    if (c >= 0x20 && c < 0x7f) cur += static_cast<char>(c);
    else {
      if (cur.size() > best.size()) best = cur;
      cur.clear();
    }
  }
  return cur.size() > best.size() ? cur : best;
}

}  // namespace

std::map<std::string, LineFilter> catalog_line_filters(const Program& program) {
  std::map<std::string, LineFilter> out;
  const auto& cat = program.catalog();
  for (const auto& db : program.databases()) {
    LineFilter f;
    std::set<std::string> parts;
    bool unusable = false;
    for (int32_t k = 0; k < db.atom_count; ++k) {
      std::string a = ascii_part(db.atoms[static_cast<size_t>(db.atom_index[static_cast<size_t>(k)])]);
      if (a.empty()) {
        unusable = true;
        break;
      }
      if (parts.insert(regex_escape(a)).second) ++f.atoms;
    }
    for (int32_t local : db.unfiltered) {
      const auto& x = cat.extractors[static_cast<size_t>(db.extractors[static_cast<size_t>(local)])];
      std::string re = plain_groups(x.re2_pattern);
      if (x.dotall) re = "(?s:" + re + ")";
      if (parts.insert("(?:" + re + ")").second) ++f.regexes;
    }
    if (!unusable && !parts.empty()) {
      std::string alt;
      for (const auto& p : parts) alt += (alt.empty() ? "" : "|") + p;
      f.regex = "(?i)" + alt;
    } else {
      f = LineFilter{};
    }
    out[db.source] = f;
  }
  return out;
}

LineFilter combine_filters(const std::vector<const LineFilter*>& filters) {
  LineFilter f;
  std::string alt;
  for (const auto* x : filters) {
    if (!x || x->regex.empty()) return LineFilter{};
    alt += (alt.empty() ? "" : "|") + x->regex.substr(4);  // without "(?i)"
    f.atoms += x->atoms;
    f.regexes += x->regexes;
  }
  if (alt.empty()) return LineFilter{};
  f.regex = "(?i)" + alt;
  return f;
}

}  // namespace culprit::blueprint
