#include "service/http.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>

#include "base/limits.h"

namespace culprit::service {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string lowered(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = lower(c);
  return out;
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// RFC 9110 tchar: the characters of a method or a field name.
bool is_tchar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-': case '.':
    case '^': case '_': case '`': case '|': case '~': return true;
    default: return false;
  }
}

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

// A Host field value (RFC 9110 §7.2: uri-host [":" port]): an IP literal
// in brackets, or a reg-name (unreserved, pct-encoded and sub-delims
// characters; this covers IPv4 addresses), then an optional port of digits.
// Empty is allowed (a target without authority).
bool is_host_value(std::string_view v) {
  std::string_view port;
  if (!v.empty() && v.front() == '[') {
    size_t close = v.find(']');
    if (close == std::string_view::npos || close == 1) return false;
    for (char c : v.substr(1, close - 1))
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != ':' && c != '.') return false;
    std::string_view rest = v.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return false;
    port = rest.empty() ? rest : rest.substr(1);
  } else {
    size_t colon = v.find(':');
    std::string_view name = v.substr(0, colon);
    for (char c : name)
      if (c == '\0' || (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr("-._~%!$&'()*+,;=", c))) return false;
    if (colon != std::string_view::npos) port = v.substr(colon + 1);
  }
  return std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Comma-separated list members, trimmed, lower-cased, empty ones dropped.
std::vector<std::string> list_members(std::string_view v) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= v.size()) {
    size_t comma = v.find(',', pos);
    if (comma == std::string_view::npos) comma = v.size();
    auto m = trim_ows(v.substr(pos, comma - pos));
    if (!m.empty()) out.push_back(lowered(m));
    pos = comma + 1;
  }
  return out;
}

const std::string kEmpty;

}  // namespace

// --------------------------------------------------------------- body

RequestBody::RequestBody(RequestBody&& o) noexcept
    : pieces_(std::move(o.pieces_)), size_(o.size_), encoding_(std::move(o.encoding_)), charge_(o.charge_),
      charged_(o.charged_) {
  o.size_ = 0;
  o.charge_ = nullptr;
  o.charged_ = 0;
}

RequestBody& RequestBody::operator=(RequestBody&& o) noexcept {
  if (this != &o) {
    release_all();
    pieces_ = std::move(o.pieces_);
    size_ = o.size_;
    encoding_ = std::move(o.encoding_);
    charge_ = o.charge_;
    charged_ = o.charged_;
    o.size_ = 0;
    o.charge_ = nullptr;
    o.charged_ = 0;
  }
  return *this;
}

RequestBody::~RequestBody() { release_all(); }

void RequestBody::release_all() {
  pieces_.clear();
  if (charge_ && charged_) charge_->release(charged_);
  charged_ = 0;
}

size_t RequestBody::count(char c) const {
  size_t n = 0;
  for (const auto& p : pieces_) n += static_cast<size_t>(std::count(p.begin(), p.end(), c));
  return n;
}

void RequestBody::append(const char* data, size_t n) {
  // Pieces of up to 256 KiB: big enough to read in few steps, small enough
  // that freeing them one by one while the body is parsed matters.
  constexpr size_t kPiece = 256u << 10;
  while (n > 0) {
    if (pieces_.empty() || pieces_.back().size() >= kPiece) {
      pieces_.emplace_back();
      pieces_.back().reserve(std::min(kPiece, std::max<size_t>(n, 4096)));
    }
    std::string& p = pieces_.back();
    size_t take = std::min(n, kPiece - p.size());
    p.append(data, take);
    data += take;
    n -= take;
    size_ += take;
  }
}

