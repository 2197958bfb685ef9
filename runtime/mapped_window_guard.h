// Keeps a memory-mapped file window readable when the file shrinks under it.
//
// Reading a page of a mapping that lies beyond the end of its file raises
// SIGBUS, which would end the process. This happens when another process
// truncates a log while it is being scanned (logrotate's copytruncate on a
// live file). A thread arms the guard over the window it is about to read;
// if such a fault hits inside the armed range, the handler puts a page of
// zeros over the faulting page, records the fault, and the read resumes: the
// scan sees NUL bytes (no atom matches them) and the caller reports the file
// as changed while it was read. A SIGBUS anywhere else keeps its default
// action (the process ends as it would have without the guard).
//
// Thread-safety: the armed range is per thread. install() is idempotent and
// thread-safe; it chains to no previous handler (the process has none).
#pragma once

#include <cstddef>

namespace culprit {

class MappedWindowGuard {
 public:
  // Installs the process-wide SIGBUS handler (once).
  static void install();

  // Arms the calling thread's guard over [begin, begin + len); disarm() ends
  // it. take_fault() says whether a fault was repaired on this thread since
  // the last take_fault(), and clears that.
  static void arm(const char* begin, size_t len);
  static void disarm();
  static bool take_fault();
};

}  // namespace culprit
