// The reduction ladder as backends/cuda/kernels.hpp declares it: the stage table (names, metadata and
// entry points in one place), the choice behind "auto", and the dispatch from (op, dtype) to the
// instantiated kernels. The stage files (*.cuh beside this one) hold the kernels, each stage's launcher
// or descriptor beside its kernel; drivers.cuh the multi- and two-pass drivers they share.
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cuda/common.cuh"
#include "backends/cuda/kernels.hpp"
#include "backends/cuda/reduce/block_helpers.cuh"
#include "backends/cuda/reduce/canonical_sum.cuh"
#include "backends/cuda/reduce/cub.cuh"
#include "backends/cuda/reduce/drivers.cuh"
#include "backends/cuda/reduce/first_add_unroll4_unroll8.cuh"
#include "backends/cuda/reduce/interleaved_divergent_strided_index.cuh"
#include "backends/cuda/reduce/multiple_adds_warp_shuffle.cuh"
#include "backends/cuda/reduce/sequential_addressing.cuh"
#include "backends/cuda/reduce/single_pass.cuh"
#include "backends/cuda/reduce/unroll_last_warp_complete_unroll.cuh"
#include "common/dispatch.hpp"

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
// argmin / argmax run single_pass at every size: on an H100 (2026-11-22, kernel level) it was as fast as
// or faster than warp_shuffle everywhere (float 2^28: 361 vs 396 us; CUB's ArgMax 360).
constexpr const char* kAutoArgStage = "single_pass";
struct AutoChoice {
  std::int64_t max_n;
  const char* stage;
};
constexpr std::array<AutoChoice, 2> kAutoChoices = {{
    {std::int64_t{1} << 24, "single_pass"},
    {std::numeric_limits<std::int64_t>::max(), "warp_shuffle"},
}};

// ---- The stage table -------------------------------------------------------------------------------
// Every stage in ladder order: its name, whether it runs argmin / argmax and the 16-bit types, and its
// entry point for operator Op (nullptr where it does not run Op). The names, the order, the metadata and
// the dispatch all come from this one table. Every stage runs sum, min, max and mean of int32, int64,
// float and double; the last three stages (and so "auto") argmin and argmax too, and every op of
// bfloat16 and float16.
template <class Op>
using StageFunction = void (*)(const typename Op::In* x, Index n, Index stride, typename Op::Acc* result, Workspace& ws,
                               cudaStream_t stream);

template <class Op>
struct StageEntry {
  std::string_view name;
  bool arg;  // runs argmin / argmax and the 16-bit storage types
  StageFunction<Op> run;
};

// A textbook stage (the first nine): no argmin / argmax and no 16-bit inputs; its entry point only for
// the other operators and types (so that its kernels are never instantiated for them). The 16-bit
// storage types run on the last three stages, which read them as 16-byte vectors of 8.
template <class Op>
inline constexpr bool kTextbookRuns = !detail::is_arg_op<Op> && !is_storage_type_v<typename Op::In>;
template <class Op, class Stage>
constexpr StageFunction<Op> textbook() {
  if constexpr (!kTextbookRuns<Op>)
    return nullptr;
  else
    return &reduction::reduce_multi_pass<Op, Stage>;
}
template <class Op>
constexpr StageFunction<Op> multiple_adds() {
  if constexpr (!kTextbookRuns<Op>)
    return nullptr;
  else
    return &reduction::reduce_multiple_adds_per_thread<Op>;
}

template <class Op>
constexpr std::array<StageEntry<Op>, 12> kStages = {{
    {"interleaved_divergent", false, textbook<Op, reduction::InterleavedDivergent>()},
    {"interleaved_strided_index", false, textbook<Op, reduction::InterleavedStridedIndex>()},
    {"sequential_addressing", false, textbook<Op, reduction::SequentialAddressing>()},
    {"first_add_during_load", false, textbook<Op, reduction::FirstAddDuringLoad>()},
    {"unroll4_blocks", false, textbook<Op, reduction::Unroll4Blocks>()},
    {"unroll8_blocks", false, textbook<Op, reduction::Unroll8Blocks>()},
    {"unroll_last_warp", false, textbook<Op, reduction::UnrollLastWarp>()},
    {"complete_unroll", false, textbook<Op, reduction::CompleteUnroll>()},
    {"multiple_adds_per_thread", false, multiple_adds<Op>()},
    {"warp_shuffle", true, &reduction::reduce_warp_shuffle<Op>},
    {"single_pass", true, &reduction::reduce_single_pass<Op>},
    {"cub", true, &reduction::reduce_with_cub<Op>},
}};
constexpr std::string_view kBaselineStage = "cub";

// Names only: any operator's table has the same names.
constexpr const auto& kStageNameTable = kStages<detail::SumOp<float>>;

