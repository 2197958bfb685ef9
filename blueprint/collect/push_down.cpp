#include "blueprint/collect/push_down.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <vector>

#include <re2/filtered_re2.h>

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

namespace {

std::string alternation(const std::set<std::string>& parts) {
  std::string alt;
  for (const auto& p : parts) alt += (alt.empty() ? "" : "|") + p;
  return "(?i)" + alt;
}

}  // namespace

std::map<std::string, LineFilter> catalog_line_filters(const Program& program) {
  std::map<std::string, LineFilter> out;
  const auto& cat = program.catalog();
  for (const auto& db : program.databases()) {
    LineFilter f;
    std::set<std::string> parts, tail_parts;
    auto keeps_last = [&](int local) {
      return cat.extractors[static_cast<size_t>(db.extractors[static_cast<size_t>(local)])].keep_last.has_value();
    };
    bool unusable = false;
    std::vector<int> present, found;
    for (int32_t k = 0; k < db.atom_count; ++k) {
      const int atom = db.atom_index[static_cast<size_t>(k)];
      std::string a = ascii_part(db.atoms[static_cast<size_t>(atom)]);
      if (a.empty()) {
        unusable = true;
        break;
      }
      // Which filtered extractors a line with this atom can reach (the
      // implied atoms count as present on every line, as in the scanner):
      // only `keep last` ones puts the atom in the tail.
      present = db.implied_atoms;
      present.insert(std::lower_bound(present.begin(), present.end(), atom), atom);
      db.filter->AllPotentials(present, &found);
      bool reaches = false, tail_only = true;
      for (int local : found) {
        if (std::binary_search(db.unfiltered.begin(), db.unfiltered.end(), local)) continue;
        reaches = true;
        tail_only = tail_only && keeps_last(local);
      }
      auto& into = reaches && tail_only ? tail_parts : parts;
      if (into.insert(regex_escape(a)).second && &into == &parts) ++f.atoms;
    }
    for (int32_t local : db.unfiltered) {
      const auto& x = cat.extractors[static_cast<size_t>(db.extractors[static_cast<size_t>(local)])];
      std::string re = plain_groups(x.re2_pattern);
      if (x.dotall) re = "(?s:" + re + ")";
      auto& into = x.keep_last ? tail_parts : parts;
      if (into.insert("(?:" + re + ")").second && &into == &parts) ++f.regexes;
    }
    // A source that only `keep last` extractors read gets its lines whole:
    // an empty `regex` would mean "cannot be filtered".
    if (parts.empty()) {
      parts.insert(tail_parts.begin(), tail_parts.end());
      f.atoms = static_cast<int>(parts.size());
      tail_parts.clear();
    }
    if (!unusable && !parts.empty()) {
      f.regex = alternation(parts);
      if (!tail_parts.empty()) {
        f.tail_regex = alternation(tail_parts);
        // Twice the largest N: each extractor's last N when a stream prints
        // one progress format (the usual case), and the newest lines of each
        // when two alternate (a tqdm bar inside a step loop).
        for (int32_t e : db.extractors)
          if (const auto& n = cat.extractors[static_cast<size_t>(e)].keep_last) f.tail_lines = std::max(f.tail_lines, 2 * *n);
      }
    } else {
      f = LineFilter{};
    }
    out[db.source] = f;
  }
  return out;
}

LineFilter combine_filters(const std::vector<const LineFilter*>& filters) {
  LineFilter f;
  std::string alt, tail;
  for (const auto* x : filters) {
    if (!x || x->regex.empty()) return LineFilter{};
    alt += (alt.empty() ? "" : "|") + x->regex.substr(4);  // without "(?i)"
    if (!x->tail_regex.empty()) tail += (tail.empty() ? "" : "|") + x->tail_regex.substr(4);
    f.atoms += x->atoms;
    f.regexes += x->regexes;
    f.tail_lines += x->tail_lines;  // a stream of one selector may feed each source
  }
  if (alt.empty()) return LineFilter{};
  f.regex = "(?i)" + alt;
  if (!tail.empty()) f.tail_regex = "(?i)" + tail;
  return f;
}

}  // namespace culprit::blueprint
