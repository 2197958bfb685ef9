// service/http: the request parser and body, and the service in-process
// (the real server on a loopback port: the same loop, routes and limits as
// `culprit serve`, issue 12).
#include "service/http.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <string>
#include <vector>

#include "base/limits.h"
#include "service/host_check.h"
#include "service/loopback_service.h"
#include "tests/support/test_support.h"

using namespace culprit;
using namespace culprit::service;

namespace {

RequestParser::Limits small_limits() { return {4096, 1024, 20, 1 << 20}; }

// Feeds `bytes` in pieces of `step` and collects complete requests.
std::vector<HttpRequest> parse_all(const std::string& bytes, size_t step, RequestParser& p) {
  std::vector<HttpRequest> out;
  size_t pos = 0;
  std::string pending;
  while (pos < bytes.size() || !pending.empty()) {
    if (pending.empty()) {
      pending = bytes.substr(pos, step);
      pos += step;
    }
    size_t used = p.feed(pending.data(), pending.size());
    pending.erase(0, used);
    if (p.state() == RequestParser::State::Error) break;
    if (p.state() == RequestParser::State::Complete) out.push_back(p.take());
    else if (used == 0 && pos >= bytes.size()) break;
  }
  return out;
}

std::string body_of(HttpRequest& r) {
  std::string out;
  r.body.read([&](const char* d, size_t n) { out.append(d, n); return true; }, 1 << 30);
  return out;
}

int error_for(const std::string& bytes) {
  RequestParser p(small_limits());
  parse_all(bytes, bytes.size(), p);
  return p.state() == RequestParser::State::Error ? p.error_status() : 0;
}

}  // namespace

TEST_CASE("RequestParser: pipelined requests, byte by byte or all at once") {
  std::string two = "GET /a?x=1&y=%41+b HTTP/1.1\r\nHost: h\r\nX-Y:  v \r\n\r\n"
                    "POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhelloGET /c HTTP/1.0\r\n\r\n";
  for (size_t step : {size_t(1), size_t(7), two.size()}) {
    CAPTURE(step);
    RequestParser p(small_limits());
    auto reqs = parse_all(two, step, p);
    REQUIRE(reqs.size() == 3);
    CHECK(reqs[0].method == "GET");
    CHECK(reqs[0].path == "/a");
    CHECK(reqs[0].param("y") == "A b");
    CHECK(reqs[0].header("x-y") == "v");
    CHECK(reqs[0].keep_alive());
    CHECK(body_of(reqs[1]) == "hello");
    CHECK(reqs[2].minor_version == 0);
    CHECK_FALSE(reqs[2].keep_alive());
  }
}

TEST_CASE("RequestParser: chunked bodies, with extensions and trailers") {
  std::string req = "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nT: 1\r\n\r\n";
  for (size_t step : {size_t(1), size_t(3), req.size()}) {
    RequestParser p(small_limits());
    auto reqs = parse_all(req, step, p);
    REQUIRE(reqs.size() == 1);
    CHECK(reqs[0].chunked);
    CHECK(body_of(reqs[0]) == "hello world");
  }
}

TEST_CASE("RequestParser: framing and size errors get the status RFC 9112 asks for") {
  CHECK(error_for("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab") == 400);  // issue 12 #16
  CHECK(error_for("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1, 1\r\n\r\na") == 400);
  CHECK(error_for("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n") == 400);
  CHECK(error_for("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n") == 501);
  CHECK(error_for("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n") == 400);
  CHECK(error_for("GET / HTTP/2.0\r\n\r\n") == 505);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: h\r\n folded: x\r\n\r\n") == 400);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: h\r\nBad Name: x\r\n\r\n") == 400);
  CHECK(error_for("GET /" + std::string(2000, 'a') + " HTTP/1.1\r\nHost: h\r\n\r\n") == 414);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(2000, 'a') + "\r\n\r\n") == 431);
  std::string many = "GET / HTTP/1.1\r\nHost: h\r\n";
  for (int i = 0; i < 30; ++i) many += "X" + std::to_string(i) + ": y\r\n";
  CHECK(error_for(many + "\r\n") == 431);
  CHECK(error_for("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2000000\r\n\r\n") == 413);
  CHECK(error_for("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFF\r\n") == 413);
  CHECK(error_for("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n") == 400);
  CHECK(error_for("\x16\x03\x01 binary\r\n\r\n") == 400);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: h\r\n\r\n") == 0);
}