RequestBody::ReadStatus RequestBody::read(const std::function<bool(const char*, size_t)>& sink, size_t max_decoded) {
  auto drop_front = [&]() {
    size_t n = pieces_.front().size();
    pieces_.pop_front();
    size_t r = std::min(n, charged_);
    if (charge_ && r) charge_->release(r);
    charged_ -= r;
  };
  if (encoding_.empty()) {
    size_t total = 0;
    while (!pieces_.empty()) {
      total += pieces_.front().size();
      if (total > max_decoded) return ReadStatus::TooLarge;
      bool go = sink(pieces_.front().data(), pieces_.front().size());
      drop_front();
      if (!go) return ReadStatus::Stopped;
    }
    release_all();
    return ReadStatus::Ok;
  }
  // gzip or zlib-wrapped deflate, detected from the header (windowBits 15 + 32).
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) return ReadStatus::BadEncoding;
  struct End {
    z_stream& z;
    ~End() { inflateEnd(&z); }
  } end{z};
  std::string out(64u << 10, '\0');
  size_t total = 0;
  bool stream_end = false;
  while (!pieces_.empty()) {
    std::string& in = pieces_.front();
    z.next_in = reinterpret_cast<Bytef*>(in.data());
    z.avail_in = static_cast<uInt>(in.size());
    while (z.avail_in > 0) {
      if (stream_end) {  // another gzip member follows (RFC 1952 allows several)
        if (inflateReset(&z) != Z_OK) return ReadStatus::BadEncoding;
        stream_end = false;
      }
      z.next_out = reinterpret_cast<Bytef*>(out.data());
      z.avail_out = static_cast<uInt>(out.size());
      int rc = inflate(&z, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) return ReadStatus::BadEncoding;
      size_t got = out.size() - z.avail_out;
      total += got;
      if (total > max_decoded) return ReadStatus::TooLarge;
      if (got && !sink(out.data(), got)) return ReadStatus::Stopped;
      if (rc == Z_STREAM_END) stream_end = true;
      if (rc == Z_BUF_ERROR && got == 0) break;  // needs more input
    }
    drop_front();
  }
  // Output still inside zlib once the input is used up.
  for (;;) {
    if (stream_end) break;
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    int rc = inflate(&z, Z_FINISH);
    size_t got = out.size() - z.avail_out;
    total += got;
    if (total > max_decoded) return ReadStatus::TooLarge;
    if (got && !sink(out.data(), got)) return ReadStatus::Stopped;
    if (rc == Z_STREAM_END) break;
    if (got == 0) return ReadStatus::BadEncoding;  // truncated stream
  }
  release_all();
  return ReadStatus::Ok;
}

// ------------------------------------------------------------ request

const std::string& HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return kEmpty;
}

bool HttpRequest::has_header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return true;
  return false;
}

std::string HttpRequest::param(const std::string& name) const {
  auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

bool HttpRequest::keep_alive() const {
  bool close = false, keep = false;
  for (const auto& [k, v] : headers) {
    if (k != "connection") continue;
    for (const auto& m : list_members(v)) {
      if (m == "close") close = true;
      if (m == "keep-alive") keep = true;
    }
  }
  if (close) return false;
  return minor_version >= 1 || keep;
}

// ----------------------------------------------------------- response

void HttpResponse::set_header(std::string name, std::string value) {
  for (auto& [k, v] : headers)
    if (k == name) {
      v = std::move(value);
      return;
    }
  headers.emplace_back(std::move(name), std::move(value));
}

void HttpResponse::set_content(std::string b, std::string content_type) {
  body = std::move(b);
  set_header("Content-Type", std::move(content_type));
}

const char* reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 421: return "Misdirected Request";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

std::string response_head(const HttpResponse& res, bool keep_alive) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\n", res.status, reason_phrase(res.status));
  for (const auto& [k, v] : res.headers) {
    out += k;
    out += ": ";
    out += v;
    out += "\r\n";
  }
  if (res.status != 204 && res.status != 304 && res.status >= 200) out += fmt::format("Content-Length: {}\r\n", res.body.size());
  out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  return out;
}

std::string url_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// ------------------------------------------------------------- parser

RequestParser::RequestParser(Limits limits) : limits_(limits) {}

bool RequestParser::fail(int status, std::string message, std::string limit) {
  state_ = State::Error;
  error_status_ = status;
  error_message_ = std::move(message);
  error_limit_ = std::move(limit);
  return false;
}

