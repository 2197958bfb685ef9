#include "service/loopback_service.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "service/service_handler.h"

namespace culprit::service {

namespace {

ServiceConfig on_loopback(ServiceConfig c) {
  c.host = "127.0.0.1";
  c.port = 0;
  c.access_log = false;
  c.port_file.clear();
  return c;
}

}  // namespace

struct LoopbackService::Impl {
  ServiceConfig cfg;
  std::atomic<bool> stop{false};
  Service service;
  std::mutex mu;
  std::condition_variable cv;
  bool settled = false;  // ready, or run() returned
  int port = -1;
  std::thread runner;

  explicit Impl(const ServiceConfig& c) : cfg(on_loopback(c)), service(cfg, stop) {}
};

LoopbackService::LoopbackService(const ServiceConfig& config, std::shared_ptr<const Attributor> attributor)
    : impl_(std::make_unique<Impl>(config)) {
  Impl& im = *impl_;
  im.runner = std::thread([&im, attributor = std::move(attributor)]() mutable {
    im.service.run(std::move(attributor), [&im](int port) {
      std::lock_guard<std::mutex> lock(im.mu);
      im.port = port;
      im.settled = true;
      im.cv.notify_all();
    });
    std::lock_guard<std::mutex> lock(im.mu);
    im.settled = true;
    im.cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(im.mu);
  im.cv.wait(lock, [&] { return im.settled; });
}

LoopbackService::~LoopbackService() {
  impl_->stop = true;
  impl_->runner.join();
}

int LoopbackService::port() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->port;
}

size_t LoopbackService::budget_in_use() const { return impl_->service.budget().used(); }

std::string LoopbackService::exchange(std::string_view bytes) const {
  int port = this->port();
  if (port <= 0) return {};
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return {};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return {};
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  // Sending and reading at once: the service may answer (and stop reading)
  // before it has all the bytes, as it does when it refuses a body.
  // The service's own deadlines close every connection within these
  // seconds of its last progress; waiting longer would only hide a hang.
  const int quiet_ms = 1000 * (impl_->cfg.request_timeout_s + impl_->cfg.write_timeout_s + impl_->cfg.keep_alive_s + 5);
  std::string out;
  size_t sent = 0;
  bool shut = false;
  char buf[65536];
  for (;;) {
    if (!shut && sent == bytes.size()) {
      ::shutdown(fd, SHUT_WR);  // the end of the requests: the service closes once it has answered them
      shut = true;
    }
    pollfd p{fd, static_cast<short>(POLLIN | (shut ? 0 : POLLOUT)), 0};
    int r = ::poll(&p, 1, quiet_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n;
      while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) out.append(buf, static_cast<size_t>(n));
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) break;
    }
    if (!shut && (p.revents & POLLOUT)) {
      ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n > 0) sent += static_cast<size_t>(n);
      else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) sent = bytes.size();  // it stopped reading
    }
  }
  ::close(fd);
  return out;
}

}  // namespace culprit::service