TEST_CASE("RequestBody: gzip is decoded as it is read, and bounded") {
  std::string plain(100000, 'x');
  uLongf n = compressBound(plain.size()) + 64;
  std::string z(n, '\0');
  // A zlib stream (what "deflate" means in HTTP).
  REQUIRE(compress(reinterpret_cast<Bytef*>(z.data()), &n, reinterpret_cast<const Bytef*>(plain.data()), plain.size()) == Z_OK);
  z.resize(n);
  {
    RequestBody b;
    b.append(z.data(), z.size());
    b.set_encoding("deflate");
    std::string out;
    CHECK(b.read([&](const char* d, size_t k) { out.append(d, k); return true; }, 1 << 20) == RequestBody::ReadStatus::Ok);
    CHECK(out == plain);
  }
  {
    RequestBody b;
    b.append(z.data(), z.size());
    b.set_encoding("deflate");
    CHECK(b.read([](const char*, size_t) { return true; }, 50000) == RequestBody::ReadStatus::TooLarge);
  }
  {
    RequestBody b;
    b.append("not compressed", 14);
    b.set_encoding("gzip");
    CHECK(b.read([](const char*, size_t) { return true; }, 1 << 20) == RequestBody::ReadStatus::BadEncoding);
  }
}

namespace {
struct Counting : BodyCharge {
  size_t released = 0;
  void release(size_t n) override { released += n; }
};
}  // namespace

TEST_CASE("RequestBody: its charge is released as it is read, and all of it") {
  Counting c;
  RequestBody b;
  std::string piece(300000, 'a');
  b.append(piece.data(), piece.size());
  b.set_charge(&c, 320000);
  size_t seen_before_first = c.released;
  b.read([&](const char*, size_t) { return true; }, 1 << 30);
  CHECK(seen_before_first == 0);
  CHECK(c.released == 320000);
}

namespace {

std::shared_ptr<const Attributor> tiny_attributor() {
  auto program = culprit::testing::program_for(R"(
extractor Err from app {
  match /ERR (?<code>\d+)/
  emit app.err { code: int(code) }
  test { line "ERR 5" expect app.err { code: 5 } }
  test { line "OK" expect none }
}
)");
  return std::make_shared<const Attributor>(program, std::make_shared<const RecoveryTable>());  // no classes: recommends nothing
}

std::string post(const std::string& path, const std::string& type, const std::string& body, const std::string& extra = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: " + type + "\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n" + extra + "\r\n" + body;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("LoopbackService: pipelined requests answered in order, limits as errors") {
  ServiceConfig cfg;
  LoopbackService svc(cfg, tiny_attributor());
  REQUIRE(svc.port() > 0);
  std::string ndjson = "{\"workload_id\":\"w\",\"nodes\":[\"n1\"]}\n{\"host\":\"n1\",\"source\":\"app\",\"text\":\"ERR 7\"}\n";
  std::string out = svc.exchange("GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n" + post("/v1/attributions", "application/x-ndjson", ndjson) +
                                     "GET /nothing HTTP/1.1\r\nHost: h\r\n\r\n");
  CHECK(count(out, "HTTP/1.1 ") == 3);
  CHECK(out.find("HTTP/1.1 200") < out.find("culprit.verdict/v2"));
  CHECK(out.find("HTTP/1.1 404") > out.find("culprit.verdict/v2"));
  // A context nested 100,000 deep: 400 limit_exceeded, not a crash.
  std::string deep = "{\"workload_id\":\"x\",\"nodes\":[" + std::string(100000, '[') + std::string(100000, ']') + "]}";
  out = svc.exchange(post("/v1/workloads", "application/json", deep));
  CHECK(out.find("HTTP/1.1 400") == 0);
  CHECK(out.find("json_depth") != std::string::npos);
  // Repeated keys and an exit code out of range are refused.
  out = svc.exchange(post("/v1/workloads", "application/json", R"({"workload_id":"a","workload_id":"b","nodes":[]})"));
  CHECK(out.find("duplicate key") != std::string::npos);
  out = svc.exchange(post("/v1/workloads", "application/json",
                              R"({"workload_id":"a","nodes":[],"terminal":{"exit_code":9223372036854775808}})"));
  CHECK(out.find("out of range") != std::string::npos);
  // Content-Encoding br: 415.
  out = svc.exchange(post("/v1/attributions", "application/x-ndjson", ndjson, "Content-Encoding: br\r\n"));
  CHECK(out.find("HTTP/1.1 415") == 0);
  CHECK(svc.budget_in_use() == 0);  // nothing of these requests is still charged
}

TEST_CASE("LoopbackService: a chunked body over max_body gets 413, and nothing of it stays charged") {
  ServiceConfig cfg;
  cfg.max_body = 4096;
  LoopbackService svc(cfg, tiny_attributor());
  REQUIRE(svc.port() > 0);
  // Chunked, so that the limit is crossed while the body is being read (and
  // charged), not announced in the head.
  std::string req = "POST /v1/attributions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-ndjson\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 3; ++i) req += "bb8\r\n" + std::string(3000, 'x') + "\r\n";
  req += "0\r\n\r\n";
  std::string out = svc.exchange(req);
  CHECK(out.find("HTTP/1.1 413") == 0);
  CHECK(count(out, "HTTP/1.1 ") == 1);
  CHECK(svc.budget_in_use() == 0);
}

TEST_CASE("LoopbackService: `unread` reaches coverage as local mode lists it, and is read strictly (issue 33)") {
  ServiceConfig cfg;
  LoopbackService svc(cfg, tiny_attributor());
  REQUIRE(svc.port() > 0);
  std::string obs = "{\"host\":\"n1\",\"source\":\"app\",\"text\":\"ERR 7\"}\n";
  std::string head = R"({"context":{"workload_id":"w","nodes":["n1"]},"unread":{"ignored_files":["NOTES.txt"],)"
                     R"("refused_files":[{"path":"logs/n1/pipe.log","reason":"it is a FIFO, not a regular file"}],)"
                     R"("warnings":["logs/n2: cannot list it"]}})";
  std::string out = svc.exchange(post("/v1/attributions", "application/x-ndjson", head + "\n" + obs));
  REQUIRE(out.find("HTTP/1.1 200") == 0);
  auto verdict = nlohmann::json::parse(out.substr(out.find("\r\n\r\n") + 4));
  CHECK(verdict["coverage"]["ignored_files"] == nlohmann::json::parse(R"(["NOTES.txt", "logs/n1/pipe.log"])"));
  std::string warnings = verdict["coverage"]["warnings"].dump();
  CHECK(warnings.find("logs/n1/pipe.log not read: it is a FIFO") != std::string::npos);
  CHECK(warnings.find("logs/n2: cannot list it") != std::string::npos);
  // The JSON body takes it too.
  out = svc.exchange(post("/v1/attributions", "application/json",
                              R"({"context":{"workload_id":"w","nodes":["n1"]},"unread":{"warnings":["w1"]}})"));
  REQUIRE(out.find("HTTP/1.1 200") == 0);
  CHECK(out.find("w1") != std::string::npos);
  // Unknown keys, wrong types and strings past the bound are refused.
  out = svc.exchange(post("/v1/attributions", "application/json",
                              R"({"context":{"workload_id":"w","nodes":[]},"unread":{"ignored":["x"]}})"));
  CHECK(out.find("HTTP/1.1 400") == 0);
  CHECK(out.find("unknown key 'ignored'") != std::string::npos);
  out = svc.exchange(post("/v1/attributions", "application/json",
                              R"({"context":{"workload_id":"w","nodes":[]},"unread":{"refused_files":["x"]}})"));
  CHECK(out.find("HTTP/1.1 400") == 0);
  CHECK(out.find("{path, reason}") != std::string::npos);
  std::string big(limits::kUnreadEntryBytes + 1, 'a');
  out = svc.exchange(post("/v1/attributions", "application/x-ndjson",
                              R"({"context":{"workload_id":"w","nodes":[]},"unread":{"warnings":[")" + big + "\"]}}\n"));
  CHECK(out.find("HTTP/1.1 400") == 0);
  CHECK(out.find("unread_entry_bytes") != std::string::npos);
  CHECK(svc.budget_in_use() == 0);
}

