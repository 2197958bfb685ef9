#include "base/read_full.h"

#include <unistd.h>

#include <cerrno>

namespace culprit {

ssize_t read_full(int fd, char* buf, size_t n) noexcept {
  size_t have = 0;
  while (have < n) {
    ssize_t got = ::read(fd, buf + have, n - have);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -1;
    if (got == 0) break;
    have += static_cast<size_t>(got);
  }
  return static_cast<ssize_t>(have);
}

}  // namespace culprit
