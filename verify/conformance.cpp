// The conformance matrix's driver (conformance.hpp): the report, the cross-backend comparison of
// deterministic bits, and one run over the backends asked for, its parts side by side.
#include "verify/conformance.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <iterator>
#include <mutex>
#include <thread>

namespace tandem_verify::conformance {

void Report::fail(const std::string& backend, const std::string& what) {
  ++cases, ++per_backend[backend];
  failure(what);
}

void Report::failure(const std::string& what) {
  ++failed;
  if (options.on_failure) options.on_failure(what);
}

void Report::deterministic_bits(const std::string& backend, const std::string& key, const std::string& source,
                                std::string bits) {
  const auto it = bits_.find(key);
  if (it == bits_.end()) {
    bits_.emplace(key, Seen{backend, source, std::move(bits)});
    return;
  }
  ++compared;
  if (it->second.backend != backend) ++compared_across_backends;
  if (it->second.bits != bits)
    failure(source + ": deterministic mode's bits differ from those of " + it->second.source);
}

void Report::merge(Report&& other) {
  cases += other.cases, refused += other.refused, unavailable += other.unavailable, failed += other.failed;
  compared += other.compared, compared_across_backends += other.compared_across_backends;
  for (const auto& [backend, n] : other.per_backend) per_backend[backend] += n;
  for (auto& [key, seen] : other.bits_) deterministic_bits(seen.backend, key, seen.source, std::move(seen.bits));
}

// The parts run side by side, one thread each (as many at a time as the machine has cores), each over every
// backend in order with its own report; the reports are then merged in the parts' order, which compares the
// bits of a case that two parts share as if they had run one after the other. (One Engine per thread: the
// library's calls are independent; on CUDA each engine has its own stream.)
Report run(const Options& o) {
  std::vector<Part> parts;  // (the longest first)
  if (o.reductions) parts.push_back(run_reductions);
  if (o.matmul) std::ranges::copy(matmul_parts(), std::back_inserter(parts));
  if (o.reductions) parts.insert(parts.end(), {run_addresses, run_moments, run_masks, run_topk});
  if (o.matmul) parts.push_back(run_matmul_addresses);
  if (o.matmul) std::ranges::copy(grouped_parts(), std::back_inserter(parts));
  if (o.matmul) std::ranges::copy(batch_parts(), std::back_inserter(parts));
  std::mutex failures;  // one failure reported at a time
  std::vector<Report> reports(parts.size());
  for (Report& r : reports) {
    r.options = o;
    if (o.on_failure)
      r.options.on_failure = [&](const std::string& what) {
        const std::lock_guard lock(failures);
        o.on_failure(what);
      };
  }
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  auto work = [&] {
    for (std::size_t i; (i = next++) < parts.size();) {
      try {
        for (tandem::Backend b : o.backends) parts[i](tandem::Engine(b), reports[i]);
      } catch (...) {
        const std::lock_guard lock(failures);
        if (!error) error = std::current_exception();
      }
    }
  };
  const std::size_t threads = std::min<std::size_t>(std::max(std::thread::hardware_concurrency(), 1u), parts.size());
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  Report report;
  report.options = o;
  for (Report& r : reports) report.merge(std::move(r));
  return report;
}

}  // namespace tandem_verify::conformance
