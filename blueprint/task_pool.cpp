#include "blueprint/task_pool.h"

#include <algorithm>
#include <atomic>

namespace culprit::blueprint {

TaskPool::TaskPool(unsigned threads) {
  if (threads < 1) threads = 1;
  threads_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

TaskPool::~TaskPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();  // each thread empties the queue before it ends
}

void TaskPool::submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void TaskPool::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;  // closing, and nothing left to run
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

void for_each_at_once(size_t count, size_t at_once, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < count;) fn(i);
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(count, std::max<size_t>(at_once, 1)); ++t) threads.emplace_back(work);
  work();  // the caller is one of them
  for (auto& t : threads) t.join();
}

}  // namespace culprit::blueprint
