// Running a server until SIGTERM or SIGINT, without letting either signal
// interrupt the server's own threads.
//
// run_until_stop_signal blocks SIGTERM and SIGINT in the calling thread (so
// in every thread it creates afterwards: the mask is inherited), starts one
// waiter thread that takes them with sigtimedwait and sets `stop`, and runs
// `body` on the calling thread. No socket call in a worker is ever cut short
// by EINTR: requests in flight finish, and the server polls `stop` to wind
// down. An exception escaping `body` is reported on stderr as "<name>:
// internal error: ..." and gives status 3; nothing crosses this boundary.
//
// Thread-safety: call it once per process, from the main thread, before any
// other thread exists.
#pragma once

#include <atomic>
#include <functional>

namespace culprit {

int run_until_stop_signal(std::atomic<bool>& stop, const char* name, const std::function<int()>& body);

}  // namespace culprit
