// The HttpServer contract (service/http_server.h) on libmicrohttpd, built
// instead of http_server.cpp when CMake is configured with
// -DCULPRIT_HTTP_SERVER=mhd. It exists to measure whether Debian's
// libmicrohttpd (0.9.75 in Debian 12) can replace the service's own event
// loop (docs/dependencies.md has the comparison); the default build does
// not use it.
//
// How the contract maps onto MHD:
//   * one MHD polling thread on epoll (MHD_USE_EPOLL_INTERNAL_THREAD) plays
//     the loop: it accepts, reads and writes every connection and calls
//     HttpHandler::on_head for each head;
//   * the head MHD parsed is written back out and fed to RequestParser, so
//     that the request, and the refusals RFC 9112 asks for (two
//     Content-Length, Transfer-Encoding with Content-Length, a body over
//     max_body, limits on lines and fields), are the ones the own server
//     gives; MHD's own refusals (a head larger than its memory pool, a
//     malformed Content-Length, an unknown HTTP version) come first and
//     carry MHD's HTML bodies, without HttpHandler::protocol_error;
//   * the body comes through MHD's upload callback, is appended to the
//     RequestBody and charged to the handler's BodyCharge in 64 KiB steps;
//   * a complete request is handed to this file's worker pool, its
//     connection suspended (MHD_suspend_connection) until a worker has the
//     answer and resumes it, so the polling thread never waits on a verdict.
//
// What MHD 0.9.75 cannot express, and how this backend behaves instead:
//   * deadlines: MHD has one timeout per connection, reset by every byte.
//     The header, request and write deadlines become that inactivity
//     timeout (header_timeout_s while a request is read, keep_alive_s after
//     an answer): a client that sends a header line every few seconds is
//     never cut (its head only ends when it outgrows MHD's memory pool), and
//     a body past request_timeout_s closes the connection without a 408;
//   * refusing a body half way: MHD accepts an answer only before the body
//     or after all of it, so a 429 (budget) or 413 (a chunked body over
//     max_body) decided while the body arrives is sent once the rest of the
//     body has been read and dropped (nothing of it is kept or charged);
//   * at max_connections MHD closes a new connection at once: no 503, and no
//     eviction of the connection idle longest;
//   * a request refused on its head (by the handler, or a body over
//     max_body) while its body is on its way: MHD would close the connection
//     right after the answer, and a client still sending would get a reset,
//     so the answer waits until the body has been read and dropped, for at
//     most 2 s, then the connection is closed without it (the own server
//     answers at once and lingers instead); with "Expect: 100-continue" the
//     client sends no body, and the answer goes at once;
//   * a client that half-closes its side after a request is not noticed
//     after a keep-alive answer: the connection stays until the inactivity
//     timeout (the own server closes it when recv() returns 0);
//   * an answer queued when MHD first calls with the head makes MHD 0.9.75
//     close the connection after it, whatever it says; so on_head's answers
//     to requests without a body are queued on MHD's next call (at once),
//     and those to requests with a body close the connection (as the own
//     server does, since the body is not read);
//   * the drain: new connections stop at once, requests in progress finish
//     until drain_timeout_s, but idle keep-alive connections stay open (and
//     may start requests, answered with "Connection: close") until then.
// Pipelined requests are answered in order by MHD itself.
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "service/http_server.h"

