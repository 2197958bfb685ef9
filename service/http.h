// HTTP/1.1 messages for the service: an incremental request parser, the
// request and response types, and the body a handler reads.
//
// The parser is a pure state machine over bytes (no sockets, no clocks), so
// the event loop (service/http_server.h) feeds it whatever recv() returned,
// the fuzzer (tests/fuzz/) feeds it anything, and both see the same answers.
// It implements the parts of RFC 9112 a JSON API needs and refuses the rest
// with the status a client can act on:
//   * request line `METHOD SP target SP HTTP/1.x`; other versions 505;
//   * header fields `name: value` (names case-insensitive, folded lines
//     refused); the request line and each field at most
//     limits::kHeaderLine bytes (414 / 431), the whole head
//     limits::kRequestHead (431), at most limits::kHeaderCount fields (431);
//   * bodies framed by one Content-Length (several, or a malformed one: 400,
//     RFC 9112 §6.3), or by `Transfer-Encoding: chunked` (any other transfer
//     coding: 501; both framings at once: 400, the request-smuggling case);
//     a body over `max_body` is refused as soon as that is known (413);
//   * several requests in one stream (pipelining): feed() stops at the end
//     of each request and the rest of the bytes is kept for the next.
// Content-Encoding (gzip, deflate) is not undone here but by RequestBody,
// as the handler reads, so a compressed body is never held uncompressed.
//
// Thread-safety: a parser belongs to one connection; a request and its body
// to whoever handles it. Nothing here throws (allocation failure aside).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace culprit::service {

// Bytes a body holds are charged to someone (the service's memory budget);
// the body calls release() as it lets go of them.
class BodyCharge {
 public:
  virtual ~BodyCharge() = default;
  virtual void release(size_t bytes) = 0;
};

// A request body as received (still compressed if it was sent compressed),
// read once by the handler. Each received piece is freed, and its charge
// released, as soon as the handler has been given it.
class RequestBody {
 public:
  RequestBody() = default;
  RequestBody(RequestBody&&) noexcept;
  RequestBody& operator=(RequestBody&&) noexcept;
  RequestBody(const RequestBody&) = delete;
  RequestBody& operator=(const RequestBody&) = delete;
  ~RequestBody();

  void append(const char* data, size_t n);
  size_t size() const { return size_; }         // bytes received (compressed size)
  size_t count(char c) const;                    // occurrences of `c` in the bytes received
  bool encoded() const { return !encoding_.empty(); }
  bool empty() const { return size_ == 0; }
  // The charge for the held bytes: released piece by piece as they are read.
  void set_charge(BodyCharge* charge, size_t charged) { charge_ = charge; charged_ = charged; }
  size_t charged() const { return charged_; }
  // "" (identity), "gzip" or "deflate": undone while reading.
  void set_encoding(std::string encoding) { encoding_ = std::move(encoding); }

  enum class ReadStatus { Ok, Stopped, TooLarge, BadEncoding };
  // Gives the (decoded) body to `sink` in pieces; `sink` returns false to
  // stop. More than `max_decoded` decoded bytes: TooLarge. A corrupt
  // compressed stream: BadEncoding. Can be called once.
  ReadStatus read(const std::function<bool(const char*, size_t)>& sink, size_t max_decoded);

 private:
  void release_all();
  std::deque<std::string> pieces_;
  size_t size_ = 0;
  std::string encoding_;
  BodyCharge* charge_ = nullptr;
  size_t charged_ = 0;
};

struct HttpRequest {
  std::string method;                                    // "GET", "POST", ...
  std::string target;                                    // as sent: "/v1/workloads?x=1"
  std::string path;                                      // target before '?', not decoded
  std::map<std::string, std::string> params;             // query, percent-decoded (first value wins)
  int minor_version = 1;                                 // HTTP/1.0 or HTTP/1.1
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, in order
  RequestBody body;
  std::string remote_addr;
  std::vector<std::string> matches;                      // route captures (set by the router)

  // The first value of header `name` (lower case), or "".
  const std::string& header(std::string_view name) const;
  bool has_header(std::string_view name) const;
  std::string param(const std::string& name) const;
  // The client wants the connection kept open after the answer.
  bool keep_alive() const;
  // Content-Length if the head had one, else 0 (chunked bodies: unknown).
  uint64_t content_length = 0;
  bool chunked = false;
  bool has_body() const { return chunked || content_length > 0; }
};

struct HttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Length and Connection
  std::string body;
  bool close = false;   // answer with "Connection: close" and close the connection after it

  void set_header(std::string name, std::string value);
  void set_content(std::string b, std::string content_type);
};

const char* reason_phrase(int status);

// The status line and header fields of `res` (Content-Length from its
// body), up to the empty line. `keep_alive`: what the Connection header says.
std::string response_head(const HttpResponse& res, bool keep_alive);

class RequestParser {
 public:
  struct Limits {
    size_t max_head;      // request line + header fields
    size_t max_line;      // the request line, or one header field
    size_t max_headers;   // header fields
    uint64_t max_body;    // body bytes as sent (Content-Length, or chunk data)
  };
  explicit RequestParser(Limits limits);

  enum class State {
    Head,      // reading the request line and header fields
    Body,      // head complete (see head_complete()), reading the body
    Complete,  // a whole request: take() it
    Error,     // error_status() / error_message(); the connection must close
  };

  // Consumes bytes; returns how many were used. It stops at the end of a
  // request (State::Complete) so that pipelined bytes stay with the caller.
  size_t feed(const char* data, size_t n);
  State state() const { return state_; }
  // True from the moment the head is parsed (the caller may then decide on
  // the request from its head alone, e.g. refuse it before its body).
  bool head_complete() const { return state_ == State::Body || state_ == State::Complete; }
  bool started() const { return started_; }   // some byte of a request was seen
  const HttpRequest& request() const { return req_; }
  HttpRequest& request() { return req_; }
  // The complete request; the parser starts over for the next one.
  HttpRequest take();
  int error_status() const { return error_status_; }
  const std::string& error_message() const { return error_message_; }
  // A limit of base/limits.h the error is about ("" for plain syntax errors).
  const std::string& error_limit() const { return error_limit_; }
  uint64_t body_received() const { return body_received_; }

 private:
  size_t feed_head(const char* data, size_t n);
  size_t feed_body(const char* data, size_t n);
  bool parse_head();
  bool fail(int status, std::string message, std::string limit = {});

  Limits limits_;
  State state_ = State::Head;
  bool started_ = false;
  std::string head_;          // the head read so far
  size_t scanned_ = 0;        // head_ bytes already searched for the end of the head
  HttpRequest req_;
  uint64_t body_left_ = 0;    // Content-Length bytes still to read
  uint64_t body_received_ = 0;
  // Chunked decoding.
  enum class Chunk { Size, Data, DataEnd, Trailer };
  Chunk chunk_ = Chunk::Size;
  std::string chunk_line_;
  uint64_t chunk_left_ = 0;
  size_t trailer_bytes_ = 0;
  int error_status_ = 0;
  std::string error_message_, error_limit_;
};

// Percent-decoding of a query component ('+' is a space). Invalid escapes
// are kept as written.
std::string url_decode(std::string_view s);

}  // namespace culprit::service
