// The commands of the tandem CLI, one file each (tools/cli/<name>.cpp); tools/tandem_cli.cpp lists them.
#pragma once

#include "tools/cli/options.hpp"

namespace tandem_cli {

// The pseudo-kernel name that runs "auto" in deterministic mode (the canonical order).
inline constexpr const char* kDeterministic = "deterministic";

extern const Command info_command;     // info.cpp
extern const Command kernels_command;  // kernels.cpp
extern const Command reduce_command;   // reduce.cpp
extern const Command matmul_command;   // matmul.cpp
extern const Command check_command;    // check.cpp

}  // namespace tandem_cli
