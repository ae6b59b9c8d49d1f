#include "tools/cli/timing.hpp"

#include "tools/cli/table.hpp"

namespace tandem_cli {

std::string timing_note(std::size_t repeat) {
  return repeat ? strf("time: median of %zu synchronous calls after 1 warm-up", repeat)
                : "time: median of the synchronous calls after 1 warm-up (at least 3, until 0.25 s)";
}

}  // namespace tandem_cli
