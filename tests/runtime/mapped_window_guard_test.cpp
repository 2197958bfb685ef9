// A mapped window whose file is truncated under it reads as zeros instead of
// ending the process with SIGBUS, and the fault is reported once.
#include "runtime/mapped_window_guard.h"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "tests/support/test_support.h"

using culprit::MappedWindowGuard;

TEST_CASE("a file truncated under its mapping reads as zeros and reports the fault") {
  culprit::testing::TempDir dir;
  const long page = ::sysconf(_SC_PAGESIZE);
  std::string data(static_cast<size_t>(page) * 3, 'x');
  data[0] = 'A';
  const std::string path = dir.write("log", data).string();
  int fd = ::open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  void* m = ::mmap(nullptr, static_cast<size_t>(page) * 3, PROT_READ, MAP_PRIVATE, fd, 0);
  REQUIRE(m != MAP_FAILED);
  const volatile char* p = static_cast<const char*>(m);

  MappedWindowGuard::install();
  MappedWindowGuard::arm(static_cast<const char*>(m), static_cast<size_t>(page) * 3);
  CHECK_FALSE(MappedWindowGuard::take_fault());
  CHECK(p[page * 2 + 5] == 'x');                  // still backed by the file

  REQUIRE(::ftruncate(fd, page) == 0);            // another process truncates the log
  CHECK(p[0] == 'A');                             // the first page still exists
  CHECK(p[page * 2 + 5] == '\0');                 // would be SIGBUS without the guard
  CHECK(p[page + 1] == '\0');
  CHECK(MappedWindowGuard::take_fault());
  CHECK_FALSE(MappedWindowGuard::take_fault());   // reported once

  MappedWindowGuard::disarm();
  ::munmap(m, static_cast<size_t>(page) * 3);
  ::close(fd);
}
