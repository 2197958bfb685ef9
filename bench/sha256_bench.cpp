// SHA-256 throughput: the SHA-extension path against the portable code, on
// the same bytes, in one run. Culprit hashes every catalog file, the IR it
// compiles and each cache entry it reads on every start-up.
//
//   build/bench/sha256_bench [MiB]      (default 64)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "base/sha256.h"

int main(int argc, char** argv) {
  const long mib = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 64;
  if (mib <= 0 || mib > 4096) {
    std::fprintf(stderr, "usage: sha256_bench [MiB 1..4096]\n");
    return 2;
  }
  std::string data(static_cast<size_t>(mib) << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 2654435761u >> 24);
  auto run = [&](bool hardware) {
    double best = 0;
    std::string digest;
    for (int round = 0; round < 3; ++round) {
      const auto t0 = std::chrono::steady_clock::now();
      culprit::Sha256 h(hardware);
      h.update(data);
      const auto d = h.finish();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::max(best, static_cast<double>(mib) / s);
      digest.assign(reinterpret_cast<const char*>(d.data()), d.size());
    }
    return std::make_pair(best, digest);
  };
  const auto portable = run(false);
  const auto hardware = run(true);
  std::printf("sha256 over %ld MiB (best of 3)\n", mib);
  std::printf("  portable       %8.0f MiB/s\n", portable.first);
  if (!culprit::Sha256::hardware_available()) {
    std::printf("  SHA extensions not available on this CPU\n");
    return 0;
  }
  std::printf("  SHA extensions %8.0f MiB/s  (%.1fx)\n", hardware.first, hardware.first / portable.first);
  if (hardware.second != portable.second) {
    std::fprintf(stderr, "digests differ\n");
    return 1;
  }
  return 0;
}
