#include "compiler/jit/cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "base/read_full.h"
#include "base/sha256.h"

namespace culprit::cache {
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'C', 'U', 'L', 'P', 'R', 'I', 'T', 'C'};
constexpr uint32_t kFormat = 1;
// magic, format, reserved, key hash, payload length, payload hash
constexpr size_t kHeaderSize = 8 + 4 + 4 + 32 + 8 + 32;

std::array<uint8_t, 32> digest(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.finish();
}

std::string hex(const std::array<uint8_t, 32>& d, size_t bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes && i < d.size(); ++i) {
    out += digits[d[i] >> 4];
    out += digits[d[i] & 15];
  }
  return out;
}

std::string sanitize_kind(std::string_view kind) {
  std::string out;
  for (char c : kind) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out.empty() ? "entry" : out;
}

// The file of an entry, from its key's digest (load compares the same digest
// with the header's, so the key is hashed once).
std::string path_for(const std::string& dir, std::string_view kind, const std::array<uint8_t, 32>& key_hash) {
  return (fs::path(dir) / (sanitize_kind(kind) + "-" + hex(key_hash, 16) + ".bin")).string();
}

}  // namespace

std::string default_directory() {
  if (const char* d = std::getenv("CULPRIT_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return (fs::path(x) / "culprit").string();
  if (const char* h = std::getenv("HOME"); h && *h) return (fs::path(h) / ".cache" / "culprit").string();
  return "";
}

std::string entry_path(const std::string& dir, std::string_view kind, std::string_view key) {
  return path_for(dir, kind, digest(key));
}

bool load(const std::string& dir, std::string_view kind, std::string_view key, std::string& payload, std::string& note) {
  note.clear();
  payload.clear();
  if (dir.empty()) return false;
  const auto key_hash = digest(key);
  const std::string path = path_for(dir, kind, key_hash);
  // The header first, then the payload straight into its string: one read
  // and one buffer for a megabyte of machine code (each fresh page of a
  // copy costs a page fault, which is what a warm start spends its time on).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // plain miss
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  char header[kHeaderSize];
  const ssize_t got = ::fstat(fd, &st) == 0 ? read_full(fd, header, kHeaderSize) : -1;
  if (got < 0) {
    note = "unreadable";
    return false;
  }
  if (static_cast<size_t>(got) < kHeaderSize) {
    note = "truncated header";
    return false;
  }
  const char* p = header;
  if (std::memcmp(p, kMagic, sizeof kMagic) != 0) {
    note = "not a Culprit cache entry";
    return false;
  }
  uint32_t format = 0;
  std::memcpy(&format, p + 8, 4);
  if (format != kFormat) {
    note = "another cache format";
    return false;
  }
  if (std::memcmp(p + 16, key_hash.data(), 32) != 0) {
    note = "written for another key";
    return false;
  }
  uint64_t length = 0;
  std::memcpy(&length, p + 48, 8);
  const uint64_t file_payload = static_cast<uint64_t>(st.st_size) - kHeaderSize;
  if (st.st_size < static_cast<off_t>(kHeaderSize) || length != file_payload) {
    note = "truncated or padded payload";
    return false;
  }
  payload.resize(static_cast<size_t>(length));
  const ssize_t body = read_full(fd, payload.data(), payload.size());
  char extra;
  if (body < 0 || static_cast<uint64_t>(body) != length || read_full(fd, &extra, 1) != 0) {
    payload.clear();
    note = body < 0 ? "unreadable" : "truncated or padded payload";  // (changed while read)
    return false;
  }
  auto sum = digest(payload);
  if (std::memcmp(p + 56, sum.data(), 32) != 0) {
    payload.clear();
    note = "checksum mismatch";
    return false;
  }
  return true;
}

bool store(const std::string& dir, std::string_view kind, std::string_view key, std::string_view payload,
           std::string& note) {
  note.clear();
  if (dir.empty()) {
    note = "no cache directory";
    return false;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    note = "cannot create " + dir + ": " + ec.message();
    return false;
  }
  std::string header(kHeaderSize, '\0');
  std::memcpy(header.data(), kMagic, sizeof kMagic);
  std::memcpy(header.data() + 8, &kFormat, 4);
  auto key_hash = digest(key);
  std::memcpy(header.data() + 16, key_hash.data(), 32);
  uint64_t length = payload.size();
  std::memcpy(header.data() + 48, &length, 8);
  auto sum = digest(payload);
  std::memcpy(header.data() + 56, sum.data(), 32);

  std::string path = path_for(dir, kind, key_hash);
  // A name no other writer uses: pid + a per-process counter + randomness.
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." +
                    std::to_string(rd());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      note = "cannot write " + tmp;
      return false;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    note = "cannot rename into " + path + ": " + ec.message();
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

}  // namespace culprit::cache
