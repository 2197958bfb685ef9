// Digests are the FIPS 180-2 / NIST CSRC example vectors, and for the other inputs values
// computed with Python's hashlib.
#include "base/sha256.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <string>

using culprit::Sha256;
using culprit::sha256_hex;

namespace {

std::string hex(const std::array<uint8_t, 32>& d) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) {
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 0xF]);
  }
  return s;
}

constexpr const char* kEmpty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char* kAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr const char* k448 = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
constexpr const char* kMillionA =
    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

}  // namespace

TEST_CASE("sha256_hex: standard vectors") {
  CHECK(sha256_hex("") == kEmpty);
  CHECK(sha256_hex("abc") == kAbc);
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") == k448);
  CHECK(sha256_hex(std::string(1'000'000, 'a')) == kMillionA);
}

TEST_CASE("Sha256: one million 'a' fed in uneven chunks") {
  Sha256 h;
  const std::string chunk(4096, 'a');
  size_t fed = 0;
  size_t step = 1;
  while (fed < 1'000'000) {
    const size_t n = std::min(step, 1'000'000 - fed);
    h.update(std::string_view(chunk.data(), n));
    fed += n;
    step = step * 7 % 4093 + 1;  // 1, 8, 57, 400, ... sizes across and inside block edges
  }
  CHECK(hex(h.finish()) == kMillionA);
}

TEST_CASE("Sha256: padding boundaries around 55, 56, 63, 64 bytes") {
  // Lengths where the length field just fits, just does not fit, and fills a block exactly.
  CHECK(sha256_hex(std::string(55, 'a')) ==
        "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  CHECK(sha256_hex(std::string(56, 'a')) ==
        "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  CHECK(sha256_hex(std::string(63, 'a')) ==
        "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34");
  CHECK(sha256_hex(std::string(64, 'a')) ==
        "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST_CASE("Sha256: byte-at-a-time equals one-shot, empty updates change nothing") {
  const std::string msg = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  Sha256 h;
  h.update("");
  for (char c : msg) {
    h.update(std::string_view(&c, 1));
    h.update(std::string_view());
  }
  CHECK(hex(h.finish()) == k448);
}

TEST_CASE("Sha256: finish resets the hasher for the next message") {
  Sha256 h;
  h.update("ab");
  h.update("c");
  CHECK(hex(h.finish()) == kAbc);
  CHECK(hex(h.finish()) == kEmpty);
  h.update("abc");
  CHECK(hex(h.finish()) == kAbc);
}

TEST_CASE("sha256_hex: binary input with NUL and high bytes") {
  const std::string bin("\x00\xff\x80\x7f", 4);
  CHECK(sha256_hex(bin) == "049426b578cc61154a0dffb6e0fe305e12ac496d6e36e0d833d55fffc363fa51");
}

TEST_CASE("Sha256: the SHA-extension path and the portable path give the same digests") {
  // On a CPU without the extensions both hashers run the portable code and
  // this only checks it against itself; say so rather than pass silently.
  if (!Sha256::hardware_available()) MESSAGE("this CPU has no SHA extensions: only the portable code runs");
  auto digest = [](bool hardware, std::string_view data, size_t piece) {
    Sha256 h(hardware);
    for (size_t at = 0; at < data.size(); at += piece) h.update(data.substr(at, piece));
    return hex(h.finish());
  };
  CHECK(digest(true, "abc", 1) == kAbc);
  CHECK(digest(false, "abc", 1) == kAbc);
  CHECK(digest(true, std::string(1'000'000, 'a'), 1'000'000) == kMillionA);
  CHECK(digest(false, std::string(1'000'000, 'a'), 1'000'000) == kMillionA);
  // Every length up to five blocks, of bytes that use all 256 values, fed
  // whole and in pieces that cut blocks at odd places.
  std::string data;
  uint32_t x = 12345;
  for (int i = 0; i < 64 * 5 + 1; ++i) {
    x = x * 1103515245u + 12345u;
    data.push_back(static_cast<char>(x >> 23));
  }
  for (size_t n = 0; n <= data.size(); ++n) {
    const std::string_view m(data.data(), n);
    const std::string want = digest(false, m, std::max<size_t>(n, 1));
    CHECK(digest(true, m, std::max<size_t>(n, 1)) == want);
    CHECK(digest(true, m, 7) == want);
    CHECK(digest(true, m, 130) == want);
  }
}