HttpRequest RequestParser::take() {
  HttpRequest r = std::move(req_);
  req_ = HttpRequest{};
  state_ = State::Head;
  started_ = false;
  head_.clear();
  scanned_ = 0;
  body_left_ = 0;
  body_received_ = 0;
  chunk_ = Chunk::Size;
  chunk_line_.clear();
  chunk_left_ = 0;
  trailer_bytes_ = 0;
  return r;
}

size_t RequestParser::feed(const char* data, size_t n) {
  size_t used = 0;
  if (state_ == State::Head) used += feed_head(data, n);
  if (state_ == State::Body && used < n) used += feed_body(data + used, n - used);
  return used;
}

size_t RequestParser::feed_head(const char* data, size_t n) {
  size_t skipped = 0;
  // Empty lines before a request line are ignored (RFC 9112 §2.2).
  if (head_.empty()) {
    while (skipped < n && (data[skipped] == '\r' || data[skipped] == '\n')) ++skipped;
    if (skipped == n) return n;
  }
  started_ = true;
  size_t old = head_.size();
  head_.append(data + skipped, n - skipped);
  size_t from = scanned_ >= 3 ? scanned_ - 3 : 0;
  size_t end = std::string::npos;
  for (size_t i = head_.find('\n', from); i != std::string::npos; i = head_.find('\n', i + 1)) {
    if (i + 1 < head_.size() && head_[i + 1] == '\n') {
      end = i + 2;
      break;
    }
    if (i + 2 < head_.size() && head_[i + 1] == '\r' && head_[i + 2] == '\n') {
      end = i + 3;
      break;
    }
  }
  if (end == std::string::npos) {
    scanned_ = head_.size();
    if (head_.size() > limits_.max_head)
      return fail(431, fmt::format("the request head exceeds {} bytes", limits_.max_head), "request_head"), n;
    size_t last_nl = head_.rfind('\n');
    size_t line_len = last_nl == std::string::npos ? head_.size() : head_.size() - last_nl - 1;
    if (line_len > limits_.max_line) {
      bool first = last_nl == std::string::npos;
      return fail(first ? 414 : 431, fmt::format("{} exceeds {} bytes", first ? "the request line" : "a header line",
                                                 limits_.max_line),
                  "header_line"),
             n;
    }
    return n;
  }
  if (end > limits_.max_head)
    return fail(431, fmt::format("the request head exceeds {} bytes", limits_.max_head), "request_head"), n;
  head_.resize(end);
  size_t used = skipped + (end - old);
  if (!parse_head()) return used;
  return used;
}

