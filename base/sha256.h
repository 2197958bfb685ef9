// SHA-256 (FIPS 180-4), used for content digests such as the catalog digest. Self-contained so
// the runtime does not depend on a crypto library for a non-secret checksum.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace culprit {

// Incremental hasher: feed bytes with update() in any number of pieces of any size, then call
// finish() once for the digest. The result depends only on the concatenation of the pieces.
//
// finish() returns the 32-byte digest and resets the object to its freshly constructed state,
// so it can hash another message. Total input is limited to 2^64-1 bits (FIPS 180-4).
//
// Thread-safety: an instance is not synchronised; use one per thread, or lock around it.
// Nothing here throws.
//
// On x86-64 CPUs with the SHA extensions (SHA-NI: most AMD since Zen, Intel since Ice Lake)
// blocks are compressed with them, several times faster than the portable code (which runs
// everywhere else); the digest is the same either way.
class Sha256 {
 public:
  // allow_hardware = false: the portable code only (tests compare the two).
  explicit Sha256(bool allow_hardware = true) noexcept;
  void update(std::string_view data) noexcept;
  std::array<uint8_t, 32> finish() noexcept;

  // Whether this CPU has the SHA extensions that Sha256 uses when allowed.
  static bool hardware_available() noexcept;

 private:
  void reset() noexcept;
  void compress(const uint8_t* blocks, size_t count) noexcept;

  bool hardware_;
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_;       // bytes waiting in buffer_, always < 64 between calls
  uint64_t total_bytes_;  // message length so far, for the final length field
};

// The SHA-256 of `data` as 64 lowercase hexadecimal digits. noexcept: failing to allocate the
// 64-byte result ends the process (std::terminate).
std::string sha256_hex(std::string_view data) noexcept;

}  // namespace culprit
