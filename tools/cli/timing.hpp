// Timing for the tandem CLI: the median wall time of synchronous calls.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace tandem_cli {

using Clock = std::chrono::steady_clock;

struct Timing {
  double median = 0;  // seconds
};

// Timed calls (after the caller's warm-up): `repeat` of them, or with repeat 0 at least 3 and until
// 0.25 s of calls have run (at most 1000). Each call is synchronous, so its wall time is the whole
// operation. on_result sees every result, outside the timed region.
template <class Call, class OnResult>
Timing time_calls(Call call, OnResult on_result, std::size_t repeat) {
  std::vector<double> times;
  double total = 0;
  while (repeat > 0 ? times.size() < repeat : (times.size() < 3 || total < 0.25) && times.size() < 1000) {
    const auto start = Clock::now();
    auto result = call();
    const double dt = std::chrono::duration<double>(Clock::now() - start).count();
    on_result(result);
    times.push_back(dt);
    total += dt;
  }
  std::sort(times.begin(), times.end());
  const std::size_t h = times.size() / 2;
  return {times.size() % 2 ? times[h] : (times[h - 1] + times[h]) / 2};
}

// Seconds since start.
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The line under a timed table: how its times were taken.
std::string timing_note(std::size_t repeat);

}  // namespace tandem_cli
