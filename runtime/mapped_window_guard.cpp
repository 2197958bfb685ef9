#include "runtime/mapped_window_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>

namespace culprit {
namespace {

// Read by the signal handler: plain thread-locals of the executable (local-exec
// TLS, no lazy allocation), written only by their own thread.
thread_local const char* armed_begin = nullptr;
thread_local const char* armed_end = nullptr;
thread_local volatile sig_atomic_t armed_faulted = 0;

void on_sigbus(int sig, siginfo_t* info, void*) {
  const char* addr = static_cast<const char*>(info->si_addr);
  if (armed_begin && addr >= armed_begin && addr < armed_end) {
    const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    void* at = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(addr) / page * page);
    // Replace the page that is no longer backed by the file with zeros; the
    // faulting read is then retried and succeeds.
    if (::mmap(at, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
      armed_faulted = 1;
      return;
    }
  }
  // Not ours (or the repair failed): the default action, as without the guard.
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
}

}  // namespace

void MappedWindowGuard::install() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa{};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, nullptr);
  });
}

void MappedWindowGuard::arm(const char* begin, size_t len) {
  armed_end = begin + len;
  armed_begin = begin;
}

void MappedWindowGuard::disarm() {
  armed_begin = nullptr;
  armed_end = nullptr;
}

bool MappedWindowGuard::take_fault() {
  bool f = armed_faulted != 0;
  armed_faulted = 0;
  return f;
}

}  // namespace culprit