bool RequestParser::parse_head() {
  std::vector<std::string_view> lines;
  std::string_view h(head_);
  size_t pos = 0;
  while (pos < h.size()) {
    size_t nl = h.find('\n', pos);
    if (nl == std::string_view::npos) nl = h.size();
    std::string_view line = h.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;
    if (line.size() > limits_.max_line)
      return fail(lines.empty() ? 414 : 431,
                  fmt::format("{} exceeds {} bytes", lines.empty() ? "the request line" : "a header line", limits_.max_line),
                  "header_line");
    lines.push_back(line);
    pos = nl + 1;
  }
  if (lines.empty()) return fail(400, "empty request line");
  // Request line.
  std::string_view rl = lines[0];
  size_t sp1 = rl.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : rl.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos || rl.find(' ', sp2 + 1) != std::string_view::npos)
    return fail(400, "malformed request line (expected METHOD TARGET HTTP/1.1)");
  std::string_view method = rl.substr(0, sp1), target = rl.substr(sp1 + 1, sp2 - sp1 - 1), version = rl.substr(sp2 + 1);
  if (!is_token(method)) return fail(400, "malformed request method");
  if (target.empty() || std::any_of(target.begin(), target.end(), [](char c) {
        return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f;
      }))
    return fail(400, "malformed request target");
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || !std::isdigit(static_cast<unsigned char>(version[5])) ||
      version[6] != '.' || !std::isdigit(static_cast<unsigned char>(version[7])))
    return fail(400, "malformed HTTP version");
  if (version[5] != '1') return fail(505, fmt::format("HTTP version {} is not supported (use HTTP/1.1)", version));
  req_.method = std::string(method);
  req_.minor_version = version[7] - '0';
  req_.target = std::string(target);
  // RFC 9112 §3.2: origin-form ("/path?query") or absolute-form
  // ("http://authority/path", which a server must accept; its authority
  // then stands for Host, §3.2.2). Asterisk-form is for OPTIONS and
  // authority-form for CONNECT, neither of which is served: 400.
  std::string_view t = target;
  std::optional<std::string_view> target_authority;
  if (t.substr(0, 7) == "http://" || t.substr(0, 8) == "https://") {
    size_t start = t.find("//") + 2;
    size_t slash = t.find_first_of("/?", start);
    target_authority = t.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (slash == std::string_view::npos) t = "/";
    else if (t[slash] == '?') return fail(400, "malformed request target (absolute-form without a path)");
    else t = t.substr(slash);
  } else if (t.front() != '/') {
    return fail(400, "malformed request target (expected an absolute path such as /v1/attributions, RFC 9112 §3.2)");
  }
  size_t q = t.find('?');
  req_.path = std::string(t.substr(0, q));
  if (q != std::string_view::npos) {
    std::string_view query = t.substr(q + 1);
    size_t p = 0;
    while (p <= query.size()) {
      size_t amp = query.find('&', p);
      if (amp == std::string_view::npos) amp = query.size();
      std::string_view kv = query.substr(p, amp - p);
      if (!kv.empty()) {
        size_t eq = kv.find('=');
        std::string k = url_decode(kv.substr(0, eq));
        std::string v = eq == std::string_view::npos ? std::string() : url_decode(kv.substr(eq + 1));
        req_.params.emplace(std::move(k), std::move(v));
      }
      p = amp + 1;
    }
  }
  // Header fields.
  if (lines.size() - 1 > limits_.max_headers)
    return fail(431, fmt::format("more than {} header fields", limits_.max_headers), "header_count");
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (line.front() == ' ' || line.front() == '\t') return fail(400, "folded header lines are not accepted (RFC 9112 §5.2)");
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return fail(400, "malformed header line (no ':')");
    std::string_view name = line.substr(0, colon);
    if (!is_token(name)) return fail(400, "malformed header field name");
    std::string_view value = trim_ows(line.substr(colon + 1));
    if (std::any_of(value.begin(), value.end(), [](char c) {
          unsigned char u = static_cast<unsigned char>(c);
          return (u < 0x20 && u != '\t') || u == 0x7f;
        }))
      return fail(400, "control characters in a header value");
    req_.headers.emplace_back(lowered(name), std::string(value));
  }
  // Host (RFC 9112 §3.2): exactly one on HTTP/1.1, none or one on 1.0, and
  // a valid uri-host[:port]; 400 otherwise. With an absolute-form target
  // the target's authority replaces it.
  size_t hosts = 0;
  for (const auto& [k, v] : req_.headers)
    if (k == "host") {
      ++hosts;
      if (!is_host_value(v)) return fail(400, "malformed Host header field");
    }
  if (hosts > 1) return fail(400, "more than one Host header field (RFC 9112 §3.2)");
  if (hosts == 0 && req_.minor_version >= 1) return fail(400, "an HTTP/1.1 request without a Host header field (RFC 9112 §3.2)");
  if (target_authority) {
    if (target_authority->empty() || !is_host_value(*target_authority)) return fail(400, "malformed request target authority");
    req_.headers.erase(std::remove_if(req_.headers.begin(), req_.headers.end(), [](const auto& kv) { return kv.first == "host"; }),
                       req_.headers.end());
    req_.headers.emplace_back("host", std::string(*target_authority));
  }
  // Framing (RFC 9112 §6).
  std::vector<std::string> te;
  size_t cl_count = 0;
  std::string cl;
  for (const auto& [k, v] : req_.headers) {
    if (k == "transfer-encoding")
      for (auto& m : list_members(v)) te.push_back(std::move(m));
    if (k == "content-length") {
      ++cl_count;
      cl = v;
    }
  }
  if (!te.empty() || req_.has_header("transfer-encoding")) {
    if (cl_count) return fail(400, "both Transfer-Encoding and Content-Length (RFC 9112 §6.3)");
    if (req_.minor_version == 0) return fail(400, "Transfer-Encoding in an HTTP/1.0 request");
    if (te.size() != 1 || te[0] != "chunked")
      return fail(501, "only the chunked transfer coding is supported (send the body with Content-Length)");
    req_.chunked = true;
  } else if (cl_count > 1) {
    return fail(400, "more than one Content-Length (RFC 9112 §6.3)");
  } else if (cl_count == 1) {
    if (cl.empty() || cl.size() > 19 || !std::all_of(cl.begin(), cl.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return fail(400, fmt::format("invalid Content-Length '{}'", cl.substr(0, 32)));
    uint64_t len = std::stoull(cl);
    if (len > limits_.max_body)
      return fail(413, fmt::format("the request body exceeds {} bytes", limits_.max_body), "max_body");
    req_.content_length = len;
    body_left_ = len;
  }
  state_ = State::Body;
  if (!req_.chunked && body_left_ == 0) state_ = State::Complete;
  return true;
}

size_t RequestParser::feed_body(const char* data, size_t n) {
  size_t used = 0;
  if (!req_.chunked) {
    size_t take = static_cast<size_t>(std::min<uint64_t>(n, body_left_));
    req_.body.append(data, take);
    body_left_ -= take;
    body_received_ += take;
    if (body_left_ == 0) state_ = State::Complete;
    return take;
  }
  while (used < n && state_ == State::Body) {
    switch (chunk_) {
      case Chunk::Size:
      case Chunk::DataEnd:
      case Chunk::Trailer: {
        const char* nl = static_cast<const char*>(std::memchr(data + used, '\n', n - used));
        size_t take = nl ? static_cast<size_t>(nl - (data + used)) + 1 : n - used;
        chunk_line_.append(data + used, take);
        used += take;
        if (chunk_line_.size() > 4096 && chunk_ != Chunk::Trailer) return fail(400, "malformed chunked body"), used;
        if (chunk_ == Chunk::Trailer) {
          trailer_bytes_ += take;
          if (trailer_bytes_ > limits_.max_head)
            return fail(431, fmt::format("the trailer fields exceed {} bytes", limits_.max_head), "request_head"), used;
        }
        if (!nl) break;
        std::string_view line(chunk_line_);
        line.remove_suffix(1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (chunk_ == Chunk::DataEnd) {
          if (!line.empty()) return fail(400, "malformed chunked body (data longer than its chunk size)"), used;
          chunk_ = Chunk::Size;
        } else if (chunk_ == Chunk::Trailer) {
          if (line.empty()) state_ = State::Complete;
        } else {
          std::string_view hexpart = line.substr(0, line.find(';'));
          hexpart = trim_ows(hexpart);
          if (hexpart.empty() || hexpart.size() > 15) return fail(400, "malformed chunk size"), used;
          uint64_t size = 0;
          for (char c : hexpart) {
            int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                    : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
                    : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                                : -1;
            if (d < 0) return fail(400, "malformed chunk size"), used;
            size = size * 16 + static_cast<uint64_t>(d);
          }
          if (body_received_ + size > limits_.max_body)
            return fail(413, fmt::format("the request body exceeds {} bytes", limits_.max_body), "max_body"), used;
          chunk_left_ = size;
          chunk_ = size == 0 ? Chunk::Trailer : Chunk::Data;
        }
        chunk_line_.clear();
        break;
      }
      case Chunk::Data: {
        size_t take = static_cast<size_t>(std::min<uint64_t>(n - used, chunk_left_));
        req_.body.append(data + used, take);
        used += take;
        chunk_left_ -= take;
        body_received_ += take;
        if (chunk_left_ == 0) chunk_ = Chunk::DataEnd;
        break;
      }
    }
  }
  return used;
}

}  // namespace culprit::service
