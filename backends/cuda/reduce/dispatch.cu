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

// ---- The stage table -------------------------------------------------------------------------------
// Every stage in ladder order: its name, whether it runs argmin / argmax and the 16-bit types, and its
// entry point for operator Op (nullptr where it does not run Op). The names, the order, the metadata and
// the dispatch all come from this one table. Every stage runs sum, min, max and mean of int32, int64,
// float and double; the last three stages (and so "auto") argmin and argmax too, and every op of
// bfloat16 and float16.
template <class Op>
using StageFunction = void (*)(const typename Op::In* x, Index n, Index stride, typename Op::Acc* result, Workspace& ws,
                               cudaStream_t stream);

// A stage that can store an op's result into a Buffer element itself (a *_into call in one launch).
using IntoFunction = void (*)(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* out,
                              bool divide, Workspace& ws, cudaStream_t stream);

template <class Op>
struct StageEntry {
  std::string_view name;
  bool arg = false;  // runs argmin / argmax and the 16-bit storage types
  StageFunction<Op> run = nullptr;
  bool baseline = false;        // a vendor library's (CUB), the ladder's reference
  IntoFunction into = nullptr;  // stores the result into a Buffer element itself (nullptr: a second launch does)
  // The bits of its default mode. Our stages' grids and orders of combining are fixed by the GPU model and
  // the size, and each thread's elements by their indices, never by the address: run to run.
  Determinism determinism = Determinism::run_to_run;
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
constexpr auto kStages = std::to_array<StageEntry<Op>>({
    {.name = "interleaved_divergent", .run = textbook<Op, reduction::InterleavedDivergent>()},
    {.name = "interleaved_strided_index", .run = textbook<Op, reduction::InterleavedStridedIndex>()},
    {.name = "sequential_addressing", .run = textbook<Op, reduction::SequentialAddressing>()},
    {.name = "first_add_during_load", .run = textbook<Op, reduction::FirstAddDuringLoad>()},
    {.name = "unroll4_blocks", .run = textbook<Op, reduction::Unroll4Blocks>()},
    {.name = "unroll8_blocks", .run = textbook<Op, reduction::Unroll8Blocks>()},
    {.name = "unroll_last_warp", .run = textbook<Op, reduction::UnrollLastWarp>()},
    {.name = "complete_unroll", .run = textbook<Op, reduction::CompleteUnroll>()},
    {.name = "multiple_adds_per_thread", .run = multiple_adds<Op>()},
    {.name = "warp_shuffle", .arg = true, .run = &reduction::reduce_warp_shuffle<Op>},
    {.name = "single_pass", .arg = true, .run = &reduction::reduce_single_pass<Op>, .into = &reduce_single_pass_into},
    // CUB reads aligned input as vectors and other input element by element, in another order: the same
    // values at another address can give other bits (measured on an H100: float sums of 100003 elements
    // at byte offsets 4, 8, 12, ... differ from offset 0). Called as its users call it, so not_guaranteed.
    {.name = "cub",
     .arg = true,
     .run = &reduction::reduce_with_cub<Op>,
     .baseline = true,
     .determinism = Determinism::not_guaranteed},
});

// Names and columns only: any operator's table has the same.
constexpr const auto& kRows = kStages<detail::SumOp<float>>;
static_assert(
    [] {
      for (const auto& row : kRows)  // (every stage runs float sums)
        if (row.run == nullptr) return false;
      for (const auto& row : kStages<detail::ArgOp<float, false>>)  // (and argmin where it says so)
        if (row.arg != (row.run != nullptr)) return false;
      return true;
    }(),
    "backends/cuda/reduce/dispatch.cu: every stage needs its entry point (.run), and .arg exactly where it runs "
    "argmin / argmax");

// The row named `name`, found when this file compiles (a name that is not in the table does not compile).
consteval std::size_t row(std::string_view name) {
  for (std::size_t i = 0; i < kRows.size(); ++i)
    if (kRows[i].name == name) return i;
  throw "backends/cuda/reduce/dispatch.cu: no stage of that name";
}

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

namespace {
// f.template operator()<Operator, T>() for a sum-like op of a floating dtype, or a tandem::Error.
template <class F>
void visit_canonical(Op op, Dtype dtype, F&& f) {
  detail::visit(dtype, [&]<class T>(std::type_identity<T>) {
    detail::visit_backend_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      using Operator = typename detail::OpFor<O, T>::type;
      if constexpr (detail::canonical_order<Operator>)
        f.template operator()<Operator, T>();
      else
        throw Error(std::string("deterministic ") + to_string(op) + " of " + to_string(dtype) +
                    ": only sums and products of floating-point values have a canonical order (the others are "
                    "exact already)");
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

void reduce(std::size_t stage, Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* d_result,
            Workspace& ws, cudaStream_t stream) {
  detail::visit(dtype, [&]<class T>(std::type_identity<T>) {
    detail::visit_backend_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      using Operator = typename detail::OpFor<O, T>::type;
      const auto run = kStages<Operator>.at(stage).run;
      if (!run)  // (the engine checks KernelInfo first)
        throw Error("CUDA reduce stage '" + std::string(kRows.at(stage).name) + "' does not run " + to_string(op) +
                    " of " + to_string(dtype));
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
