#include "compiler/regex_check.h"

#include <cstdlib>

#include <fmt/format.h>
#include <hs/hs.h>
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <set>
#include <system_error>

#include "base/build_id.h"
#include "base/limits.h"
#include "compiler/jit/cache.h"
#include "base/sha256.h"

namespace culprit {

namespace {

// Patterns Hyperscan accepted, by SHA-256 of (flags, pattern); loaded from
// and saved to the cache directory as one entry (newline-separated ids).
struct Verdicts {
  std::mutex mu;
  std::string dir;
  bool loaded = false;
  std::set<std::string> accepted;

  static std::string key() {
    hs_platform_info_t platform{};
    hs_populate_platform(&platform);
    return fmt::format("hyperscan-verdicts-1\n{}\ntune {} features {}\n", hs_version(), platform.tune, platform.cpu_features);
  }
  void load_locked() {
    if (loaded || dir.empty()) return;
    loaded = true;
    std::string payload, note;
    if (!cache::load(dir, "regex-verdicts", key(), payload, note)) return;
    size_t pos = 0;
    while (pos < payload.size()) {
      size_t end = payload.find('\n', pos);
      if (end == std::string::npos) end = payload.size();
      if (end > pos) accepted.insert(payload.substr(pos, end - pos));
      pos = end + 1;
    }
  }
  bool known(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu);
    load_locked();
    return accepted.count(id) > 0;
  }
  // Known to this process from now on; written to the cache now, or (with
  // `deferred`) by the last undefer().
  void remember(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu);
    load_locked();
    if (!accepted.insert(id).second) return;
    if (deferred > 0) {
      unsaved = true;
      return;
    }
    store_locked();
  }
  // Between defer() and undefer(), acceptances are written once, by the
  // last undefer(): a cold start would otherwise rewrite the entry per regex.
  void defer() {
    std::lock_guard<std::mutex> lock(mu);
    ++deferred;
  }
  void undefer() {
    std::lock_guard<std::mutex> lock(mu);
    if (--deferred == 0 && unsaved) {
      store_locked();
      unsaved = false;
    }
  }
  void store_locked() {
    if (dir.empty()) return;
    std::string payload, note;
    for (const auto& a : accepted) payload += a + "\n";
    cache::store(dir, "regex-verdicts", key(), payload, note);  // best effort
  }
  int deferred = 0;  // RegexPrecheck objects alive
  bool unsaved = false;
};

Verdicts& verdicts() {
  static Verdicts v;
  return v;
}

// What Verdicts knows a pattern by.
std::string verdict_id(unsigned flags, const std::string& hs_pattern) {
  return sha256_hex(fmt::format("{}\n{}", flags, hs_pattern));
}

}  // namespace

void set_regex_verdict_cache(const std::string& dir) {
  Verdicts& v = verdicts();
  std::lock_guard<std::mutex> lock(v.mu);
  v.dir = dir;
  v.loaded = false;
  v.accepted.clear();
}

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

std::string to_hyperscan_syntax(const std::string& p) {
  return rewrite_outside_classes(p, [&](size_t i, std::string& out) {
    if (p[i] != '$') return std::string::npos;
    out += "\\r?$";
    return i;
  });
}

std::string without_group_names(const std::string& p) {
  return rewrite_outside_classes(p, [&](size_t i, std::string& out) {
    size_t name_at = p.compare(i, 4, "(?P<") == 0 ? i + 4
                   : p.compare(i, 3, "(?<") == 0 && i + 3 < p.size() && p[i + 3] != '=' && p[i + 3] != '!' ? i + 3
                   : std::string::npos;
    size_t close = name_at == std::string::npos ? std::string::npos : p.find('>', name_at);
    if (close == std::string::npos) return std::string::npos;
    out += '(';
    return close;
  });
}

MatchClauseRegex clause_regex(const std::string& pattern, const std::string& flags) {
  return {pattern, flags.find('i') != std::string::npos, flags.find('s') != std::string::npos};
}

MatchUnion match_union(const std::vector<MatchClauseRegex>& clauses) {
  MatchUnion u;
  bool same_flags = true;
  for (const auto& c : clauses)
    same_flags = same_flags && c.caseless == clauses.front().caseless && c.dotall == clauses.front().dotall;
  if (same_flags && !clauses.empty()) {
    u.caseless = clauses.front().caseless;
    u.dotall = clauses.front().dotall;
  }
  for (size_t i = 0; i < clauses.size(); ++i) {
    const auto& c = clauses[i];
    std::string flags = same_flags ? "" : std::string(c.caseless ? "i" : "") + (c.dotall ? "s" : "");
    std::string clause = "(?" + flags + ":" + without_group_names(c.pattern) + ")";
    u.pattern += (i ? "|" : "") + clause;
    u.re2_pattern += (i ? "|(?s:.*?)" : "^(?:(?s:.*?)") + clause;
  }
  u.re2_pattern += ")";
  return u;
}

