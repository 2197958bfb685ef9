// Running the blueprint's independent work at once: a fixed set of threads
// for the attempts collected and attributed together (blueprint/runner.h),
// and for_each_at_once() for the requests of one attempt (a collector's
// queries), each with a bound.
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
#include <cstddef>
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

// Calls fn(0), ..., fn(count - 1), each once, on at most `at_once` threads
// at a time (a thread takes the next index as soon as it is free), and
// returns when all have returned. fn must not throw; results belong in
// per-index slots, merged by the caller in index order, so they do not
// depend on which thread ran what.
void for_each_at_once(size_t count, size_t at_once, const std::function<void(size_t)>& fn);

}  // namespace culprit::blueprint
