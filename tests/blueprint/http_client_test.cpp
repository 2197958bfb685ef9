// The blueprint's HttpClient (blueprint/net/http_client.h), the one client of
// every outbound call, against a real HTTP server on 127.0.0.1: the
// service's own (service/http_server.h), which parses what the client sends
// byte for byte. What is checked here is what the service's clients rely on:
// a streamed body arrives whole, an aborted one is never taken for a whole
// request, methods and per-request headers go out as asked, and a failure
// comes back as a kind the caller can word.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <mutex>
#include <thread>
#include <vector>

#include "blueprint/net/http_client.h"
#include "service/http_server.h"

namespace {

using culprit::blueprint::HttpClient;
using culprit::blueprint::HttpClientConfig;
using culprit::blueprint::HttpFailure;

// Records every request it handles and answers:
//   /status/N: status N, body "no"; anything else: 200 with
//   "<method> <bytes of body> <content-type> <accept>".
class RecordingHandler final : public culprit::service::HttpHandler {
 public:
  bool on_head(culprit::service::HttpRequest&, culprit::service::HttpResponse&) override { return false; }
  bool reserve_body(size_t) override { return true; }
  void release(size_t) override {}
  void handle(culprit::service::HttpRequest& req, culprit::service::HttpResponse& res) override {
    std::string body;
    req.body.read([&](const char* p, size_t n) { body.append(p, n); return true; }, 1u << 30);
    {
      std::lock_guard<std::mutex> lock(mu);
      ++handled;
      last_body = body;
      last_chunked = req.chunked;
    }
    if (req.path == "/slow") {  // 50 ms, counting how many are in here at once
      {
        std::lock_guard<std::mutex> lock(mu);
        max_inside = std::max(max_inside, ++inside);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::lock_guard<std::mutex> lock(mu);
      --inside;
    }
    if (req.path.rfind("/status/", 0) == 0) {
      res.status = std::stoi(req.path.substr(8));
      res.set_content("no", "text/plain");
      return;
    }
    res.set_content(req.method + " " + std::to_string(body.size()) + " " + req.header("content-type") + " " +
                        req.header("accept"),
                    "text/plain");
  }
  void protocol_error(const std::string& message, const std::string&, culprit::service::HttpResponse& res) override {
    res.set_content(message, "text/plain");
  }
  void answered(const culprit::service::HttpRequest&, const culprit::service::HttpResponse&, double) override {}

  std::mutex mu;
  int handled = 0;
  std::string last_body;
  bool last_chunked = false;
  int inside = 0, max_inside = 0;
};

struct LocalServer {
  RecordingHandler handler;
  std::unique_ptr<culprit::service::HttpServer> server;
  std::thread loop;
  int port = -1;
  LocalServer() {
    culprit::service::HttpServerConfig c;
    c.port = 0;
    c.threads = 2;
    c.parse_limits = {64 << 10, 8 << 10, 100, 1ULL << 30};
    server = std::make_unique<culprit::service::HttpServer>(c, handler);
    std::string error;
    port = server->bind(error);
    REQUIRE_MESSAGE(port > 0, error);
    loop = std::thread([this] { server->run(); });
  }
  ~LocalServer() {
    server->stop();
    loop.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

// A port nothing listens on: bound, never listened, closed.
int closed_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

culprit::blueprint::HttpRequest request(const char* method, const char* path, const char* content_type = "") {
  culprit::blueprint::HttpRequest r;
  r.method = method;
  r.path = path;
  r.content_type = content_type;
  return r;
}

HttpClientConfig config_for(const std::string& url) {
  HttpClientConfig c;
  c.base_url = url;
  c.retries = 0;
  c.timeout_ns = 20LL * 1000000000;
  return c;
}

}  // namespace

TEST_CASE("HttpClient: a streamed body arrives whole, chunked, in order") {
  LocalServer s;
  HttpClient client(config_for(s.url()));
  auto r = request("POST", "/v1/stream", "application/x-ndjson");
  int pieces = 0;
  std::string expected;
  r.body_source = [&](std::string& piece) {
    if (pieces == 300) return true;  // empty piece: the end
    piece = std::string(10000 + pieces, static_cast<char>('a' + pieces % 26)) + "\n";
    expected += piece;
    ++pieces;
    return true;
  };
  auto res = client.send(r);
  REQUIRE_MESSAGE(res.ok(), res.describe());
  CHECK(res.body == "POST " + std::to_string(expected.size()) + " application/x-ndjson application/json, */*");
  std::lock_guard<std::mutex> lock(s.handler.mu);
  CHECK(s.handler.last_chunked);
  CHECK(s.handler.last_body == expected);
}

TEST_CASE("HttpClient: a body source that gives up aborts the request, which the server never handles") {
  LocalServer s;
  HttpClientConfig c = config_for(s.url());
  c.retries = 3;  // an aborted stream must not be sent again either
  HttpClient client(c);
  auto r = request("POST", "/v1/stream", "application/x-ndjson");
  int calls = 0;
  r.body_source = [&](std::string& piece) {
    if (++calls == 3) return false;
    piece = std::string(70000, 'x');
    return true;
  };
  auto res = client.send(r);
  CHECK_FALSE(res.ok());
  CHECK(res.failure == HttpFailure::send);
  CHECK(res.attempts == 1);
  CHECK(calls == 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::lock_guard<std::mutex> lock(s.handler.mu);
  CHECK(s.handler.handled == 0);
}

TEST_CASE("HttpClient: DELETE, a plain POST and a per-request Accept go out as asked") {
  LocalServer s;
  HttpClient client(config_for(s.url()));
  auto d = client.send(request("DELETE", "/v1/workloads/x"));
  REQUIRE_MESSAGE(d.ok(), d.describe());
  CHECK(d.body == "DELETE 0  application/json, */*");

  auto post = request("POST", "/v1/attributions", "application/json");
  post.body = "{\"a\":1}";
  post.headers = {{"Accept", "text/plain"}};
  auto p = client.send(post);
  REQUIRE_MESSAGE(p.ok(), p.describe());
  CHECK(p.body == "POST 7 application/json text/plain");
  std::lock_guard<std::mutex> lock(s.handler.mu);
  CHECK_FALSE(s.handler.last_chunked);
}

TEST_CASE("HttpClient: with retries 0, a 503 is answered once and kept as it is") {
  LocalServer s;
  HttpClient client(config_for(s.url()));
  auto r = client.get("/status/503");
  CHECK(r.status == 503);
  CHECK(r.error.empty());
  CHECK(r.failure == HttpFailure::none);
  CHECK(r.attempts == 1);
  CHECK(r.body == "no");
  CHECK(r.transport_problem().empty());
}

TEST_CASE("HttpClient: a refused connection is a connect failure with the system's reason") {
  HttpClient client(config_for("http://127.0.0.1:" + std::to_string(closed_port())));
  auto r = client.get("/readyz");
  CHECK(r.status == 0);
  CHECK(r.failure == HttpFailure::connect);
  CHECK(r.os_error == ECONNREFUSED);
  CHECK(r.transport_problem() == "cannot connect: Connection refused");
}

TEST_CASE("HttpClient: usable_base_url takes http(s) URLs with a host and says why it refuses others") {
  std::string why;
  CHECK(HttpClient::usable_base_url("http://127.0.0.1:8080", why));
  CHECK(HttpClient::usable_base_url("https://culprit.example/prefix", why));
  CHECK(HttpClient::usable_base_url("http://[::1]:8080", why));
  CHECK_FALSE(HttpClient::usable_base_url("127.0.0.1:8080", why));
  CHECK(why == "it must start with http:// or https://");
  CHECK_FALSE(HttpClient::usable_base_url("ftp://host", why));
  CHECK_FALSE(HttpClient::usable_base_url("http://", why));
  CHECK(why == "it names no host");
  CHECK_FALSE(HttpClient::usable_base_url("http://:8080/x", why));
  CHECK_FALSE(HttpClient::usable_base_url("http://host name", why));
  CHECK(why == "it holds a space or a control character");
}

TEST_CASE("HttpClient: retries spend the backend's budget, and answers that needed none earn it back") {
  LocalServer s;
  HttpClientConfig c = config_for(s.url());
  c.retries = 3;
  c.backoff_base_ns = 1000000;
  c.backoff_max_ns = 2000000;
  HttpClient client(c);
  // 10 tokens: requests 1-3 retry 3 times each, request 4 once, then none.
  for (int i = 0; i < 20; ++i) client.get("/status/500");
  {
    std::lock_guard<std::mutex> lock(s.handler.mu);
    CHECK(s.handler.handled == 30);
  }
  auto r = client.get("/status/500");
  CHECK(r.status == 500);
  CHECK(r.attempts == 1);
  CHECK(r.retry_budget_spent);
  CHECK(r.describe().find("retry budget is spent") != std::string::npos);
  // Ten answers that needed no retry earn one token: one retry, no more.
  for (int i = 0; i < 10; ++i) CHECK(client.get("/").ok());
  r = client.get("/status/500");
  CHECK(r.attempts == 2);
  CHECK(r.retry_budget_spent);
}

TEST_CASE("HttpClient: max_in_flight bounds the requests on the wire, every thread together") {
  LocalServer s;
  HttpClientConfig c = config_for(s.url());
  c.max_in_flight = 1;
  HttpClient client(c);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      if (client.get("/slow").ok()) ++ok;
    });
  for (auto& t : threads) t.join();
  CHECK(ok == 4);
  std::lock_guard<std::mutex> lock(s.handler.mu);
  CHECK(s.handler.max_inside == 1);
}

TEST_CASE("HttpClient: without a bound, requests from several threads do run at once (the server has 2 threads)") {
  LocalServer s;
  HttpClient client(config_for(s.url()));
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&] { client.get("/slow"); });
  for (auto& t : threads) t.join();
  std::lock_guard<std::mutex> lock(s.handler.mu);
  CHECK(s.handler.max_inside == 2);
}