TEST_CASE("HostAllowList: loopback, the listen address and --allow-host names; nothing else") {
  using culprit::service::HostAllowList;
  HostAllowList wildcard("0.0.0.0", {});
  for (const char* ok : {"localhost", "LOCALHOST:8080", "localhost.", "127.0.0.1", "127.1.2.3:80", "[::1]", "[::1]:8081"})
    CHECK_MESSAGE(wildcard.allowed(ok), ok);
  for (const char* bad : {"", "attacker.example", "attacker.example:8081", "0.0.0.0", "127.0.0.1.attacker.example",
                          "128.0.0.1", "127.0.0.256", "localhost:80:80", "localhost:", "localhost:8o", "[::1", "[::2]",
                          "::1", "localhost.attacker.example", "x"})
    CHECK_MESSAGE(!wildcard.allowed(bad), bad);
  HostAllowList named("10.0.0.5", {"culprit.internal", "::5"});
  CHECK(named.allowed("10.0.0.5:8080"));
  CHECK(named.allowed("Culprit.Internal"));
  CHECK(named.allowed("[::5]:8080"));
  CHECK(!named.allowed("10.0.0.6"));
  CHECK(culprit::service::is_loopback_host("127.0.0.1"));
  CHECK(culprit::service::is_loopback_host("::1"));
  CHECK(!culprit::service::is_loopback_host("0.0.0.0"));
}

