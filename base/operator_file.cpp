#include "base/operator_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "base/limits.h"
#include "base/read_full.h"

namespace culprit {

bool read_regular_file(const std::string& path, size_t max_bytes, const char* limit_name, const std::string& what,
                       std::string& text, std::string& err) {
  text.clear();
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    err = fmt::format("cannot read {} {}: {}", what, path, std::strerror(errno));
    return false;
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    err = fmt::format("cannot read {} {}: {}", what, path, std::strerror(errno));
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "a special file";
    err = fmt::format("cannot read {} {}: it is {}, not a regular file", what, path, kind);
    return false;
  }
  auto too_big = [&](uint64_t n) {
    err = fmt::format("cannot read {} {}: {}", what, path,
                      limits::exceeded(limit_name, max_bytes, fmt::format("the file has {}{} bytes", n > max_bytes ? "" : "over ", n)));
    return false;
  };
  if (static_cast<uint64_t>(st.st_size) > max_bytes) return too_big(static_cast<uint64_t>(st.st_size));
  // Read one byte more than allowed: the file may have grown since fstat.
  text.resize(max_bytes + 1);
  ssize_t n = read_full(fd, text.data(), text.size());
  if (n < 0) {
    err = fmt::format("cannot read {} {}: {}", what, path, std::strerror(errno));
    text.clear();
    return false;
  }
  if (static_cast<size_t>(n) > max_bytes) {
    text.clear();
    return too_big(max_bytes);
  }
  text.resize(static_cast<size_t>(n));
  return true;
}

bool read_secret(const std::string& file, const std::string& env, std::string& secret, std::string& err) {
  if (!file.empty()) {
    std::string text;
    if (!read_regular_file(file, limits::kSecretFileBytes, "secret_file_bytes", "the secret file", text, err)) return false;
    secret = first_line_secret(text);
    if (secret.empty()) {
      err = fmt::format("the secret file {} is empty", file);
      return false;
    }
    return true;
  }
  if (!env.empty()) {
    const char* v = std::getenv(env.c_str());
    if (!v || !*v) {
      err = fmt::format("the environment variable {} is not set", env);
      return false;
    }
    secret = v;
    return true;
  }
  err = "no secret configured";
  return false;
}

std::string first_line_secret(std::string_view text) {
  std::string_view line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  return std::string(line);
}

}  // namespace culprit
