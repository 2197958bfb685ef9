#include "runtime/observation_fast_parse.h"

#include <cstdint>
#include <string>

#include "runtime/bundle.h"
#include "base/text_util.h"
#include "base/timestamp.h"

namespace culprit {
namespace {

// A cursor over one NDJSON line. Every method returns false on anything the
// fast path does not accept; the caller then falls back to nlohmann::json,
// whose verdict (and error message) is the reference.
class Reader {
 public:
  explicit Reader(std::string_view s) : p_(s.data()), end_(s.data() + s.size()) {}

  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool eat(char c) {
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool at_end() const { return p_ == end_; }
  char peek() const { return p_ < end_ ? *p_ : '\0'; }

  // A JSON string into `out` (UTF-8), validating raw bytes the way the JSON
  // lexer does (RFC 3629: no overlongs, no encoded surrogates, <= U+10FFFF).
  bool string(std::string& out) {
    if (!eat('"')) return false;
    out.clear();
    for (;;) {
      // Copy the run of plain ASCII in one go: most log text is exactly that.
      const char* run = p_;
      while (p_ < end_) {
        unsigned char c = static_cast<unsigned char>(*p_);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        ++p_;
      }
      out.append(run, static_cast<size_t>(p_ - run));
      if (p_ == end_) return false;
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c < 0x20) return false;  // control characters must be escaped
      if (c == '\\') {
        ++p_;
        if (!escape(out)) return false;
        continue;
      }
      if (!utf8_sequence(out)) return false;
    }
  }

  // A JSON integer that fits comfortably in int64 (at most 18 digits);
  // fractions, exponents and leading zeros are left to the slow path.
  bool integer(int64_t& v) {
    bool neg = eat('-');
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return false;
    if (*p_ == '0' && p_ + 1 < end_ && p_[1] >= '0' && p_[1] <= '9') return false;
    int digits = 0;
    v = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
      if (++digits > 18) return false;
      v = v * 10 + (*p_ - '0');
      ++p_;
    }
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    if (neg) v = -v;
    return true;
  }

  bool null() {
    if (end_ - p_ >= 4 && std::string_view(p_, 4) == "null") {
      p_ += 4;
      return true;
    }
    return false;
  }

 private:
  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  bool u16(uint32_t& cp) {
    if (end_ - p_ < 4) return false;
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      int h = hex(p_[i]);
      if (h < 0) return false;
      cp = cp * 16 + static_cast<uint32_t>(h);
    }
    p_ += 4;
    return true;
  }
  bool escape(std::string& out) {
    if (p_ == end_) return false;
    char e = *p_++;
    switch (e) {
      case '"': out += '"'; return true;
      case '\\': out += '\\'; return true;
      case '/': out += '/'; return true;
      case 'b': out += '\b'; return true;
      case 'f': out += '\f'; return true;
      case 'n': out += '\n'; return true;
      case 'r': out += '\r'; return true;
      case 't': out += '\t'; return true;
      case 'u': {
        uint32_t cp;
        if (!u16(cp)) return false;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a lone low surrogate
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo;
          if (!(eat('\\') && eat('u') && u16(lo)) || lo < 0xDC00 || lo > 0xDFFF) return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        append_utf8(out, cp);
        return true;
      }
      default: return false;
    }
  }
  bool utf8_sequence(std::string& out) {
    auto b = [&](ptrdiff_t i) { return static_cast<unsigned char>(p_[i]); };
    auto cont = [&](ptrdiff_t i) { return p_ + i < end_ && (b(i) & 0xC0) == 0x80; };
    unsigned char c = b(0);
    int n;
    if (c >= 0xC2 && c <= 0xDF) {
      n = 2;
      if (!cont(1)) return false;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 3;
      if (!cont(1) || !cont(2)) return false;
      if (c == 0xE0 && b(1) < 0xA0) return false;   // overlong
      if (c == 0xED && b(1) > 0x9F) return false;   // UTF-16 surrogate
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4;
      if (!cont(1) || !cont(2) || !cont(3)) return false;
      if (c == 0xF0 && b(1) < 0x90) return false;   // overlong
      if (c == 0xF4 && b(1) > 0x8F) return false;   // above U+10FFFF
    } else {
      return false;
    }
    out.append(p_, static_cast<size_t>(n));
    p_ += n;
    return true;
  }

  const char* p_;
  const char* end_;
};

}  // namespace

bool fast_parse_observation(std::string_view text, Observation& out) {
  Reader r(text);
  r.ws();
  if (!r.eat('{')) return false;
  constexpr unsigned kHost = 1, kSource = 2, kTs = 4, kText = 8, kFile = 16, kLine = 32, kOffset = 64;
  unsigned seen = 0;
  Observation o;
  std::string key, ts_text;
  bool ts_null = true;
  r.ws();
  if (r.eat('}')) return false;  // {} lacks host and source: the slow path says so
  for (;;) {
    r.ws();
    if (!r.string(key)) return false;
    r.ws();
    if (!r.eat(':')) return false;
    r.ws();
    unsigned bit = key == "host" ? kHost : key == "source" ? kSource : key == "ts" ? kTs : key == "text" ? kText
                 : key == "file" ? kFile : key == "line" ? kLine : key == "offset" ? kOffset : 0;
    if (bit == 0 || (seen & bit)) return false;  // unknown (or a metric) key, or a duplicate
    seen |= bit;
    switch (bit) {
      case kHost: if (!r.string(o.host)) return false; break;
      case kSource: if (!r.string(o.source)) return false; break;
      case kText: if (!r.string(o.text)) return false; break;
      case kFile: if (!r.string(o.file)) return false; break;
      case kTs:
        if (r.peek() == 'n') {
          if (!r.null()) return false;
        } else {
          if (!r.string(ts_text)) return false;
          ts_null = false;
        }
        break;
      case kLine: if (!r.integer(o.line) || o.line < 1) return false; break;
      case kOffset: if (!r.integer(o.offset) || o.offset < 0) return false; break;
    }
    r.ws();
    if (r.eat(',')) continue;
    if (r.eat('}')) break;
    return false;
  }
  r.ws();
  if (!r.at_end()) return false;
  if ((seen & (kHost | kSource | kText)) != (kHost | kSource | kText)) return false;
  if (!valid_host_name(o.host) || !valid_source_name(o.source)) return false;
  if (!ts_null && !(o.ts = parse_rfc3339(ts_text))) return false;
  out = std::move(o);
  return true;
}

}  // namespace culprit
