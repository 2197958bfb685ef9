// libFuzzer: raw bytes on one connection of the service, in-process
// (service::LoopbackService: the real server on a loopback port, its event
// loop, parser, routes, limits, bodies and attributions). Invariant: the
// answers are a sequence of well-formed HTTP/1.1 responses, each framed by
// its Content-Length (HEAD answers announce a length and send no body).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/attributor.h"
#include "service/loopback_service.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static culprit::service::LoopbackService* svc = [] {
    culprit::service::ServiceConfig cfg;
    cfg.max_body = 1 << 20;
    cfg.max_sessions = 64;
    cfg.max_total_bytes = 256u << 20;
    cfg.access_log = false;
    return new culprit::service::LoopbackService(cfg, std::make_shared<const culprit::Attributor>(culprit::fuzz::small_program(), std::make_shared<const culprit::RecoveryTable>()));
  }();
  FUZZ_CHECK(svc->port() > 0);
  std::string out = svc->exchange(std::string_view(reinterpret_cast<const char*>(data), size));
  size_t pos = 0;
  while (pos < out.size()) {
    FUZZ_CHECK(out.compare(pos, 9, "HTTP/1.1 ") == 0);
    size_t head_end = out.find("\r\n\r\n", pos);
    FUZZ_CHECK(head_end != std::string::npos);
    size_t cl = out.find("Content-Length: ", pos);
    size_t body = 0;
    if (cl != std::string::npos && cl < head_end) body = std::stoul(out.substr(cl + 16, 20));
    size_t next = head_end + 4;
    if (next == out.size() || out.compare(next, 9, "HTTP/1.1 ") == 0) body = 0;  // HEAD
    pos = next + body;
  }
  FUZZ_CHECK(pos == out.size());
  return 0;
}
