// The service's HTTP/1.1 server: one event loop for the sockets, a pool of
// workers for the requests.
//
// Why not a thread per connection (cpp-httplib's model, which the service
// used before): a worker that waits on a slow client serves no one else, so
// eight clients sending one header line every five seconds stopped the whole
// service, /healthz included, and a busy keep-alive connection kept its
// worker from new ones. Here one thread (the loop, epoll) accepts, reads and
// writes every connection without blocking, parses requests as their bytes
// come in (service/http.h), and only a *complete* request goes to the
// workers, in arrival order, one request per connection at a time, so
// workers never wait on the network and busy connections queue behind new
// ones. A handler may answer from the head alone on the loop itself
// (HttpHandler::on_head): cheap routes like /healthz, and refusals (401,
// 404, 413, 415) that need not read the body.
//
// Deadlines are per request, not per read: the head must arrive within
// header_timeout of its first byte, the whole request within
// request_timeout (408 otherwise); an answer must be taken by the client
// within write_timeout; an idle keep-alive connection is closed after
// keep_alive. Pipelined requests are answered in order. A connection is
// closed after max_requests_per_connection answers. At max_connections a
// new connection replaces the one idle longest (no request begun, nothing
// unread); only when every connection has a request in progress does it
// get 503 and is closed.
//
// Body bytes are charged, as they arrive, to the handler's BodyCharge (the
// service's memory budget): when it refuses, the request gets 429 at once.
//
// stop() (from any thread or a signal handler's waiter) starts the drain:
// the listening socket closes, idle connections close, requests already
// started may finish (answers carry "Connection: close") until
// drain_timeout; then every connection is closed. run() returns when the
// loop has ended and the workers have finished, or, if a worker is still
// busy one second after the drain deadline, with abandoned() > 0.
//
// Thread-safety: bind() and run() from one thread; stop() from any.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

#include "service/http.h"

namespace culprit::service {

struct HttpServerConfig {
  std::string host = "127.0.0.1";
  int port = 8080;                       // 0: any free port
  unsigned threads = 8;                  // workers
  RequestParser::Limits parse_limits{};
  size_t max_connections = 1024;
  size_t max_requests_per_connection = 1000;
  int header_timeout_s = 10, request_timeout_s = 60, write_timeout_s = 10, keep_alive_s = 5, drain_timeout_s = 10;
};

class HttpHandler : public BodyCharge {
 public:
  // On the loop thread, once the head of `req` is parsed. Returns true when
  // `res` is the answer (the body, if any, is then not read and the
  // connection closes after the answer). Must not block.
  virtual bool on_head(HttpRequest& req, HttpResponse& res) = 0;
  // Body bytes: reserve as they arrive (false: the request gets 429),
  // release (BodyCharge::release) as the body lets go of them.
  virtual bool reserve_body(size_t bytes) = 0;
  // On a worker thread: the complete request.
  virtual void handle(HttpRequest& req, HttpResponse& res) = 0;
  // An error the server answers itself (malformed request, a limit, a
  // timeout, 503 when full): `res.status` is set; fill in the body.
  virtual void protocol_error(const std::string& message, const std::string& limit, HttpResponse& res) = 0;
  // After every answer (the loop or a worker thread): logs and metrics.
  // `seconds`: from the end of the head to the answer.
  virtual void answered(const HttpRequest& req, const HttpResponse& res, double seconds) = 0;
};

class HttpServer {
 public:
  HttpServer(HttpServerConfig config, HttpHandler& handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; the bound port, or -1 with `error`.
  int bind(std::string& error);
  // Serves until stop() and the drain; see above.
  void run();
  void stop();
  bool stopping() const;
  // Requests whose worker was still busy when run() gave up waiting.
  size_t abandoned() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace culprit::service
