// libFuzzer: bundles on disk. The input describes a directory tree (files
// with contents, directories, symbolic links to anywhere, FIFOs), which is
// built in a fresh temporary directory, read with load_bundle and
// diagnosed. Invariants: it ends (FIFOs, links to /dev/zero and loops
// never block or run away), every refused file has a reason, and no log
// file that diagnose reads lies outside the bundle.
//
// Input: records of [kind][path length][path][payload length][payload];
// paths are made relative and stripped of "..", so only the links' targets
// can point outside.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/bundle.h"
#include "runtime/diagnose.h"
#include "tests/fuzz/fuzz_support.h"

namespace fs = std::filesystem;

namespace {

const char* const kTargets[] = {"/dev/zero", "/dev/null", "/etc/hostname", "/proc/self/status", "..", "../..", "/", ".",
                                "logs", "context.json", "/nonexistent", "loop"};

std::string clean(std::string_view p) {
  std::string out;
  for (auto part : fs::path(std::string(p))) {
    std::string s = part.string();
    if (s.empty() || s == "/" || s == "." || s == ".." || s.find('\0') != std::string::npos) continue;
    if (!out.empty()) out += "/";
    out += s.substr(0, 40);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string base = [] {
    char tmpl[] = "/tmp/culprit-fuzz-bundle-XXXXXX";
    return std::string(mkdtemp(tmpl));
  }();
  std::error_code ec;
  fs::path root = fs::path(base) / "b";
  fs::remove_all(root, ec);
  fs::create_directories(root, ec);
  size_t pos = 0;
  auto byte = [&]() -> uint8_t { return pos < size ? data[pos++] : 0; };
  auto bytes = [&](size_t n) {
    n = std::min(n, size - std::min(pos, size));
    std::string s(reinterpret_cast<const char*>(data + pos), n);
    pos += n;
    return s;
  };
  int records = 0;
  while (pos < size && records++ < 32) {
    uint8_t kind = byte() % 5;
    std::string rel = clean(bytes(byte()));
    size_t len = byte();
    len = len * 16 + byte() % 16;
    std::string payload = bytes(len);
    if (rel.empty()) rel = kind == 0 ? "context.json" : "logs/node-01/app.log";
    fs::path p = root / rel;
    fs::create_directories(p.parent_path(), ec);
    switch (kind) {
      case 0:
      case 1: {
        // Write only to a new or regular file: opening a FIFO an earlier
        // record made (or a link to one) for writing would block the
        // harness itself, waiting for a reader.
        auto st = fs::symlink_status(p, ec);
        if (fs::exists(st) && !fs::is_regular_file(st)) break;
        std::ofstream f(p, std::ios::binary);
        f << payload;
        break;
      }
      case 2: fs::create_directories(p, ec); break;
      case 3: {
        std::string target = payload.empty() ? std::string(kTargets[len % (sizeof kTargets / sizeof *kTargets)]) : clean(payload);
        if (target == "loop") target = p.filename().string();
        fs::create_symlink(target, p, ec);
        break;
      }
      case 4: ::mkfifo(p.c_str(), 0644); break;
    }
  }
  culprit::Bundle b;
  std::string error;
  if (culprit::load_bundle(root.string(), b, error)) {
    fs::path canon = fs::canonical(root, ec);
    for (const auto& f : b.files) {
      fs::path real = fs::canonical(f.path, ec);
      FUZZ_CHECK(!ec);
      FUZZ_CHECK(real.string().rfind(canon.string(), 0) == 0);
    }
    for (const auto& r : b.refused_files) FUZZ_CHECK(!r.reason.empty());
    culprit::DiagnoseOptions opt;
    opt.threads = 1;
    culprit::Verdict v;
    culprit::diagnose(culprit::fuzz::small_program(), culprit::request_from_bundle(std::move(b)), opt, v, error);
  } else {
    FUZZ_CHECK(!error.empty());
  }
  fs::remove_all(root, ec);
  return 0;
}
