// Kernel metadata (tandem::KernelInfo, from Engine::reduce_kernel_info / matmul_kernel_info): looking a
// kernel up, whether the engine must take a call, and the JSON form that `tandem kernels --json` prints
// and the benchmarks put in their context. Decisions about kernels come from here, never from their
// names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tandem/types.hpp"

namespace tandem_verify {

// The KernelInfo named `name`, or nullptr.
const tandem::KernelInfo* find_kernel(const std::vector<tandem::KernelInfo>& infos, std::string_view name);

// Whether the engine takes kernel `name` for a call on dtype d (and op, for reductions; nullptr for
// matmul), in deterministic mode or not: an unknown name, a dtype or op the kernel does not list, or
// deterministic mode on a kernel that is not deterministic must throw tandem::Error.
bool kernel_accepts(const std::vector<tandem::KernelInfo>& infos, std::string_view name, tandem::Dtype d,
                    const tandem::Op* op, bool deterministic);

// The names of the kernels whose KernelInfo takes dtype d, in the engine's order ("auto" first).
std::vector<std::string> kernels_taking(const std::vector<tandem::KernelInfo>& infos, tandem::Dtype d);

// s as a JSON string literal, quotes included.
std::string json_string(std::string_view s);

// One kernel as a JSON object on one line:
//   {"backend":"cpu","kind":"reduce","name":"auto","dtypes":["int32",...],"ops":["sum",...],
//    "precision":"full","deterministic":true,"determinism":"run_to_run","auto_pick":false,"baseline":false,
//    "requirement":"","per_row_col":false,"runs_here":true,"native_16bit":false}
// kind is "reduce" or "matmul"; "backend" is left out when backend is empty.
std::string kernel_json(const tandem::KernelInfo& k, std::string_view kind, std::string_view backend = {});

}  // namespace tandem_verify
