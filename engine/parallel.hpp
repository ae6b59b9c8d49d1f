// Work on every device (or shard) at once: one host thread per item.
#pragma once

#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace tandem::detail {

// Runs f(0) .. f(n - 1) at once, f(0) on the caller's thread and each other on a thread of its own
// (n == 1: no thread); rethrows the first item's error once all have finished. If a thread cannot be
// started, those already started are joined before the error leaves.
template <class F>
void run_all(std::size_t n, F&& f) {
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  struct Joiner {
    std::vector<std::thread>& threads;
    ~Joiner() {
      for (std::thread& t : threads)
        if (t.joinable()) t.join();
    }
  } joiner{threads};
  auto run = [&](std::size_t i) {
    try {
      f(i);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  for (std::size_t i = 1; i < n; ++i) threads.emplace_back(run, i);
  if (n > 0) run(0);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace tandem::detail
