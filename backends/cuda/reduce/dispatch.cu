// The reduction ladder as backends/cuda/kernels.hpp declares it: the stage table (names and entry points in
// one place), the multi-pass driver of stages 1 to 8, the choice behind "auto", and the dispatch from
// (operator, dtype) to the instantiated kernels.
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "backends/cuda/common.cuh"
#include "backends/cuda/kernels.hpp"
#include "backends/cuda/reduce/canonical_sum.cuh"
#include "backends/cuda/reduce/block_helpers.cuh"
#include "backends/cuda/reduce/cub_reduce.cuh"
#include "backends/cuda/reduce/grid_stride.cuh"
#include "backends/cuda/reduce/interleaved.cuh"
#include "backends/cuda/reduce/launch_config.cuh"
#include "backends/cuda/reduce/sequential.cuh"
#include "backends/cuda/reduce/single_pass.cuh"
#include "backends/cuda/reduce/unrolled.cuh"
#include "tandem/types.hpp"

namespace tandem::cuda {
namespace {

using reduction::Index;

// ---- "auto" ----------------------------------------------------------------------------------------
// The stage "auto" runs: the first row whose max_n >= n. Chosen from bench_cuda on an H200
// (2026-11-21; sum/min/max x float/double/int32, engine calls on device buffers, GB/s):
//   n = 2^16..2^20  single_pass fastest in every case (e.g. float sum 2^20: single_pass 220,
//                   warp_shuffle 198, cub 184): one launch instead of two.
//   n = 2^24        single_pass fastest in 9 of 12 cases (float sum: 2045 vs warp_shuffle 1914).
//   n = 2^28, 2^30  single_pass, warp_shuffle, complete_unroll and cub within 1.5% of each other
//                   (float sum 2^28: cub 4211, warp_shuffle 4202, single_pass 4189).
// Re-measure with `bench_cuda --benchmark_filter='reduce/cuda/(single_pass|warp_shuffle|cub)/'`.
struct AutoChoice {
  std::int64_t max_n;
  const char* stage;
};
constexpr std::array<AutoChoice, 2> kAutoChoices = {{
    {std::int64_t{1} << 24, "single_pass"},
    {std::numeric_limits<std::int64_t>::max(), "warp_shuffle"},
}};

// ---- The multi-pass driver (kernel decomposition) -------------------------------------------------
// Stage<Op> launches one pass: `blocks` blocks of Stage::block_size threads, each writing one partial.
// Pass 1 reads the input (In, strided); every later pass reduces the previous pass's Acc partials
// (contiguous) with PartialOp<Op>, until one block writes the result itself.
template <class Op, template <class> class Stage>
void reduce_multi_pass(const typename Op::In* x, Index n, Index stride, typename Op::Acc* result, Workspace& ws,
                       cudaStream_t stream) {
  using Acc = typename Op::Acc;
  using FirstPass = Stage<Op>;
  using LaterPass = Stage<reduction::PartialOp<Op>>;
  static_assert(std::is_same_v<typename reduction::PartialOp<Op>::Acc, Acc>);

  const unsigned first_blocks = reduction::grid_size_for(n, FirstPass::elements_per_block);
  if (first_blocks == 1) {
    FirstPass::launch(x, n, stride, result, 1, stream);
    return;
  }

  // Ping-pong buffers from one get(): pass 1 writes `first_blocks` partials to buffer 0, pass 2 at most
  // `second_blocks` to buffer 1, pass 3 fewer still to buffer 0, and so on.
  const unsigned second_blocks = reduction::grid_size_for(first_blocks, LaterPass::elements_per_block);
  const std::size_t first_bytes = reduction::align_up(std::size_t{first_blocks} * sizeof(Acc));
  auto* scratch = static_cast<unsigned char*>(ws.get(first_bytes + std::size_t{second_blocks} * sizeof(Acc)));
  Acc* const buffers[2] = {reinterpret_cast<Acc*>(scratch), reinterpret_cast<Acc*>(scratch + first_bytes)};

  FirstPass::launch(x, n, stride, buffers[0], first_blocks, stream);
  Index count = first_blocks;
  int current = 0;
  while (count > 1) {
    const unsigned blocks = reduction::grid_size_for(count, LaterPass::elements_per_block);
    Acc* const out = blocks == 1 ? result : buffers[1 - current];
    LaterPass::launch(buffers[current], count, 1, out, blocks, stream);
    count = blocks;
    current = 1 - current;
  }
}

// ---- The stage table -------------------------------------------------------------------------------
// Every stage in ladder order: its name and its entry point for operator Op. The names, the order and
// the dispatch all come from this one table.
template <class Op>
using StageFunction = void (*)(const typename Op::In* x, Index n, Index stride, typename Op::Acc* result,
                               Workspace& ws, cudaStream_t stream);

template <class Op>
struct StageEntry {
  std::string_view name;
  StageFunction<Op> run;
};

template <class Op>
constexpr std::array<StageEntry<Op>, 12> kStages = {{
    {"interleaved_divergent", &reduce_multi_pass<Op, reduction::InterleavedDivergent>},
    {"interleaved_strided_index", &reduce_multi_pass<Op, reduction::InterleavedStridedIndex>},
    {"sequential_addressing", &reduce_multi_pass<Op, reduction::SequentialAddressing>},
    {"first_add_during_load", &reduce_multi_pass<Op, reduction::FirstAddDuringLoad>},
    {"unroll4_blocks", &reduce_multi_pass<Op, reduction::Unroll4Blocks>},
    {"unroll8_blocks", &reduce_multi_pass<Op, reduction::Unroll8Blocks>},
    {"unroll_last_warp", &reduce_multi_pass<Op, reduction::UnrollLastWarp>},
    {"complete_unroll", &reduce_multi_pass<Op, reduction::CompleteUnroll>},
    {"multiple_adds_per_thread", &reduction::reduce_multiple_adds_per_thread<Op>},
    {"warp_shuffle", &reduction::reduce_warp_shuffle<Op>},
    {"single_pass", &reduction::reduce_single_pass<Op>},
    {"cub", &reduction::reduce_with_cub<Op>},
}};

// Names only: any operator's table has the same names.
constexpr const auto& kStageNameTable = kStages<SumOp<float>>;

std::size_t stage_index(std::string_view stage) {
  for (std::size_t i = 0; i < kStageNameTable.size(); ++i)
    if (kStageNameTable[i].name == stage) return i;
  std::string message = "unknown CUDA reduce kernel '" + std::string(stage) + "'; valid kernels:";
  for (const auto& entry : kStageNameTable) message += " " + std::string(entry.name);
  throw Error(message);
}

template <class Op>
void run_stage(std::size_t index, const void* x, Index n, Index stride, void* d_result, Workspace& ws,
               cudaStream_t stream) {
  kStages<Op>[index].run(static_cast<const typename Op::In*>(x), n, stride, static_cast<typename Op::Acc*>(d_result),
                         ws, stream);
}

template <class T>
void run_stage_for_op(std::size_t index, ReduceOp op, const void* x, Index n, Index stride, void* d_result,
                      Workspace& ws, cudaStream_t stream) {
  switch (op) {
    case ReduceOp::sum: return run_stage<SumOp<T>>(index, x, n, stride, d_result, ws, stream);
    case ReduceOp::min: return run_stage<MinOp<T>>(index, x, n, stride, d_result, ws, stream);
    case ReduceOp::max: return run_stage<MaxOp<T>>(index, x, n, stride, d_result, ws, stream);
  }
  throw Error("reduce: unknown operator");
}

}  // namespace

const std::vector<std::string>& reduce_stage_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const auto& entry : kStageNameTable) list.emplace_back(entry.name);
    return list;
  }();
  return names;
}

