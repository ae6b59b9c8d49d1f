// The conformance matrix's driver (conformance.hpp): the report, the cross-backend comparison of
// deterministic bits, and one run over the backends asked for.
#include "verify/conformance.hpp"

#include <cstdio>

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

Report run(const Options& o) {
  Report report;
  report.options = o;
  for (tandem::Backend b : o.backends) {
    const tandem::Engine eng(b);
    if (o.reductions)
      run_reductions(eng, report), run_addresses(eng, report), run_moments(eng, report), run_masks(eng, report);
    if (o.matmul) run_matmul(eng, report), run_matmul_addresses(eng, report);
  }
  return report;
}

}  // namespace tandem_verify::conformance
