#include "compiler/regex_check.h"

#include <hs/hs.h>
#include <re2/re2.h>

namespace culprit {

unsigned hyperscan_flags(bool caseless, bool dotall) {
  // MULTILINE: the scanner runs over whole buffers of lines, so ^ and $ must
  // mean line start/end. No SINGLEMATCH: one scan covers many lines.
  unsigned f = HS_FLAG_MULTILINE;
  if (caseless) f |= HS_FLAG_CASELESS;
  if (dotall) f |= HS_FLAG_DOTALL;
  return f;
}

std::string to_re2_syntax(const std::string& p) {
  std::string out;
  out.reserve(p.size() + 8);
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\' && i + 1 < p.size()) {
      out += p[i];
      out += p[++i];
      continue;
    }
    if (p.compare(i, 3, "(?<") == 0 && i + 3 < p.size() && p[i + 3] != '=' && p[i + 3] != '!') {
      out += "(?P<";
      i += 2;
      continue;
    }
    out += p[i];
  }
  return out;
}

RegexCheck check_regex(const std::string& pattern, bool caseless, bool dotall) {
  RegexCheck r;
  r.re2_pattern = to_re2_syntax(pattern);

  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  if (hs_compile(pattern.c_str(), hyperscan_flags(caseless, dotall), HS_MODE_BLOCK, nullptr, &db, &err) != HS_SUCCESS) {
    r.hyperscan_error = err && err->message ? err->message : "rejected";
    hs_free_compile_error(err);
  } else {
    hs_free_database(db);
  }

  RE2::Options opt;
  opt.set_log_errors(false);
  opt.set_case_sensitive(!caseless);
  opt.set_dot_nl(dotall);
  RE2 re(r.re2_pattern, opt);
  if (!re.ok()) {
    r.re2_error = re.error();
  } else {
    r.capture_names.assign(static_cast<size_t>(re.NumberOfCapturingGroups()), "");
    for (const auto& [name, index] : re.NamedCapturingGroups())
      if (index >= 1) r.capture_names[static_cast<size_t>(index - 1)] = name;
  }
  r.ok = r.hyperscan_error.empty() && r.re2_error.empty();
  return r;
}

}  // namespace culprit
