// tandem info: the backends compiled in, which one auto picks and why, devices and kernel names.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "tools/cli/commands.hpp"
#include "tools/cli/table.hpp"

namespace tandem_cli {
namespace {

constexpr std::string_view kInfoHelp = R"(usage: tandem info

Prints the backends compiled into this build (usable or not, and why), which backend auto picks and
why, the modules libtandem loads at run time (found where, loaded or not, and why), the value of TANDEM_BACKEND (and what Engine() does with it), and for each usable backend its
device (name, compute units, memory, peak bandwidth, details) and its reduce and matmul kernels.
)";

int cmd_info(const Options&) {
  std::printf("tandem %d.%d.%d\n\nbackends:\n", TANDEM_VERSION_MAJOR, TANDEM_VERSION_MINOR, TANDEM_VERSION_PATCH);
  const auto statuses = tandem::backend_status();
  for (const auto& s : statuses) std::printf("  %-5s %s\n", tandem::to_string(s.backend), describe(s).c_str());
  const auto choice = tandem::auto_backend();
  std::printf("auto picks: %s, because %s\n", tandem::to_string(choice.backend), choice.reason.c_str());
  const auto modules = tandem::module_status();
  if (!modules.empty()) std::printf("modules (loaded at run time, from libtandem's folder or TANDEM_MODULE_PATH):\n");
  for (const auto& m : modules) std::printf("  %-5s %s\n", m.name.c_str(), m.reason.c_str());

  const char* env = std::getenv("TANDEM_BACKEND");
  const std::string env_text = env ? std::string("'").append(env).append("'") : "unset";
  int status = 0;
  try {
    const tandem::Engine eng;
    std::printf("TANDEM_BACKEND: %s, so Engine() uses %s\n", env_text.c_str(), tandem::to_string(eng.backend()));
  } catch (const tandem::Error& e) {
    std::printf("TANDEM_BACKEND: %s, so Engine() throws: %s\n", env_text.c_str(), message(e).c_str());
    // A TANDEM_BACKEND that names no backend is a bad setting (exit status 2, after the report); one that
    // names a backend this machine cannot run is reported only.
    if (e.kind() == tandem::ErrorKind::value) status = 2;
  }

  for (const auto& s : statuses) {
    if (!s.usable) continue;
    const char* name = tandem::to_string(s.backend);
    try {
      const tandem::Engine eng(s.backend);
      const tandem::DeviceInfo d = eng.device();
      std::printf("\n%s device:\n", name);
      std::printf("  name            %s\n", d.name.c_str());
      std::printf("  compute units   %d %s\n", d.compute_units, tandem::info(s.backend).units);
      std::printf("  memory          %.1f GiB\n", double(d.memory_bytes) / double(1ull << 30));
      if (d.peak_bandwidth_gbs > 0) std::printf("  peak bandwidth  %.0f GB/s\n", d.peak_bandwidth_gbs);
      if (!d.details.empty()) std::printf("  details         %s\n", d.details.c_str());
      std::printf("  reduce kernels  %s\n", join(eng.reduce_kernels()).c_str());
      std::printf("  matmul kernels  %s\n", join(eng.matmul_kernels()).c_str());
    } catch (const tandem::Error& e) {
      std::printf("\n%s device: could not be opened: %s\n", name, message(e).c_str());
      status = std::max(status, 1);
    }
  }
  // Where to keep data: the advice only (docs/API.md, "Where to keep your data", explains it); the measurements
  // behind it are in docs/PERFORMANCE.md.
  std::printf(
      "\nwhere to keep data: on the machines measured, host data was reduced fastest by the cpu engine; the cuda\n"
      "  engine reduces host data by staging it to the GPU through pinned memory (with kernel auto the CPU's cores\n"
      "  reduce part of it meanwhile; a named stage stages all of it, which is slower), and reduces device Buffers\n"
      "  and wrapped device memory on the GPU, by far the fastest. Why: docs/API.md (\"Where to keep your data\");\n"
      "  the measurements: docs/PERFORMANCE.md (\"GPU: data in host memory\")\n");
  return status;
}

}  // namespace

const Command info_command = {
    "info", "the backends compiled in, which one auto picks and why, devices and kernels", kInfoHelp, {}, {}, cmd_info};

}  // namespace tandem_cli