namespace culprit::service {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kChargeStep = 64u << 10;       // body bytes are reserved in steps of this
constexpr size_t kConnectionMemory = 128u << 10;  // MHD's per-connection pool: the head and the read buffer

// One request, from its request line to its answer. Shared by MHD's
// per-request context and, while it computes, a worker.
struct Exchange {
  std::string target;              // as sent (MHD's URI callback, before MHD splits and decodes it)
  HttpRequest req;
  HttpResponse res;
  bool head_done = false;          // the first access call (the head) has been handled
  bool answered_on_head = false;   // HttpHandler::on_head answered: `res`, queued at MHD's next call
  bool has_head_request = false;   // `req` is a parsed request (answered() may be called with it)
  Clock::time_point head_time;
  size_t charged = 0;              // body bytes reserved
  uint64_t body_bytes = 0;         // body bytes received
  Clock::time_point drop_until{};  // the body is read and dropped until then (an answer waits for its end)
  int refusal = 0;                 // 413 or 429 decided during the body: answered after it
  std::string refusal_message, refusal_limit;
  // Hand-off to a worker: guarded by the server's mutex.
  enum class Stage { Reading, Queued, Running, Answered, Cancelled } stage = Stage::Reading;
  MHD_Connection* connection = nullptr;
};

// Per connection: answers given so far (max_requests_per_connection).
struct ConnectionState {
  size_t served = 0;
};

void log_mhd(void*, const char* format, va_list ap) {
  char line[512];
  std::vsnprintf(line, sizeof line, format, ap);
  std::string text(line);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::fprintf(stderr, "culprit http (libmicrohttpd): %s\n", text.c_str());
}

}  // namespace

struct HttpServer::Impl {
  HttpServerConfig cfg;
  HttpHandler& handler;
  int listen_fd = -1;
  MHD_Daemon* daemon = nullptr;

  std::atomic<bool> stop_requested{false};
  std::atomic<bool> draining{false};
  std::mutex stop_mu;
  std::condition_variable stop_cv;

  // Worker pool, and the requests whose connection is suspended.
  std::mutex mu;
  std::condition_variable cv, idle_cv;
  std::deque<std::shared_ptr<Exchange>> jobs;
  std::set<std::shared_ptr<Exchange>> suspended;
  bool pool_stop = false;
  size_t busy = 0;
  std::vector<std::thread> workers;
  std::atomic<size_t> abandoned{0};
  std::atomic<size_t> in_progress{0};   // requests begun (request line read) and not yet completed

  Impl(HttpServerConfig c, HttpHandler& h) : cfg(std::move(c)), handler(h) {}

  ~Impl() {
    if (daemon) MHD_stop_daemon(daemon);
    if (listen_fd >= 0) ::close(listen_fd);
  }

  // ------------------------------------------------------------ workers

  // As in http_server.cpp: verdicts run a few nice levels below the polling
  // thread, so /healthz and answers are not queued behind them.
  static void lower_worker_priority() {
    constexpr int kWorkerNiceIncrement = 5;
    const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
    errno = 0;
    const int now = ::getpriority(PRIO_PROCESS, tid);
    if (now == -1 && errno != 0) return;
    (void)::setpriority(PRIO_PROCESS, tid, std::min(19, now + kWorkerNiceIncrement));
  }

