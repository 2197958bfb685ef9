#include "runtime/capture_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <fmt/format.h>

#include <algorithm>

#include "base/build_id.h"

namespace culprit {

namespace {

// Backtracking budget per line: far above what any catalog regex needs on a
// real line (tens of steps per byte), low enough that a hostile line costs
// at most a few milliseconds before RE2 takes it over.
constexpr uint32_t kMatchLimit = 1000000;
constexpr size_t kJitStackMin = 32 * 1024, kJitStackMax = 512 * 1024;

pcre2_code* as_code(void* p) { return static_cast<pcre2_code*>(p); }

bool escape_copies_as_is(char d) {
  // Escapes whose meaning RE2 and PCRE2 (8-bit, no UTF, no UCP, default
  // tables) share: ASCII classes, assertions, control characters, and
  // \x.. (the digits that follow are copied as they are).
  switch (d) {
    case 'd': case 'D': case 'w': case 'W': case 'b': case 'B': case 'A': case 'z':
    case 't': case 'n': case 'r': case 'f': case 'a': case 'x': case 'C':
      return true;
    default:
      // Any escaped punctuation is that character in both.
      return !((d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') || (d >= '0' && d <= '9'));
  }
}

}  // namespace

std::string CaptureRegex::translate(std::string_view p, bool caseless, std::string& why_not) {
  std::string out;
  out.reserve(p.size() + 16);
  bool in_class = false, class_start = false, non_ascii = false, inline_caseless = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (static_cast<unsigned char>(c) >= 0x80) non_ascii = true;
    if (c == '\\') {
      if (i + 1 >= p.size()) {
        why_not = "a trailing backslash";
        return "";
      }
      const char d = p[++i];
      if (d == 's') {
        out += in_class ? "\\t\\n\\f\\r " : "[\\t\\n\\f\\r ]";
      } else if (d == 'S') {
        if (in_class) {
          why_not = "\\S inside a class";
          return "";
        }
        out += "[^\\t\\n\\f\\r ]";
      } else if (d == 'v') {
        out += "\\x0b";  // RE2's \v is the VT character; PCRE2's is a class
      } else if (escape_copies_as_is(d)) {
        out += c;
        out += d;
      } else {
        why_not = fmt::format("the escape \\{}", d);
        return "";
      }
      class_start = false;
      continue;
    }
    if (in_class) {
      if (c == '[' && i + 1 < p.size() && p[i + 1] == ':') {  // [:alpha:]: ASCII in both
        const size_t end = p.find(":]", i + 2);
        if (end == std::string_view::npos) {
          why_not = "an unterminated [: class";
          return "";
        }
        out.append(p.substr(i, end + 2 - i));
        i = end + 1;
        class_start = false;
        continue;
      }
      if (c == ']' && !class_start) in_class = false;
      if (!(c == '^' && class_start)) class_start = false;
      out += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      class_start = true;
    } else if (c == '(' && i + 1 < p.size() && p[i + 1] == '?') {
      // A flag group such as (?i) or (?i:...): note a case-insensitive one.
      for (size_t j = i + 2; j < p.size() && p[j] != ')' && p[j] != ':'; ++j) {
        if (p[j] == '-') break;
        if (p[j] == 'i') inline_caseless = true;
      }
    }
    out += c;
  }
  if (in_class) {
    why_not = "an unterminated class";
    return "";
  }
  if (non_ascii && (caseless || inline_caseless)) {
    // RE2 folds Latin-1 letters; PCRE2's default tables fold ASCII only.
    why_not = "case-insensitive with non-ASCII bytes";
    return "";
  }
  return out;
}

CaptureRegex::CaptureRegex(const re2::RE2& re2, const std::string& pattern, bool caseless, bool dotall) : re2_(re2) {
  groups_ = re2.NumberOfCapturingGroups();
  const std::string translated = translate(pattern, caseless, why_not_);
  if (translated.empty()) {
    if (why_not_.empty()) why_not_ = "an empty pattern";
    return;
  }
  pcre2_compile_context* cc = pcre2_compile_context_create(nullptr);
  pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
  const uint32_t options = PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_UTF | PCRE2_NEVER_UCP |
                           (caseless ? PCRE2_CASELESS : 0u) | (dotall ? PCRE2_DOTALL : 0u);
  int err = 0;
  PCRE2_SIZE at = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(), options, &err, &at, cc);
  pcre2_compile_context_free(cc);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    why_not_ = fmt::format("PCRE2 does not compile it: {}", reinterpret_cast<const char*>(msg));
    return;
  }
  uint32_t count = 0;
  pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &count);
  bool same_names = static_cast<int>(count) == groups_;
  // Every named group must have the same number in both.
  uint32_t names = 0, entry = 0;
  PCRE2_SPTR table = nullptr;
  pcre2_pattern_info(code, PCRE2_INFO_NAMECOUNT, &names);
  pcre2_pattern_info(code, PCRE2_INFO_NAMEENTRYSIZE, &entry);
  pcre2_pattern_info(code, PCRE2_INFO_NAMETABLE, &table);
  const auto& re2_names = re2.NamedCapturingGroups();
  same_names = same_names && names == re2_names.size();
  for (uint32_t k = 0; same_names && k < names; ++k) {
    PCRE2_SPTR e = table + static_cast<size_t>(k) * entry;
    const int number = (e[0] << 8) | e[1];
    auto it = re2_names.find(reinterpret_cast<const char*>(e + 2));
    same_names = it != re2_names.end() && it->second == number;
  }
  if (!same_names) {
    pcre2_code_free(code);
    why_not_ = "its groups are numbered differently in PCRE2";
    return;
  }
  if (pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) != 0) {
    pcre2_code_free(code);
    why_not_ = "PCRE2's JIT is not available";
    return;
  }
  code_ = code;
}

