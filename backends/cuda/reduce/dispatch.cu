// The reduction ladder as backends/cuda/kernels.hpp declares it: the stages' metadata (KernelInfo) from the
// stage table (stages.cuh), the choice behind "auto", and the dispatch of each call to the part of the
// kernels that holds its element type (types_part<P>.cu). The stage files (*.cuh beside this one) hold the
// kernels, each stage's launcher or descriptor beside its kernel; drivers.cuh the multi- and two-pass
// drivers they share.
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/cuda/kernels.hpp"
#include "backends/cuda/reduce/stages.cuh"

namespace tandem::cuda {
namespace {

using namespace reduce_table;

// ---- "auto" ----------------------------------------------------------------------------------------
// The stage "auto" runs: argmin / argmax kAutoArgStage, the others the first choice whose max_n >= n.
// Chosen from bench_cuda on an H200 (2026-11-21; sum/min/max x float/double/int32, engine calls on
// device buffers, GB/s):
//   n = 2^16..2^20  single_pass fastest in every case (e.g. float sum 2^20: single_pass 220,
//                   warp_shuffle 198, cub 184): one launch instead of two.
//   n = 2^24        single_pass fastest in 9 of 12 cases (float sum: 2045 vs warp_shuffle 1914).
//   n = 2^28, 2^30  single_pass, warp_shuffle, complete_unroll and cub within 1.5% of each other
//                   (float sum 2^28: cub 4211, warp_shuffle 4202, single_pass 4189).
// Re-measure with `bench_cuda --benchmark_filter='reduce/cuda/(single_pass|warp_shuffle|cub)/'`.
// argmin / argmax run single_pass at every size: on an H100 (2026-11-22, kernel level) it was as fast as
// or faster than warp_shuffle everywhere (float 2^28: 361 vs 396 us; CUB's ArgMax 360).
constexpr std::size_t kAutoArgStage = row("single_pass");
struct AutoChoice {
  std::int64_t max_n;
  std::size_t stage;
};
constexpr std::array<AutoChoice, 2> kAutoChoices = {{
    {std::int64_t{1} << 24, row("single_pass")},
    {std::numeric_limits<std::int64_t>::max(), row("warp_shuffle")},
}};

bool auto_may_pick(std::size_t stage) {
  if (stage == kAutoArgStage) return true;
  for (const auto& choice : kAutoChoices)
    if (stage == choice.stage) return true;
  return false;
}

}  // namespace

std::vector<KernelInfo> reduce_stage_info() {
  std::vector<KernelInfo> infos;
  for (std::size_t i = 0; i < kRows.size(); ++i) {
    const auto& entry = kRows[i];
    std::vector<Dtype> dtypes = detail::every_dtype();
    if (!entry.arg) std::erase_if(dtypes, [](Dtype d) { return info(d).storage; });
    const std::size_t count = dtypes.size();
    infos.push_back(KernelInfo{.name = std::string(entry.name),
                               .dtypes = std::move(dtypes),
                               .ops = entry.arg ? detail::every_op() : detail::value_ops(),
                               .precisions = std::vector<Precision>(count, Precision::full),
                               .determinism = entry.determinism,
                               .auto_pick = auto_may_pick(i),
                               .baseline = entry.baseline});
  }
  return infos;
}

std::size_t auto_reduce_stage(Op op, [[maybe_unused]] Dtype dtype, std::int64_t n,
                              [[maybe_unused]] std::int64_t stride) {
  if (is_arg(op)) return kAutoArgStage;
  for (const auto& choice : kAutoChoices)
    if (n <= choice.max_n) return choice.stage;
  return kAutoChoices.back().stage;
}

std::size_t reduce_stage(detail::KernelId kernel, Op op, Dtype dtype, std::int64_t n, std::int64_t stride) {
  return kernel.is_auto() ? auto_reduce_stage(op, dtype, n, stride) : std::size_t(kernel.stage);
}

std::size_t reduce_stage_named(std::string_view name) {
  for (std::size_t i = 0; i < kRows.size(); ++i)
    if (kRows[i].name == name) return i;
  throw Error("unknown CUDA reduce stage '" + std::string(name) + "'");
}

std::string reduce_stage_name(std::size_t stage) { return std::string(kRows.at(stage).name); }

bool reduce_stores_into(std::size_t stage) { return kRows.at(stage).into != nullptr; }

void reduce_into(std::size_t stage, Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* out,
                 bool divide, Workspace& ws, cudaStream_t stream) {
  kRows.at(stage).into(op, dtype, x, n, stride, out, divide, ws, stream);
}

void reduce_canonical_sum(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* d_result,
                          Workspace& ws, cudaStream_t stream) {
  detail::on_type_part(
      dtype, [&](auto p) { Part<decltype(p)::value>::canonical_sum(op, dtype, x, n, stride, d_result, ws, stream); });
}

void reduce_canonical_chunk_values(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* values,
                                   cudaStream_t stream) {
  detail::on_type_part(dtype, [&](auto p) {
    Part<decltype(p)::value>::canonical_chunk_values(op, dtype, x, n, stride, values, stream);
  });
}

void reduce(std::size_t stage, Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* d_result,
            Workspace& ws, cudaStream_t stream) {
  // Each part's code is instantiated in types_part<P>.cu, not here.
  detail::on_type_part(
      dtype, [&](auto p) { Part<decltype(p)::value>::reduce(stage, op, dtype, x, n, stride, d_result, ws, stream); });
}

void reduce_single_pass_into(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* out,
                             bool divide, Workspace& ws, cudaStream_t stream) {
  detail::on_type_part(dtype, [&](auto p) {
    Part<decltype(p)::value>::single_pass_into(op, dtype, x, n, stride, out, divide, ws, stream);
  });
}

}  // namespace tandem::cuda
