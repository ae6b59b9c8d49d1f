// Work shared between the thread that drives a GPU and the CPU's cores: a host input in `pieces`
// pieces, the driving thread taking them from the front (to stream them to the GPU), the CPU's cores
// from the back (to reduce them in place), until the two meet. Used by the CUDA engine for host spans:
// the GPU's share is bound by the host's copy into pinned memory, the CPU's by its reads.
//
// The CPU's side runs on its own std::thread (which joins oneTBB's arena when f parallelises), not as
// a oneTBB task: a task could be picked up by the driving thread while it waits inside its own
// parallel copy, and stall the GPU's pieces behind the CPU's.
#pragma once

#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

namespace tandem::detail {

class HostSplit {
 public:
  // share = false: every piece goes to the front (the driving thread).
  HostSplit(std::int64_t pieces, bool share) : back_(pieces), share_(share) {}
  // On an exception of the driving thread: no new CPU piece starts, and the running one ends before
  // the input (the caller's memory) may go away.
  ~HostSplit() { stop(); }
  HostSplit(const HostSplit&) = delete;
  HostSplit& operator=(const HostSplit&) = delete;

  // Starts f(i) for pieces from the back, on the CPU's cores (one thread; f parallelises inside).
  template <class F>
  void run_cpu(F f) {
    if (share_)
      thread_ = std::thread([this, f] {
        try {
          for (std::int64_t i; next_back(i);) f(i);
        } catch (...) {
          error_ = std::current_exception();
        }
      });
  }
  // The next piece from the front, if any is left.
  bool next_front(std::int64_t& i) {
    std::lock_guard lock(mutex_);
    if (front_ >= back_) return false;
    i = front_++;
    return true;
  }
  // Waits for the CPU's pieces (rethrows their exception). Afterwards the front took pieces [0, front()).
  void wait() {
    if (thread_.joinable()) thread_.join();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }
  std::int64_t front() const { return front_; }

 private:
  bool next_back(std::int64_t& i) {
    std::lock_guard lock(mutex_);
    if (front_ >= back_) return false;
    i = --back_;
    return true;
  }
  void stop() noexcept {
    {
      std::lock_guard lock(mutex_);
      back_ = front_;
    }
    if (thread_.joinable()) thread_.join();
  }

  std::mutex mutex_;
  std::int64_t front_ = 0, back_;
  bool share_;
  std::thread thread_;
  std::exception_ptr error_;
};

}  // namespace tandem::detail
