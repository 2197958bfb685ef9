// Transparent huge pages for a large diagnosis.
//
// A million events are a gigabyte of small heap objects; with 4 KiB pages the
// kernel faults each page in on first touch, and on a virtual machine a fault
// is dear (the 1M-event bench bundle spent a quarter of its time in the
// kernel). glibc backs malloc's heap with transparent huge pages when its
// tunable glibc.malloc.hugetlb=1 is set, but tunables are read only when a
// process starts. So `culprit diagnose`, once it knows the bundle is large,
// runs itself again (execve of /proc/self/exe, same arguments) with the
// tunable added to GLIBC_TUNABLES. Output is the same; only the time changes.
//
// Not done when the bundle is small (start-up would cost more than the faults
// saved), when GLIBC_TUNABLES already sets glibc.malloc.hugetlb (the user's
// choice stands; the process started this way has it too), or when
// CULPRIT_HUGE_PAGES=0. CULPRIT_HUGE_PAGES=1 does it whatever the size. If
// execve fails, the process goes on as it is.
#pragma once

#include <cstdint>

namespace culprit::cli {

// A bundle at least this large (bytes of evidence, or files) is "large".
inline constexpr uint64_t kHugePagesMinBytes = 256ull << 20;
inline constexpr uint64_t kHugePagesMinFiles = 2048;

// Returns only if it does not run the process again (see above).
void rerun_with_huge_pages_if_large(char** argv, uint64_t bundle_bytes, uint64_t bundle_files);

// Whether this process's malloc was started with huge pages (for --timings).
bool malloc_huge_pages();

}  // namespace culprit::cli