std::size_t stage_index(std::string_view stage) {
  for (std::size_t i = 0; i < kStageNameTable.size(); ++i)
    if (kStageNameTable[i].name == stage) return i;
  std::string message = "unknown CUDA reduce kernel '";  // (appended piecewise: GCC 12's -Wrestrict misfires
  message += stage;                                      // on operator+ chains here)
  message += "'; valid kernels:";
  for (const auto& entry : kStageNameTable) (message += " ") += entry.name;
  throw Error(message);
}

bool auto_may_pick(std::string_view stage) {
  for (const auto& choice : kAutoChoices)
    if (stage == choice.stage) return true;
  return false;
}

}  // namespace

std::vector<KernelInfo> reduce_stage_info() {
  std::vector<KernelInfo> infos;
  for (const auto& entry : kStageNameTable) {
    std::vector<Dtype> dtypes = detail::every_dtype();
    if (!entry.arg) std::erase_if(dtypes, [](Dtype d) { return info(d).storage; });
    // Every stage's grid and order of combining are fixed for a GPU model and size: run to run.
    infos.push_back(KernelInfo{.name = std::string(entry.name),
                               .dtypes = std::move(dtypes),
                               .ops = entry.arg ? detail::every_op() : detail::value_ops(),
                               .determinism = Determinism::run_to_run,
                               .auto_pick = auto_may_pick(entry.name),
                               .baseline = entry.name == kBaselineStage});
  }
  return infos;
}

std::string auto_reduce_stage(Op op, [[maybe_unused]] Dtype dtype, std::int64_t n,
                              [[maybe_unused]] std::int64_t stride) {
  if (is_arg(op)) return kAutoArgStage;
  for (const auto& choice : kAutoChoices)
    if (n <= choice.max_n) return choice.stage;
  return kAutoChoices.back().stage;
}

namespace {
// f.template operator()<Operator, T>() for a sum-like op of a floating dtype, or a tandem::Error.
template <class F>
void visit_canonical(Op op, Dtype dtype, F&& f) {
  detail::visit(dtype, [&]<class T>(std::type_identity<T>) {
    detail::visit_backend_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      using Operator = typename detail::OpFor<O, T>::type;
      if constexpr (detail::additive<Operator> && is_floating_v<T>)
        f.template operator()<Operator, T>();
      else
        throw Error(std::string("deterministic ") + to_string(op) + " of " + to_string(dtype) +
                    ": only sums of floating-point values have a canonical order (the others are exact already)");
    });
  });
}
}  // namespace

void reduce_canonical_sum(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* d_result,
                          Workspace& ws, cudaStream_t stream) {
  visit_canonical(op, dtype, [&]<class Operator, class T>() {
    reduction::canonical_sum<Operator>(static_cast<const T*>(x), n, stride, static_cast<compute_t<T>*>(d_result), ws,
                                       stream);
  });
}

void reduce_canonical_chunk_values(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* values,
                                   cudaStream_t stream) {
  visit_canonical(op, dtype, [&]<class Operator, class T>() {
    reduction::canonical_chunk_values<Operator>(static_cast<const T*>(x), n, stride, static_cast<compute_t<T>*>(values),
                                                stream);
  });
}

void reduce(std::string_view stage, Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride,
            void* d_result, Workspace& ws, cudaStream_t stream) {
  const std::size_t index = stage_index(stage);
  detail::visit(dtype, [&]<class T>(std::type_identity<T>) {
    detail::visit_backend_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      using Operator = typename detail::OpFor<O, T>::type;
      const auto run = kStages<Operator>[index].run;
      if (!run)
        throw Error("CUDA reduce kernel '" + std::string(stage) + "' does not run " + to_string(op) + " of " +
                    to_string(dtype) + "; use auto, warp_shuffle, single_pass or cub");
      run(static_cast<const T*>(x), n, stride, static_cast<typename Operator::Acc*>(d_result), ws, stream);
    });
  });
}

namespace {
// The op's result (detail::store_result: NaN canonical, a mean divided by count) into out, by the
// reduction's last block.
template <Op O, class T>
struct StoreResult {
  void* out;
  Index count;
  bool divide;
  __device__ void operator()(const typename detail::OpFor<O, T>::type::Acc& acc) const {
    detail::store_result<O, T>(acc, count, divide, out, 0);
  }
};
}  // namespace

void reduce_single_pass_into(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* out,
                             bool divide, Workspace& ws, cudaStream_t stream) {
  detail::visit(dtype, [&]<class T>(std::type_identity<T>) {
    detail::visit_backend_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      using Operator = typename detail::OpFor<O, T>::type;
      reduction::reduce_single_pass_to<Operator>(static_cast<const T*>(x), n, stride, StoreResult<O, T>{out, n, divide},
                                                 ws, stream);
    });
  });
}

}  // namespace tandem::cuda
