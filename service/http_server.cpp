#include "service/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace culprit::service {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kChargeStep = 64u << 10;  // body bytes are reserved in steps of this
constexpr size_t kRefusalMargin = 64;      // connections over the limit that still get their 503

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

struct Connection {
  int fd = -1;
  uint64_t id = 0;
  std::string remote;
  RequestParser parser;
  std::string in;                 // received bytes the parser has not taken yet (pipelining)
  std::deque<std::string> out;    // answer bytes still to send
  size_t out_off = 0;
  enum class State { Reading, Dispatched, Writing, Lingering } state = State::Reading;
  Clock::time_point deadline;
  Clock::time_point request_start, head_done;
  Clock::time_point idle_since;   // accepted, or last answer sent: when it began waiting for a request
  bool head_checked = false;
  bool close_after_write = false;
  bool in_epoll = false;
  uint32_t interest = 0;
  size_t served = 0;
  size_t charged = 0;             // body bytes reserved for the request being read

  explicit Connection(RequestParser::Limits l) : parser(l) {}
};

struct Job {
  uint64_t conn = 0;
  HttpRequest req;
  Clock::time_point head_done;
};

struct Completion {
  uint64_t conn = 0;
  HttpResponse res;
  bool keep_alive = false;
  bool head_only = false;
};

}  // namespace

struct HttpServer::Impl {
  HttpServerConfig cfg;
  HttpHandler& handler;
  int listen_fd = -1, epoll_fd = -1, wake_fd = -1;
  std::atomic<bool> stop_requested{false};
  bool draining = false;
  Clock::time_point drain_deadline;
  Clock::time_point accept_paused_until{};
  std::map<uint64_t, std::unique_ptr<Connection>> conns;
  uint64_t next_id = 1;

  // Worker pool.
  std::mutex mu;
  std::condition_variable cv, idle_cv;
  std::deque<Job> jobs;
  std::deque<Completion> done;
  bool pool_stop = false;
  size_t busy = 0;
  std::vector<std::thread> workers;
  std::atomic<size_t> abandoned{0};

  Impl(HttpServerConfig c, HttpHandler& h) : cfg(std::move(c)), handler(h) {}

  ~Impl() {
    for (auto& [id, c] : conns)
      if (c->fd >= 0) ::close(c->fd);
    if (listen_fd >= 0) ::close(listen_fd);
    if (epoll_fd >= 0) ::close(epoll_fd);
    if (wake_fd >= 0) ::close(wake_fd);
  }

  void wake() {
    uint64_t one = 1;
    ssize_t r = ::write(wake_fd, &one, sizeof one);
    (void)r;
  }

  // ------------------------------------------------------------ workers