  void worker_loop() {
    lower_worker_priority();
    for (;;) {
      std::shared_ptr<Exchange> ex;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return pool_stop || !jobs.empty(); });
        if (jobs.empty()) return;
        ex = std::move(jobs.front());
        jobs.pop_front();
        if (ex->stage != Exchange::Stage::Queued) continue;  // cancelled by the drain
        ex->stage = Exchange::Stage::Running;
        ++busy;
      }
      HttpResponse res;
      try {
        handler.handle(ex->req, res);
      } catch (const std::exception& e) {
        res = HttpResponse{};
        res.status = 500;
        handler.protocol_error(std::string("internal error: ") + e.what(), "", res);
      } catch (...) {
        res = HttpResponse{};
        res.status = 500;
        handler.protocol_error("internal error", "", res);
      }
      handler.answered(ex->req, res, std::chrono::duration<double>(Clock::now() - ex->head_time).count());
      ex->req.body = RequestBody{};  // the body (and its charge) goes now, not when MHD is done with the connection
      {
        std::lock_guard<std::mutex> lock(mu);
        --busy;
        if (ex->stage == Exchange::Stage::Running) {
          ex->res = std::move(res);
          ex->stage = Exchange::Stage::Answered;
          suspended.erase(ex);
          MHD_resume_connection(ex->connection);
        }
      }
      idle_cv.notify_all();
    }
  }

  // ------------------------------------------------------------ answers

  static void free_body(void* cls) { delete static_cast<std::string*>(cls); }

  // Queues `res` on `connection`; `close`: the connection closes after it.
  MHD_Result queue(MHD_Connection* connection, HttpResponse& res, bool close) {
    auto* state = static_cast<ConnectionState*>(
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT)->socket_context);
    if (state) {
      ++state->served;
      if (state->served >= cfg.max_requests_per_connection) close = true;
    }
    if (draining.load()) close = true;
    auto* body = new std::string(std::move(res.body));
    MHD_Response* r =
        MHD_create_response_from_buffer_with_free_callback_cls(body->size(), body->data(), &free_body, body);
    if (!r) {
      delete body;
      return MHD_NO;
    }
    for (const auto& [k, v] : res.headers) MHD_add_response_header(r, k.c_str(), v.c_str());
    if (close || res.close) MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    else MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, static_cast<unsigned>(cfg.keep_alive_s));
    MHD_Result ok = MHD_queue_response(connection, static_cast<unsigned>(res.status), r);
    MHD_destroy_response(r);
    return ok;
  }

  MHD_Result refuse(MHD_Connection* connection, Exchange& ex, int status, const std::string& message,
                    const std::string& limit) {
    HttpResponse res;
    res.status = status;
    handler.protocol_error(message, limit, res);
    if (ex.has_head_request) handler.answered(ex.req, res, std::chrono::duration<double>(Clock::now() - ex.head_time).count());
    release_charge(ex);
    return queue(connection, res, true);
  }

  void release_charge(Exchange& ex) {
    ex.req.body = RequestBody{};
    if (ex.charged) handler.release(ex.charged);
    ex.charged = 0;
  }

  // ------------------------------------------------------------ requests

  // The head MHD parsed, written out again and parsed by RequestParser.
  MHD_Result on_head(MHD_Connection* connection, Exchange& ex, const char* method, const char* version) {
    ex.head_done = true;
    ex.head_time = Clock::now();
    MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, static_cast<unsigned>(cfg.header_timeout_s));
    std::string head = fmt::format("{} {} {}\r\n", method, ex.target, version);
    MHD_get_connection_values(
        connection, MHD_HEADER_KIND,
        [](void* cls, MHD_ValueKind, const char* key, const char* value) -> MHD_Result {
          auto* h = static_cast<std::string*>(cls);
          *h += key;
          *h += ": ";
          *h += value ? value : "";
          *h += "\r\n";
          return MHD_YES;
        },
        &head);
    head += "\r\n";
    RequestParser parser(cfg.parse_limits);
    parser.feed(head.data(), head.size());
    if (parser.state() == RequestParser::State::Error) {
      ex.has_head_request = !parser.request().method.empty();
      if (ex.has_head_request) ex.req = std::move(parser.request());
      if (parser.error_status() == 413 && lingers(ex.req)) {
        // The framing is sound, only too long: the body is read and dropped
        // for a moment so that the client reads the 413 (see linger()).
        ex.refusal = 413;
        ex.refusal_message = parser.error_message();
        ex.refusal_limit = parser.error_limit();
        linger(connection, ex);
        return MHD_YES;
      }
      return refuse(connection, ex, parser.error_status(), parser.error_message(), parser.error_limit());
    }
    ex.req = std::move(parser.request());
    ex.has_head_request = true;
    const MHD_ConnectionInfo* ci = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (ci && ci->client_addr) {
      char host[INET6_ADDRSTRLEN] = "";
      if (ci->client_addr->sa_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(ci->client_addr)->sin_addr, host, sizeof host);
      else if (ci->client_addr->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(ci->client_addr)->sin6_addr, host, sizeof host);
      ex.req.remote_addr = host;
    }
    HttpResponse res;
    if (handler.on_head(ex.req, res)) {
      handler.answered(ex.req, res, std::chrono::duration<double>(Clock::now() - ex.head_time).count());
      if (!ex.req.has_body()) {
        // MHD closes every connection whose answer is queued in this first
        // call ("refuse to read further requests"): a request without a body
        // is complete already, so its answer waits for MHD's next call, made
        // at once, and the connection stays open.
        ex.res = std::move(res);
        ex.answered_on_head = true;
        return MHD_YES;
      }
      if (lingers(ex.req)) {
        ex.res = std::move(res);
        ex.answered_on_head = true;
        linger(connection, ex);
        return MHD_YES;
      }
      // The client waits for "100 Continue" and sends no body, or the body
      // is too large to wait for: answer now (MHD then closes the connection).
      return queue(connection, res, true);
    }
    return MHD_YES;  // MHD sends "100 Continue" if asked, then the body
  }

  // MHD closes a connection as soon as an answer queued before the body is
  // sent, so a client still sending the body gets a reset instead of the
  // answer. The own server lingers after its answer instead; here the
  // answer waits while the body is read and dropped, for at most
  // kLingerSeconds, after which the connection is closed without it.
  // Only bodies that can arrive in that time are waited for: one that
  // declares more than kLingerBytes is refused at once, and a client still
  // sending it gets a reset.
  static constexpr int kLingerSeconds = 2;
  static constexpr uint64_t kLingerBytes = 16u << 20;
  void linger(MHD_Connection* connection, Exchange& ex) {
    ex.drop_until = Clock::now() + std::chrono::seconds(kLingerSeconds);
    MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, static_cast<unsigned>(kLingerSeconds));
    release_charge(ex);
  }
  static bool lingers(const HttpRequest& req) {
    if (expects_continue(req)) return false;
    if (req.chunked) return true;
    // The parser refuses a Content-Length over max_body before keeping it:
    // read it from the header (one, all digits: the parser checked that).
    const std::string& cl = req.header("content-length");
    uint64_t declared = 0;
    for (char c : cl) {
      if (c < '0' || c > '9' || declared > kLingerBytes) break;
      declared = declared * 10 + static_cast<uint64_t>(c - '0');
    }
    return declared <= kLingerBytes;
  }

  static bool expects_continue(const HttpRequest& req) {
    std::string v = req.header("expect");
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return v == "100-continue";
  }

  MHD_Result on_body(Exchange& ex, const char* data, size_t size) {
    if (ex.drop_until != Clock::time_point{}) return Clock::now() > ex.drop_until ? MHD_NO : MHD_YES;
    if (Clock::now() > ex.head_time + std::chrono::seconds(cfg.request_timeout_s))
      return MHD_NO;  // past the request deadline: MHD closes the connection (no 408 can be queued now)
    ex.body_bytes += size;
    if (ex.refusal) return MHD_YES;  // read and dropped
    if (ex.body_bytes > cfg.parse_limits.max_body) {
      ex.refusal = 413;
      ex.refusal_message = fmt::format("the request body exceeds {} bytes", cfg.parse_limits.max_body);
      ex.refusal_limit = "max_body";
      release_charge(ex);
      return MHD_YES;
    }
    ex.req.body.append(data, size);
    size_t have = ex.req.body.size();
    if (have > ex.charged) {
      size_t need = (have - ex.charged + kChargeStep - 1) / kChargeStep * kChargeStep;
      if (!handler.reserve_body(need)) {
        ex.refusal = 429;
        ex.refusal_message = "the service's memory budget is exhausted; retry later";
        ex.refusal_limit = "max_total_bytes";
        release_charge(ex);
        return MHD_YES;
      }
      ex.charged += need;
    }
    return MHD_YES;
  }

  MHD_Result on_complete(MHD_Connection* connection, const std::shared_ptr<Exchange>& ex) {
    if (ex->refusal) return refuse(connection, *ex, ex->refusal, ex->refusal_message, ex->refusal_limit);
    if (ex->answered_on_head) return queue(connection, ex->res, ex->req.has_body() || !ex->req.keep_alive());
    std::unique_lock<std::mutex> lock(mu);
    switch (ex->stage) {
      case Exchange::Stage::Reading: {
        ex->req.body.set_charge(&handler, ex->charged);
        ex->charged = 0;
        ex->stage = Exchange::Stage::Queued;
        ex->connection = connection;
        MHD_suspend_connection(connection);
        suspended.insert(ex);
        jobs.push_back(ex);
        lock.unlock();
        cv.notify_one();
        return MHD_YES;
      }
      case Exchange::Stage::Answered: {
        lock.unlock();
        bool close = !ex->req.keep_alive();
        return queue(connection, ex->res, close);
      }
      case Exchange::Stage::Cancelled:
        return MHD_NO;  // the drain deadline passed: close
      default:
        return MHD_YES;  // still computing (a spurious call): try again later
    }
  }

  MHD_Result access(MHD_Connection* connection, const char* method, const char* version, const char* upload_data,
                    size_t* upload_data_size, void** con_cls) {
    auto* holder = static_cast<std::shared_ptr<Exchange>*>(*con_cls);
    if (!holder) {  // no URI callback ran (cannot happen with MHD_OPTION_URI_LOG_CALLBACK set)
      holder = new std::shared_ptr<Exchange>(std::make_shared<Exchange>());
      *con_cls = holder;
      in_progress.fetch_add(1);
    }
    Exchange& ex = **holder;
    try {
      if (!ex.head_done) return on_head(connection, ex, method, version);
      if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        return on_body(ex, upload_data, n);
      }
      return on_complete(connection, *holder);
    } catch (const std::exception& e) {  // allocation failure: drop the connection, not the process
      std::fprintf(stderr, "culprit http (libmicrohttpd): closing a connection: %s\n", e.what());
      return MHD_NO;
    }
  }

  // ------------------------------------------------------------ lifetime

  int bind(std::string& error) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    std::string port = std::to_string(cfg.port);
    if (int rc = getaddrinfo(cfg.host.c_str(), port.c_str(), &hints, &res); rc != 0) {
      error = fmt::format("cannot resolve {}: {}", cfg.host, gai_strerror(rc));
      return -1;
    }
    int fd = -1;
    for (addrinfo* a = res; a; a = a->ai_next) {
      fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      int one = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) break;
      error = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) return -1;
    listen_fd = fd;
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    return addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                      : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  }

  bool start_daemon() {
    auto on_uri = [](void* cls, const char* uri, MHD_Connection*) -> void* {
      auto* self = static_cast<Impl*>(cls);
      auto ex = std::make_shared<Exchange>();
      ex->target = uri ? uri : "";
      self->in_progress.fetch_add(1);
      return new std::shared_ptr<Exchange>(std::move(ex));
    };
    auto on_completed = [](void* cls, MHD_Connection*, void** con_cls, MHD_RequestTerminationCode) {
      auto* self = static_cast<Impl*>(cls);
      auto* holder = static_cast<std::shared_ptr<Exchange>*>(*con_cls);
      if (!holder) return;
      if ((*holder)->charged) self->handler.release((*holder)->charged);
      (*holder)->charged = 0;
      delete holder;
      *con_cls = nullptr;
      self->in_progress.fetch_sub(1);
    };
    auto on_connection = [](void*, MHD_Connection*, void** socket_context, MHD_ConnectionNotificationCode code) {
      if (code == MHD_CONNECTION_NOTIFY_STARTED) *socket_context = new ConnectionState;
      else {
        delete static_cast<ConnectionState*>(*socket_context);
        *socket_context = nullptr;
      }
    };
    auto on_access = [](void* cls, MHD_Connection* connection, const char*, const char* method, const char* version,
                        const char* upload_data, size_t* upload_data_size, void** con_cls) -> MHD_Result {
      return static_cast<Impl*>(cls)->access(connection, method, version, upload_data, upload_data_size, con_cls);
    };
    using UriCallback = void* (*)(void*, const char*, MHD_Connection*);
    using CompletedCallback = void (*)(void*, MHD_Connection*, void**, MHD_RequestTerminationCode);
    using ConnectionCallback = void (*)(void*, MHD_Connection*, void**, MHD_ConnectionNotificationCode);
    using LogCallback = void (*)(void*, const char*, va_list);
    daemon = MHD_start_daemon(
        MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG, 0, nullptr, nullptr,
        static_cast<MHD_AccessHandlerCallback>(on_access), this,
        MHD_OPTION_LISTEN_SOCKET, static_cast<MHD_socket>(listen_fd),
        MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(cfg.max_connections),
        MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(cfg.header_timeout_s),
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, kConnectionMemory,
        MHD_OPTION_URI_LOG_CALLBACK, static_cast<UriCallback>(on_uri), this,
        MHD_OPTION_NOTIFY_COMPLETED, static_cast<CompletedCallback>(on_completed), this,
        MHD_OPTION_NOTIFY_CONNECTION, static_cast<ConnectionCallback>(on_connection), this,
        MHD_OPTION_EXTERNAL_LOGGER, static_cast<LogCallback>(log_mhd), this,
        MHD_OPTION_END);
    if (daemon) listen_fd = -1;  // MHD owns it now
    return daemon != nullptr;
  }

  // Gives up on every request still suspended: queued ones are dropped,
  // running ones abandoned; their connections are resumed so that MHD can
  // close them (MHD_stop_daemon refuses suspended connections).
  void cancel_suspended() {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& ex : suspended) {
      ex->stage = Exchange::Stage::Cancelled;
      MHD_resume_connection(ex->connection);
    }
    suspended.clear();
    jobs.clear();
  }

  void run() {
    for (unsigned i = 0; i < std::max(1u, cfg.threads); ++i) workers.emplace_back([this] { worker_loop(); });
    if (!start_daemon()) {
      std::fprintf(stderr, "culprit http (libmicrohttpd): cannot start the server\n");
      stop_requested = true;
    }
    {
      std::unique_lock<std::mutex> lock(stop_mu);
      stop_cv.wait(lock, [&] { return stop_requested.load(); });
    }
    if (daemon) {
      draining = true;
      MHD_socket fd = MHD_quiesce_daemon(daemon);
      if (fd != MHD_INVALID_SOCKET) ::close(fd);
      auto deadline = Clock::now() + std::chrono::seconds(cfg.drain_timeout_s);
      while (in_progress.load() > 0 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      cancel_suspended();
      MHD_stop_daemon(daemon);
      daemon = nullptr;
    }
    {
      std::unique_lock<std::mutex> lock(mu);
      jobs.clear();
      pool_stop = true;
    }
    cv.notify_all();
    {
      std::unique_lock<std::mutex> lock(mu);
      idle_cv.wait_for(lock, std::chrono::seconds(1), [&] { return busy == 0; });
      abandoned = busy;
    }
    for (auto& w : workers) {
      if (abandoned == 0) w.join();
      else w.detach();
    }
    workers.clear();
  }
};

HttpServer::HttpServer(HttpServerConfig config, HttpHandler& handler)
    : impl_(std::make_unique<Impl>(std::move(config), handler)) {}

HttpServer::~HttpServer() = default;

int HttpServer::bind(std::string& error) { return impl_->bind(error); }

void HttpServer::run() { impl_->run(); }

void HttpServer::stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->stop_mu);
    impl_->stop_requested.store(true);
  }
  impl_->stop_cv.notify_all();
}

bool HttpServer::stopping() const { return impl_->stop_requested.load(); }

size_t HttpServer::abandoned() const { return impl_->abandoned.load(); }

}  // namespace culprit::service
