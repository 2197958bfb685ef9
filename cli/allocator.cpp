#include "cli/allocator.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifdef CULPRIT_MIMALLOC
#include <mimalloc.h>
#endif

extern char** environ;

namespace culprit::cli {

namespace {
constexpr const char* kTunable = "glibc.malloc.hugetlb";

bool glibc_huge_pages() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (!tunables) return false;
  const char* at = std::strstr(tunables, kTunable);
  if (!at) return false;
  at += std::strlen(kTunable);
  return at[0] == '=' && (at[1] == '1' || at[1] == '2');
}
}  // namespace

bool malloc_is_mimalloc() {
#ifdef CULPRIT_MIMALLOC
  // Through a volatile pointer, so the compiler cannot pair the calls away.
  void* (*volatile alloc)(size_t) = std::malloc;
  void* p = alloc(64);
  const bool ours = p != nullptr && mi_is_in_heap_region(p);
  std::free(p);
  return ours;
#else
  return false;
#endif
}

std::string malloc_description() {
  if (malloc_is_mimalloc()) return "mimalloc";
  return std::string("glibc, huge pages ") + (glibc_huge_pages() ? "on" : "off");
}

void rerun_with_huge_pages_if_large(char** argv, uint64_t bundle_bytes, uint64_t bundle_files) {
#ifdef __GLIBC__
  if (malloc_is_mimalloc()) return;
  const char* choice = std::getenv("CULPRIT_HUGE_PAGES");
  if (choice && std::string(choice) == "0") return;
  bool forced = choice && std::string(choice) == "1";
  if (!forced && bundle_bytes < kHugePagesMinBytes && bundle_files < kHugePagesMinFiles) return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, kTunable)) return;  // the user's, or ours: the process is as asked
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "GLIBC_TUNABLES=", 15) != 0) env.emplace_back(*e);
  env.push_back(std::string("GLIBC_TUNABLES=") + (tunables && *tunables ? std::string(tunables) + ":" : "") + kTunable + "=1");
  std::vector<char*> envp;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  ::execve("/proc/self/exe", argv, envp.data());
  // Still here: /proc is not mounted, or the binary is gone. Nothing lost.
#else
  static_cast<void>(argv);
  static_cast<void>(bundle_bytes);
  static_cast<void>(bundle_files);
#endif
}

}  // namespace culprit::cli
