// Which malloc the culprit process runs on, and huge pages for glibc's.
//
// A million events are a gigabyte of small heap objects made by the scan and
// freed kind by kind by the engine. The executable is linked with mimalloc
// (CMake option CULPRIT_MIMALLOC, on unless the build is sanitized), which
// replaces malloc, free and operator new for the whole process: on the
// 4,096-node bench bundle glibc's malloc, free and their consolidation were
// a sixth of the run, and the same binary took 7.7-12.1 s with mimalloc
// against 13.3-17.5 s with glibc's (bench/README.md, eighth pass).
//
// With glibc's malloc (a sanitized build, or CULPRIT_MIMALLOC=OFF), huge pages
// can cut the page faults of a large diagnosis: glibc backs its heap with
// transparent huge pages when its tunable glibc.malloc.hugetlb=1 is set, but
// tunables are read only when a process starts. So `culprit diagnose`, once it
// knows the bundle is large, runs itself again (execve of /proc/self/exe, same
// arguments) with the tunable added to GLIBC_TUNABLES. Output is the same; only
// the time changes.
//
// Not done when malloc is mimalloc (the tunable would change nothing), when the
// bundle is small (start-up would cost more than the faults saved), when
// GLIBC_TUNABLES already sets glibc.malloc.hugetlb (the user's choice stands;
// the process started this way has it too), or when CULPRIT_HUGE_PAGES=0.
// CULPRIT_HUGE_PAGES=1 does it whatever the size. If execve fails, the
// process goes on as it is.
//
// Thread-safety: call these from the main thread before starting others.
#pragma once

#include <cstdint>
#include <string>

namespace culprit::cli {

// A bundle at least this large (bytes of evidence, or files) is "large".
inline constexpr uint64_t kHugePagesMinBytes = 256ull << 20;
inline constexpr uint64_t kHugePagesMinFiles = 2048;

// Whether this process's malloc is mimalloc's: asked of the allocator itself
// (a block from malloc lies in mimalloc's heap), so a build that links it but
// lost the override at load time says no.
bool malloc_is_mimalloc();

// What --timings prints: "mimalloc", or "glibc, huge pages on|off".
std::string malloc_description();

// Returns only if it does not run the process again (see above).
void rerun_with_huge_pages_if_large(char** argv, uint64_t bundle_bytes, uint64_t bundle_files);

}  // namespace culprit::cli