CaptureRegex::~CaptureRegex() {
  if (code_) pcre2_code_free(as_code(code_));
}

bool CaptureRegex::match(std::string_view text, CaptureScratch& scratch, re2::StringPiece* out, int n) const {
  const re2::StringPiece whole(text.data(), text.size());
  if (!code_) return re2_.Match(whole, 0, text.size(), re2::RE2::UNANCHORED, out, n);
  auto* md = static_cast<pcre2_match_data*>(scratch.data_for(*this));
  if (!md) {  // out of memory for the match data: RE2 needs none of it
    ++scratch.fallbacks;
    return re2_.Match(whole, 0, text.size(), re2::RE2::UNANCHORED, out, n);
  }
  const int rc = pcre2_match(as_code(code_), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0, 0, md,
                             static_cast<pcre2_match_context*>(scratch.context_));
  bool matched = false;
  if (rc == PCRE2_ERROR_NOMATCH) {
    ++scratch.fast_matches;
  } else if (rc < 0) {
    // Over the match limit, the JIT stack, or any other error: RE2 decides.
    ++scratch.fallbacks;
    return re2_.Match(whole, 0, text.size(), re2::RE2::UNANCHORED, out, n);
  } else {
    ++scratch.fast_matches;
    matched = true;
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    for (int i = 0; i < n; ++i) {
      const PCRE2_SIZE s = ov[2 * i], e = ov[2 * i + 1];
      out[i] = s == PCRE2_UNSET ? re2::StringPiece() : re2::StringPiece(text.data() + s, e - s);
    }
  }
  if (!scratch.verify) return matched;
  auto& check = scratch.check_;
  check.assign(static_cast<size_t>(n), re2::StringPiece());
  const bool expected = re2_.Match(whole, 0, text.size(), re2::RE2::UNANCHORED, check.data(), n);
  bool same = expected == matched;
  for (int i = 0; same && matched && i < n; ++i)
    same = (out[i].data() == nullptr) == (check[static_cast<size_t>(i)].data() == nullptr) &&
           (out[i].data() == nullptr ||
            (out[i].data() == check[static_cast<size_t>(i)].data() && out[i].size() == check[static_cast<size_t>(i)].size()));
  if (same) return matched;
  ++scratch.mismatches;
  if (scratch.notes.size() < 8)
    scratch.notes.push_back(fmt::format("/{}/ on '{}': RE2 {}, PCRE2 {}", re2_.pattern(), text.substr(0, 200),
                                        expected ? "matched" : "did not match", matched ? "matched" : "did not match"));
  for (int i = 0; i < n; ++i) out[i] = check[static_cast<size_t>(i)];
  return expected;
}

CaptureScratch::CaptureScratch() {
  auto* ctx = pcre2_match_context_create(nullptr);
  pcre2_set_match_limit(ctx, kMatchLimit);
  auto* stack = pcre2_jit_stack_create(kJitStackMin, kJitStackMax, nullptr);
  if (stack) pcre2_jit_stack_assign(ctx, nullptr, stack);
  context_ = ctx;
  jit_stack_ = stack;
}

CaptureScratch::~CaptureScratch() {
  if (data_) pcre2_match_data_free(static_cast<pcre2_match_data*>(data_));
  if (context_) pcre2_match_context_free(static_cast<pcre2_match_context*>(context_));
  if (jit_stack_) pcre2_jit_stack_free(static_cast<pcre2_jit_stack*>(jit_stack_));
}

void* CaptureScratch::data_for(const CaptureRegex& re) {
  const int pairs = re.groups_ + 1;
  if (!data_ || data_pairs_ < pairs) {
    if (data_) pcre2_match_data_free(static_cast<pcre2_match_data*>(data_));
    data_pairs_ = std::max(pairs, 32);
    data_ = pcre2_match_data_create(static_cast<uint32_t>(data_pairs_), nullptr);
  }
  return data_;
}

std::string pcre2_identity() {
  return pcre2_version() + " " + build_id_of(reinterpret_cast<const void*>(&pcre2_compile_8));
}

std::string pcre2_version() {
  char buf[64] = {};
  pcre2_config(PCRE2_CONFIG_VERSION, buf);
  std::string v(buf);
  const size_t space = v.find(' ');
  return space == std::string::npos ? v : v.substr(0, space);
}

}  // namespace culprit