  // The event loop accepts, reads requests, answers /healthz and sends every
  // reply; the workers compute verdicts. When the verdicts take every core,
  // a loop thread at the workers' priority waits its turn behind them and
  // /healthz answers late, so each worker runs a few nice levels below the
  // loop (Linux keeps a nice value per thread; the scan threads a worker
  // starts inherit it). Lowering one's own priority needs no privilege; if
  // it fails, the worker runs at the loop's priority, as before.
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
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return pool_stop || !jobs.empty(); });
        if (jobs.empty()) return;  // stopping and nothing left
        job = std::move(jobs.front());
        jobs.pop_front();
        ++busy;
      }
      Completion c;
      c.conn = job.conn;
      try {
        handler.handle(job.req, c.res);
      } catch (const std::exception& e) {
        c.res = HttpResponse{};
        c.res.status = 500;
        handler.protocol_error(std::string("internal error: ") + e.what(), "", c.res);
      } catch (...) {
        c.res = HttpResponse{};
        c.res.status = 500;
        handler.protocol_error("internal error", "", c.res);
      }
      c.keep_alive = job.req.keep_alive() && !c.res.close;
      c.head_only = job.req.method == "HEAD";
      handler.answered(job.req, c.res, std::chrono::duration<double>(Clock::now() - job.head_done).count());
      job = Job{};  // frees the request (and its body) on this thread, before the answer is queued
      {
        std::lock_guard<std::mutex> lock(mu);
        done.push_back(std::move(c));
        --busy;
      }
      idle_cv.notify_all();
      wake();
    }
  }

  // ---------------------------------------------------------- epoll

  void set_interest(Connection& c, uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = c.id;
    if (events == 0) {
      if (c.in_epoll) epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c.fd, nullptr);
      c.in_epoll = false;
    } else if (!c.in_epoll) {
      epoll_ctl(epoll_fd, EPOLL_CTL_ADD, c.fd, &ev);
      c.in_epoll = true;
    } else if (c.interest != events) {
      epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &ev);
    }
    c.interest = events;
  }

  void close_conn(uint64_t id) {
    auto it = conns.find(id);
    if (it == conns.end()) return;
    Connection& c = *it->second;
    set_interest(c, 0);
    // Released before the client can see the close: one that reads the
    // end of the connection finds nothing of it still charged.
    if (c.charged) handler.release(c.charged);
    ::close(c.fd);
    conns.erase(it);
  }

  // --------------------------------------------------------- answers

  void start_writing(Connection& c, std::string head, std::string body, bool keep_alive) {
    // (A "100 Continue" may still be on its way: the answer goes after it.)
    c.out.push_back(std::move(head));
    if (!body.empty()) c.out.push_back(std::move(body));
    c.close_after_write = !keep_alive;
    c.state = Connection::State::Writing;
    c.deadline = Clock::now() + std::chrono::seconds(cfg.write_timeout_s);
    set_interest(c, EPOLLOUT | EPOLLRDHUP);
    on_writable(c);
  }

  // Sends `res` without copying its body (the head is built apart).
  void send_response(Connection& c, HttpResponse& res, bool keep_alive, bool head_only) {
    keep_alive = keep_alive && !draining && c.served + 1 < cfg.max_requests_per_connection;
    std::string head = response_head(res, keep_alive);
    std::string body = head_only || res.status == 204 || res.status == 304 ? std::string() : std::move(res.body);
    start_writing(c, std::move(head), std::move(body), keep_alive);
  }

  // An answer the loop gives itself (errors, timeouts, fast routes).
  void answer_now(Connection& c, HttpRequest* req, HttpResponse& res, bool keep_alive) {
    if (req) handler.answered(*req, res, std::chrono::duration<double>(Clock::now() - c.head_done).count());
    bool head_only = req && req->method == "HEAD";
    send_response(c, res, keep_alive && !res.close, head_only);
  }

  void protocol_failure(Connection& c, int status, const std::string& message, const std::string& limit) {
    HttpResponse res;
    res.status = status;
    handler.protocol_error(message, limit, res);
    HttpRequest& r = c.parser.request();
    bool has_line = !r.method.empty();
    if (has_line) r.remote_addr = c.remote;
    if (c.head_done == Clock::time_point{}) c.head_done = Clock::now();
    answer_now(c, has_line ? &r : nullptr, res, false);
  }

  void on_writable(Connection& c) {
    while (!c.out.empty()) {
      const std::string& s = c.out.front();
      ssize_t n = ::send(c.fd, s.data() + c.out_off, s.size() - c.out_off, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        close_conn(c.id);
        return;
      }
      c.out_off += static_cast<size_t>(n);
      if (c.out_off == s.size()) {
        c.out.pop_front();
        c.out_off = 0;
      }
    }
    if (c.state != Connection::State::Writing) {  // a 100 Continue went out; keep reading
      set_interest(c, EPOLLIN | EPOLLRDHUP);
      return;
    }
    if (c.close_after_write) {
      // A lingering close (as nginx does): the answer is complete, so stop
      // sending, but read and drop what the client still sends for a
      // moment, so that a client still sending a refused body gets to read
      // the answer instead of a reset.
      // What was read of the refused request is dropped first, and its
      // reservation returned: it is held for nothing while the connection
      // lingers, and the client, which sees the end of the answer next,
      // finds nothing of it still charged.
      c.parser = RequestParser(cfg.parse_limits);
      if (c.charged) handler.release(c.charged);
      c.charged = 0;
      ::shutdown(c.fd, SHUT_WR);
      c.state = Connection::State::Lingering;
      c.deadline = Clock::now() + std::chrono::seconds(2);
      c.in.clear();
      set_interest(c, EPOLLIN | EPOLLRDHUP);
      return;
    }
    ++c.served;
    c.idle_since = Clock::now();
    c.state = Connection::State::Reading;
    c.head_checked = false;
    c.head_done = {};
    c.deadline = Clock::now() + std::chrono::seconds(cfg.keep_alive_s);
    set_interest(c, EPOLLIN | EPOLLRDHUP);
    process_input(c);  // a pipelined request may be waiting already (may close the connection)
  }

  // ---------------------------------------------------------- reading

  bool charge_body(Connection& c) {
    size_t have = c.parser.request().body.size();
    if (have <= c.charged) return true;
    size_t need = (have - c.charged + kChargeStep - 1) / kChargeStep * kChargeStep;
    if (!handler.reserve_body(need)) {
      protocol_failure(c, 429, "the service's memory budget is exhausted; retry later", "max_total_bytes");
      return false;
    }
    c.charged += need;
    return true;
  }

  void dispatch(Connection& c) {
    HttpRequest req = c.parser.take();
    req.remote_addr = c.remote;
    req.body.set_charge(&handler, c.charged);
    c.charged = 0;
    c.state = Connection::State::Dispatched;
    set_interest(c, 0);  // nothing to read or write until the answer
    {
      std::lock_guard<std::mutex> lock(mu);
      jobs.push_back(Job{c.id, std::move(req), c.head_done});
    }
    cv.notify_one();
  }

  void process_input(Connection& c) {
    while (c.state == Connection::State::Reading && !c.in.empty()) {
      bool was_started = c.parser.started();
      size_t used = c.parser.feed(c.in.data(), c.in.size());
      c.in.erase(0, used);
      auto now = Clock::now();
      if (!was_started && c.parser.started()) {
        c.request_start = now;
        c.deadline = now + std::chrono::seconds(cfg.header_timeout_s);
      }
      if (c.parser.state() == RequestParser::State::Error) {
        protocol_failure(c, c.parser.error_status(), c.parser.error_message(), c.parser.error_limit());
        return;
      }
      if (!charge_body(c)) return;
      if (c.parser.head_complete() && !c.head_checked) {
        c.head_checked = true;
        c.head_done = now;
        c.deadline = c.request_start + std::chrono::seconds(cfg.request_timeout_s);
        HttpRequest& r = c.parser.request();
        r.remote_addr = c.remote;
        HttpResponse res;
        if (handler.on_head(r, res)) {
          bool complete = c.parser.state() == RequestParser::State::Complete;
          // A body not read (or not wholly) leaves bytes on the connection: close.
          bool keep = complete && r.keep_alive() && !res.close;
          HttpRequest req = complete ? c.parser.take() : std::move(c.parser.request());
          uint64_t id = c.id;
          answer_now(c, &req, res, keep);  // may close the connection
          // The body is freed with `req` here: so is its reservation.
          if (auto it = conns.find(id); it != conns.end() && it->second->charged) {
            handler.release(it->second->charged);
            it->second->charged = 0;
          }
          return;
        }
        if (c.parser.state() == RequestParser::State::Body && iequals(r.header("expect"), "100-continue")) {
          c.out.push_back("HTTP/1.1 100 Continue\r\n\r\n");
          uint64_t id = c.id;
          on_writable(c);  // may close the connection
          if (!conns.count(id)) return;
          if (!c.out.empty()) set_interest(c, EPOLLIN | EPOLLOUT | EPOLLRDHUP);
        }
      }
      if (c.parser.state() == RequestParser::State::Complete) {
        dispatch(c);
        return;
      }
      if (used == 0) break;
    }
  }

  void on_readable(Connection& c) {
    char buf[65536];
    // At most 1 MiB per wake-up: one fast sender does not hold the loop.
    for (int rounds = 0; rounds < 16 && c.state == Connection::State::Reading; ++rounds) {
      ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        close_conn(c.id);
        return;
      }
      if (n == 0) {  // the client closed: nothing more can be answered
        close_conn(c.id);
        return;
      }
      c.in.append(buf, static_cast<size_t>(n));
      uint64_t id = c.id;
      process_input(c);
      if (!conns.count(id)) return;
    }
  }

  // --------------------------------------------------------- accepting

  // Whether `c` waits for a request that has not begun: nothing parsed,
  // nothing buffered, nothing unread in the socket.
  static bool is_idle(const Connection& c) {
    if (c.state != Connection::State::Reading || c.parser.started() || !c.in.empty()) return false;
    char byte;
    ssize_t n = ::recv(c.fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }

  // When the table is full, a new connection takes the place of the one
  // that has waited longest for a request (keep-alive or never used):
  // otherwise --max-connections sockets that send nothing keep every
  // client, /healthz included, at 503 until the keep-alive deadline, and
  // open again as soon as they are closed. Only when every connection has a
  // request in progress does the new one get 503. True when one was closed.
  bool evict_oldest_idle() {
    uint64_t victim = 0;
    Clock::time_point oldest = Clock::time_point::max();
    for (auto& [id, c] : conns)
      if (c->idle_since < oldest && is_idle(*c)) {
        oldest = c->idle_since;
        victim = id;
      }
    if (!victim) return false;
    close_conn(victim);
    return true;
  }

  void accept_all() {
    for (;;) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: stop accepting for a moment instead of spinning.
          accept_paused_until = Clock::now() + std::chrono::milliseconds(100);
          epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
        }
        return;
      }
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      char host[INET6_ADDRSTRLEN] = "";
      if (addr.ss_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&addr)->sin_addr, host, sizeof host);
      else if (addr.ss_family == AF_INET6)
        inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&addr)->sin6_addr, host, sizeof host);
      bool full = conns.size() >= cfg.max_connections;
      if (full && !draining && evict_oldest_idle()) full = conns.size() >= cfg.max_connections;
      // Beyond the limit, a connection only gets its 503 (with a lingering
      // close, so the client reads it); beyond a margin above that, none.
      if (full && conns.size() >= cfg.max_connections + kRefusalMargin) {
        ::close(fd);
        continue;
      }
      auto c = std::make_unique<Connection>(cfg.parse_limits);
      c->fd = fd;
      c->id = next_id++;
      c->remote = host;
      c->deadline = Clock::now() + std::chrono::seconds(cfg.header_timeout_s);
      c->idle_since = Clock::now();
      Connection& ref = *c;
      conns.emplace(c->id, std::move(c));
      if (full) {
        HttpResponse res;
        res.status = 503;
        res.set_header("Retry-After", "1");
        handler.protocol_error(fmt::format("too many connections (at most {}); retry later", cfg.max_connections),
                               "connections", res);
        send_response(ref, res, false, false);  // may close it
        continue;
      }
      set_interest(ref, EPOLLIN | EPOLLRDHUP);
    }
  }

  // --------------------------------------------------------- the loop

  void begin_drain() {
    draining = true;
    drain_deadline = Clock::now() + std::chrono::seconds(cfg.drain_timeout_s);
    if (listen_fd >= 0) {
      epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
      ::close(listen_fd);
      listen_fd = -1;
    }
    std::vector<uint64_t> idle;
    for (auto& [id, c] : conns)
      if (c->state == Connection::State::Reading && !c->parser.started() && c->in.empty()) idle.push_back(id);
    for (auto id : idle) close_conn(id);
  }

  void check_deadlines() {
    auto now = Clock::now();
    std::vector<uint64_t> expired;
    for (auto& [id, c] : conns)
      if (c->state != Connection::State::Dispatched && now > c->deadline) expired.push_back(id);
    for (auto id : expired) {
      auto it = conns.find(id);
      if (it == conns.end()) continue;
      Connection& c = *it->second;
      if (c.state == Connection::State::Reading && c.parser.started()) {
        bool head = !c.parser.head_complete();
        protocol_failure(c, 408,
                         head ? fmt::format("the request head did not arrive within {} s", cfg.header_timeout_s)
                              : fmt::format("the request did not arrive within {} s", cfg.request_timeout_s),
                         head ? "header_timeout" : "request_timeout");
        // The 408 must go out within a short time too, or the connection goes.
        if (conns.count(id)) conns[id]->deadline = now + std::chrono::seconds(1);
      } else {
        close_conn(id);  // idle keep-alive, or an answer the client does not take
      }
    }
    if (draining) {
      std::vector<uint64_t> idle;
      for (auto& [id, c] : conns)
        if (c->state == Connection::State::Reading && !c->parser.started() && c->in.empty()) idle.push_back(id);
      for (auto id : idle) close_conn(id);
    }
  }

  void take_completions() {
    std::deque<Completion> ready;
    {
      std::lock_guard<std::mutex> lock(mu);
      ready.swap(done);
    }
    for (auto& d : ready) {
      auto it = conns.find(d.conn);
      if (it == conns.end()) continue;
      send_response(*it->second, d.res, d.keep_alive, d.head_only);
    }
  }

  void run() {
    for (unsigned i = 0; i < std::max(1u, cfg.threads); ++i) workers.emplace_back([this] { worker_loop(); });
    std::vector<epoll_event> events(256);
    for (;;) {
      int n = epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), 100);
      for (int i = 0; i < n; ++i) {
        uint64_t key = events[static_cast<size_t>(i)].data.u64;
        uint32_t ev = events[static_cast<size_t>(i)].events;
        if (key == 0) {
          accept_all();
          continue;
        }
        if (key == UINT64_MAX) {
          uint64_t v;
          ssize_t r = ::read(wake_fd, &v, sizeof v);
          (void)r;
          continue;
        }
        auto it = conns.find(key);
        if (it == conns.end()) continue;
        if (ev & EPOLLOUT) {
          on_writable(*it->second);  // may close the connection
          it = conns.find(key);
          if (it == conns.end()) continue;
        }
        Connection& c = *it->second;
        if (c.state == Connection::State::Lingering) {
          char sink[65536];
          ssize_t got;
          int rounds = 0;
          while ((got = ::recv(c.fd, sink, sizeof sink, 0)) > 0 && ++rounds < 16) {
          }
          if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) close_conn(key);
        } else if (c.state == Connection::State::Reading && (ev & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)))
          on_readable(c);
        else if (c.state == Connection::State::Writing && (ev & (EPOLLHUP | EPOLLERR)))
          close_conn(key);
      }
      take_completions();
      if (stop_requested.load() && !draining) begin_drain();
      if (!draining && listen_fd >= 0 && accept_paused_until != Clock::time_point{} && Clock::now() > accept_paused_until) {
        accept_paused_until = {};
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = 0;
        epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev);
      }
      check_deadlines();
      if (draining && (conns.empty() || Clock::now() > drain_deadline)) break;
    }
    // Whatever is left after the drain deadline is cut off.
    std::vector<uint64_t> left;
    for (auto& [id, c] : conns) left.push_back(id);
    for (auto id : left) close_conn(id);
    {
      std::unique_lock<std::mutex> lock(mu);
      jobs.clear();  // their connections are gone
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
    std::lock_guard<std::mutex> lock(mu);
    done.clear();
  }

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
    int bound = addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                           : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = 0;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev);
    ev.data.u64 = UINT64_MAX;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev);
    return bound;
  }
};

HttpServer::HttpServer(HttpServerConfig config, HttpHandler& handler)
    : impl_(std::make_unique<Impl>(std::move(config), handler)) {}

HttpServer::~HttpServer() = default;

int HttpServer::bind(std::string& error) { return impl_->bind(error); }

void HttpServer::run() { impl_->run(); }

void HttpServer::stop() {
  impl_->stop_requested.store(true);
  if (impl_->wake_fd >= 0) impl_->wake();
}

bool HttpServer::stopping() const { return impl_->stop_requested.load(); }

size_t HttpServer::abandoned() const { return impl_->abandoned.load(); }

}  // namespace culprit::service