TEST_CASE("LoopbackService: without a token a foreign Host gets 421, the probes stay open") {
  ServiceConfig cfg;
  cfg.access_log = false;
  LoopbackService svc(cfg, tiny_attributor());
  REQUIRE(svc.port() > 0);
  std::string out = svc.exchange("GET /v1/catalog HTTP/1.1\r\nHost: attacker.example\r\n\r\n");
  CHECK(out.find("HTTP/1.1 421 Misdirected Request") == 0);
  CHECK(out.find("misdirected_request") != std::string::npos);
  CHECK(svc.exchange("GET /v1/catalog HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n").find("HTTP/1.1 200") == 0);
  for (const char* probe : {"/healthz", "/readyz", "/metrics"})
    CHECK(svc.exchange(std::string("GET ") + probe + " HTTP/1.1\r\nHost: attacker.example\r\n\r\n").find("HTTP/1.1 200") == 0);
  // With a token the token is the defence: Host is not checked...
  ServiceConfig tok;
  tok.access_log = false;
  tok.token = "s3cret";
  LoopbackService with_token(tok, tiny_attributor());
  REQUIRE(with_token.port() > 0);
  CHECK(with_token.exchange("GET /v1/catalog HTTP/1.1\r\nHost: attacker.example\r\nAuthorization: Bearer s3cret\r\n\r\n")
            .find("HTTP/1.1 200") == 0);
  // ...unless --allow-host says which names are the service's.
  tok.allow_hosts = {"culprit.internal"};
  LoopbackService named(tok, tiny_attributor());
  REQUIRE(named.port() > 0);
  CHECK(named.exchange("GET /v1/catalog HTTP/1.1\r\nHost: attacker.example\r\nAuthorization: Bearer s3cret\r\n\r\n")
            .find("HTTP/1.1 421") == 0);
  CHECK(named.exchange("GET /v1/catalog HTTP/1.1\r\nHost: culprit.internal:8080\r\nAuthorization: Bearer s3cret\r\n\r\n")
            .find("HTTP/1.1 200") == 0);
}

TEST_CASE("LoopbackService: NDJSON posted to /v1/workloads is told where NDJSON goes") {
  ServiceConfig cfg;
  cfg.access_log = false;
  LoopbackService svc(cfg, tiny_attributor());
  REQUIRE(svc.port() > 0);
  std::string out = svc.exchange(post("/v1/workloads", "application/x-ndjson", "{\"workload_id\":\"w\",\"nodes\":[]}\n"));
  CHECK(out.find("HTTP/1.1 415") == 0);
  CHECK(out.find("/v1/workloads/{id}/observations") != std::string::npos);
  CHECK(out.find("/v1/attributions") != std::string::npos);
  CHECK(out.find("send application/json or application/x-ndjson") == std::string::npos);
}

TEST_CASE("RequestParser: what RFC 9112 says must be refused gets 400 (issue 38)") {
  // Whitespace before the colon, invalid name characters, obs-fold, bare CR.
  CHECK(error_for("GET / HTTP/1.1\r\nHost : h\r\n\r\n") == 400);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: h\r\nX\"Y: v\r\n\r\n") == 400);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: h\r\nX(: v\r\n\r\n") == 400);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n\tcontinued\r\n\r\n") == 400);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n") == 400);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n") == 400);
  // A request-target in neither origin- nor absolute-form.
  CHECK(error_for("GET * HTTP/1.1\r\nHost: h\r\n\r\n") == 400);
  CHECK(error_for("GET healthz HTTP/1.1\r\nHost: h\r\n\r\n") == 400);
  CHECK(error_for("CONNECT h:80 HTTP/1.1\r\nHost: h\r\n\r\n") == 400);
  CHECK(error_for("GET http://h?x HTTP/1.1\r\nHost: h\r\n\r\n") == 400);
  // Host: exactly one on HTTP/1.1, with a valid value.
  CHECK(error_for("GET / HTTP/1.1\r\n\r\n") == 400);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") == 400);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: a b\r\n\r\n") == 400);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n") == 400);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: user@a\r\n\r\n") == 400);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: a:8o\r\n\r\n") == 400);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: [::1\r\n\r\n") == 400);
  // Accepted: HTTP/1.0 without Host, an empty Host, IPv6 and ports, absolute-form.
  CHECK(error_for("GET / HTTP/1.0\r\n\r\n") == 0);
  CHECK(error_for("GET / HTTP/1.1\r\nHost:\r\n\r\n") == 0);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n") == 0);
  CHECK(error_for("GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n") == 0);
  RequestParser p(small_limits());
  auto reqs = parse_all("GET http://localhost:8080/healthz?x=1 HTTP/1.1\r\nHost: attacker.example\r\n\r\n", 1 << 20, p);
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].path == "/healthz");
  CHECK(reqs[0].header("host") == "localhost:8080");  // the target's authority stands for Host (RFC 9112 §3.2.2)
}
