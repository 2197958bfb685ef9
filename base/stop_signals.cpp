#include "base/stop_signals.h"

#include <signal.h>

#include <ctime>
#include <exception>
#include <iostream>
#include <thread>

namespace culprit {

int run_until_stop_signal(std::atomic<bool>& stop, const char* name, const std::function<int()>& body) {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::atomic<bool> finished{false};
  // A timed wait, so that the waiter notices `finished` when body returns
  // without a signal (a fatal error at start-up, a stop requested in-process).
  std::thread waiter([&] {
    timespec tick{0, 100 * 1000 * 1000};
    while (!finished.load())
      if (sigtimedwait(&stop_signals, nullptr, &tick) > 0) stop.store(true);
  });
  int rc = 3;
  try {
    rc = body();
  } catch (const std::exception& e) {
    std::cerr << name << ": internal error: " << e.what() << "\n";
  }
  finished = true;
  waiter.join();
  return rc;
}

}  // namespace culprit