uint64_t regex_repeat_weight(const std::string& p) {
  // One frame per open group: the weight inside it so far.
  std::vector<uint64_t> frames{0};
  auto saturating = [](uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; };
  // Reads {n}, {n,} or {n,m} at p[i]; returns its bound and the index after it.
  auto counted = [&](size_t i, uint64_t& bound) -> size_t {
    if (i >= p.size() || p[i] != '{') return 0;
    size_t j = i + 1;
    uint64_t n = 0, m = 0;
    bool digits = false, comma = false, mdigits = false;
    for (; j < p.size() && std::isdigit(static_cast<unsigned char>(p[j])); ++j, digits = true)
      n = std::min<uint64_t>(n * 10 + static_cast<uint64_t>(p[j] - '0'), 1u << 30);
    if (j < p.size() && p[j] == ',') {
      comma = true;
      for (++j; j < p.size() && std::isdigit(static_cast<unsigned char>(p[j])); ++j, mdigits = true)
        m = std::min<uint64_t>(m * 10 + static_cast<uint64_t>(p[j] - '0'), 1u << 30);
    }
    if (!digits || j >= p.size() || p[j] != '}') return 0;  // a literal '{'
    bound = comma && mdigits ? std::max(n, m) : n;
    return j + 1;
  };
  for (size_t i = 0; i < p.size();) {
    char c = p[i];
    uint64_t bound = 0;
    if (c == '\\') {
      i += 2;
    } else if (c == '[') {
      ++i;
      if (i < p.size() && p[i] == '^') ++i;
      if (i < p.size() && p[i] == ']') ++i;
      while (i < p.size() && p[i] != ']') i += p[i] == '\\' ? 2 : 1;
      ++i;
    } else if (c == '(') {
      frames.push_back(0);
      ++i;
    } else if (c == ')' && frames.size() > 1) {
      uint64_t inner = frames.back();
      frames.pop_back();
      ++i;
      if (size_t next = counted(i, bound)) {
        frames.back() = saturating(frames.back(), inner == 0 ? bound : (inner > UINT64_MAX / std::max<uint64_t>(bound, 1)
                                                                            ? UINT64_MAX : inner * std::max<uint64_t>(bound, 1)));
        i = next;
      } else {
        frames.back() = saturating(frames.back(), inner);
      }
    } else if (size_t next = counted(i, bound)) {
      frames.back() = saturating(frames.back(), bound);
      i = next;
    } else {
      ++i;
    }
  }
  uint64_t total = 0;
  for (uint64_t f : frames) total = saturating(total, f);
  return total;
}

