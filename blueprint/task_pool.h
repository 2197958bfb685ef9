// A fixed set of threads that run submitted tasks, for the attempts the
// blueprint collects and attributes at once (blueprint/runner.h).
//
// submit() queues a task; one of the pool's threads runs it. The destructor
// waits for every queued and running task to finish, then joins the
// threads: a pool declared after the data its tasks use is destroyed first,
// so no task outlives what it refers to, even on an early return.
//
// Thread-safety: submit() from one thread (the run loop); tasks run
// concurrently with each other and with the caller. A task must not throw
// (the blueprint's collectors and attribution report errors as values); one
// that does ends the process, as an exception escaping a thread does.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace culprit::blueprint {

class TaskPool {
 public:
  // `threads` >= 1.
  explicit TaskPool(unsigned threads);
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  void submit(std::function<void()> task);

 private:
  void work();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool closing_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace culprit::blueprint