std::string auto_reduce_stage([[maybe_unused]] ReduceOp op, [[maybe_unused]] Dtype dtype, std::int64_t n,
                              [[maybe_unused]] std::int64_t stride) {
  for (const auto& choice : kAutoChoices)
    if (n <= choice.max_n) return choice.stage;
  return kAutoChoices.back().stage;
}

namespace {
// Level after level of chunk values (backends/common/canonical.hpp), ping-ponging between two scratch arrays,
// the last level writing the result.
template <class T>
void canonical_sum(const T* x, Index n, Index stride, T* result, Workspace& ws, cudaStream_t stream) {
  using detail::canonical::chunk_count;
  const Index first = chunk_count(n), second = chunk_count(first);
  T* scratch = static_cast<T*>(ws.get(std::size_t(first + second) * sizeof(T) + 256));
  T* levels[2] = {scratch, scratch + first};
  const auto kernel = reduction::canonical_chunk_sums_kernel<T>;
  const int warps_per_block = reduction::kCanonicalBlockSize / reduction::kWarpSize;
  for (int level = 0;; ++level) {
    const Index chunks = chunk_count(n);
    T* out = chunks == 1 ? result : levels[level % 2];
    const Index blocks = std::min<Index>((chunks + warps_per_block - 1) / warps_per_block,
                                         reduction::resident_grid_size(reinterpret_cast<const void*>(kernel),
                                                                       reduction::kCanonicalBlockSize, 0));
    kernel<<<unsigned(blocks), reduction::kCanonicalBlockSize, 0, stream>>>(x, n, stride, out);
    TANDEM_CUDA_CHECK_LAUNCH();
    if (chunks == 1) return;
    x = out;
    n = chunks;
    stride = 1;
  }
}
}  // namespace

void reduce_canonical_sum(Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* d_result,
                          Workspace& ws, cudaStream_t stream) {
  if (dtype == Dtype::f32)
    return canonical_sum(static_cast<const float*>(x), n, stride, static_cast<float*>(d_result), ws, stream);
  if (dtype == Dtype::f64)
    return canonical_sum(static_cast<const double*>(x), n, stride, static_cast<double*>(d_result), ws, stream);
  throw Error("deterministic sum: integer sums are exact already and take the ordinary path");
}

void reduce(std::string_view stage, ReduceOp op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride,
            void* d_result, Workspace& ws, cudaStream_t stream) {
  const std::size_t index = stage_index(stage);
  switch (dtype) {
    case Dtype::i32: return run_stage_for_op<std::int32_t>(index, op, x, n, stride, d_result, ws, stream);
    case Dtype::i64: return run_stage_for_op<std::int64_t>(index, op, x, n, stride, d_result, ws, stream);
    case Dtype::f32: return run_stage_for_op<float>(index, op, x, n, stride, d_result, ws, stream);
    case Dtype::f64: return run_stage_for_op<double>(index, op, x, n, stride, d_result, ws, stream);
  }
  throw Error("reduce: unknown dtype");
}

}  // namespace tandem::cuda