RegexCheck check_regex(const std::string& pattern, bool caseless, bool dotall, bool scanned) {
  RegexCheck r;
  if (pattern.size() > limits::kRegexBytes) {
    r.limit_code = "E0706";
    r.limit_error = limits::exceeded("regex_bytes", limits::kRegexBytes, fmt::format("the regex is {} bytes", pattern.size()));
    return r;
  }
  if (uint64_t w = regex_repeat_weight(pattern); w > limits::kRegexRepeat) {
    r.limit_code = "E0707";
    r.limit_error = limits::exceeded("regex_repeat", limits::kRegexRepeat,
                                     fmt::format("its counted repeats {{n,m}} add up to {}", w));
    return r;
  }
  r.re2_pattern = to_re2_syntax(pattern);

  // RE2 first: it refuses in microseconds what it cannot handle, where
  // Hyperscan may spend seconds compiling before it refuses too.
  RE2::Options opt;
  opt.set_log_errors(false);
  opt.set_case_sensitive(!caseless);
  opt.set_dot_nl(dotall);
  RE2 re(r.re2_pattern, opt);
  if (!re.ok()) {
    r.re2_error = re.error();
    // RE2 names the fragment it stopped at; find it in what the user wrote
    // (the rewrite only touches `(?<name>`, which RE2 accepts).
    const std::string& arg = re.error_arg();
    size_t at = arg.empty() ? std::string::npos : pattern.find(arg);
    if (at != std::string::npos) {
      r.re2_error_offset = static_cast<int64_t>(at);
      r.re2_error_length = static_cast<int64_t>(arg.size());
    }
    return r;
  }
  r.capture_names.assign(static_cast<size_t>(re.NumberOfCapturingGroups()), "");
  for (const auto& [name, index] : re.NamedCapturingGroups())
    if (index >= 1) r.capture_names[static_cast<size_t>(index - 1)] = name;
  if (!scanned) {
    r.ok = true;
    return r;
  }

  unsigned flags = hyperscan_flags(caseless, dotall);
  std::string hs_pattern = to_hyperscan_syntax(pattern);
  std::string id = verdict_id(flags, hs_pattern);
  if (!verdicts().known(id)) {
    hs_database_t* db = nullptr;
    hs_compile_error_t* err = nullptr;
    if (hs_compile(hs_pattern.c_str(), flags, HS_MODE_BLOCK, nullptr, &db, &err) != HS_SUCCESS) {
      r.hyperscan_error = err && err->message ? err->message : "rejected";
      hs_free_compile_error(err);
      // "... at index N." counts bytes of the pattern Hyperscan compiled;
      // to_hyperscan_syntax only lengthens each end anchor `$` by 3 bytes.
      size_t at = r.hyperscan_error.rfind("at index ");
      if (at != std::string::npos) {
        int64_t idx = std::strtoll(r.hyperscan_error.c_str() + at + 9, nullptr, 10);
        int64_t orig = 0, hs = 0;
        while (orig < static_cast<int64_t>(pattern.size()) && hs < idx) {
          hs += hs_pattern.compare(static_cast<size_t>(hs), 4, "\\r?$") == 0 && pattern[static_cast<size_t>(orig)] == '$' ? 4 : 1;
          ++orig;
        }
        if (orig <= static_cast<int64_t>(pattern.size())) r.hyperscan_error_offset = orig;
      }
    } else {
      hs_free_database(db);
      verdicts().remember(id);
    }
  }
  r.ok = r.hyperscan_error.empty() && r.re2_error.empty();
  return r;
}

std::string regex_engines_identity() {
  // Functions' addresses (code is never copied into the executable).
  auto in_re2 = static_cast<std::string (*)(const re2::StringPiece&)>(&RE2::QuoteMeta);
  return fmt::format("hyperscan {} {} re2 {}", hs_version(), build_id_of(reinterpret_cast<const void*>(&hs_version)),
                     build_id_of(reinterpret_cast<const void*>(in_re2)));
}

struct RegexPrecheck::State {
  unsigned threads = 1;
  std::mutex mu;
  std::condition_variable wake;
  std::deque<RegexToCheck> queue;
  bool closing = false;  // finish() was called: background threads end when the queue is empty
  std::vector<std::thread> pool;

  // Takes patterns off the queue until it is empty (`until_closed`: and
  // finish() was called; a background thread waits for more meanwhile).
  void work(bool until_closed) {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      if (queue.empty()) {
        if (!until_closed || closing) return;
        wake.wait(lock);
        continue;
      }
      RegexToCheck x = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      static_cast<void>(check_regex(x.pattern, x.caseless, x.dotall));
      lock.lock();
    }
  }
};

RegexPrecheck::RegexPrecheck(unsigned threads) : state_(std::make_unique<State>()) {
  state_->threads = std::max(1u, threads);
  verdicts().defer();
}

RegexPrecheck::~RegexPrecheck() { finish(); }

void RegexPrecheck::add(const std::vector<RegexToCheck>& patterns) {
  Verdicts& v = verdicts();
  std::vector<RegexToCheck> unknown;
  for (const auto& x : patterns)
    if (x.scanned && !v.known(verdict_id(hyperscan_flags(x.caseless, x.dotall), to_hyperscan_syntax(x.pattern))))
      unknown.push_back(x);
  if (unknown.empty()) return;
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.closing) return;
    for (auto& x : unknown) s.queue.push_back(std::move(x));
  }
  s.wake.notify_all();
  while (s.pool.size() + 1 < s.threads) {
    try {
      s.pool.emplace_back([&s] { s.work(true); });
    } catch (const std::system_error&) {
      break;  // no more threads to be had: finish() does the rest on the caller's
    }
  }
}

void RegexPrecheck::finish() {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.closing && s.pool.empty()) return;
    s.closing = true;
  }
  s.wake.notify_all();
  s.work(false);
  for (auto& t : s.pool) t.join();
  s.pool.clear();
  verdicts().undefer();
}

void RegexPrecheck::cancel() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->queue.clear();
  }
  finish();
}

}  // namespace culprit
