// The reduction ladder's stage table (names, metadata and entry points in one place), and the split of its
// kernels' instantiations over several files. dispatch.cu reads the table's names and metadata; the kernels of
// each element type are instantiated in one of the files types_part<P>.cu (P = the type's part,
// common/dispatch.hpp's kTypePart), so that nvcc compiles the ladder in parallel, a part per job. The stage
// files (*.cuh beside this one) hold the kernels, each stage's launcher or descriptor beside its kernel;
// drivers.cuh the multi- and two-pass drivers they share.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

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

namespace tandem::cuda::reduce_table {

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
inline constexpr auto kStages = std::to_array<StageEntry<Op>>({
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
inline constexpr const auto& kRows = kStages<detail::SumOp<float>>;
static_assert(
    [] {
      for (const auto& row : kRows)  // (every stage runs float sums)
        if (row.run == nullptr) return false;
      for (const auto& row : kStages<detail::ArgOp<float, false>>)  // (and argmin where it says so)
        if (row.arg != (row.run != nullptr)) return false;
      return true;
    }(),
    "backends/cuda/reduce/stages.cuh: every stage needs its entry point (.run), and .arg exactly where it runs "
    "argmin / argmax");

// The row named `name`, found when this file compiles (a name that is not in the table does not compile).
consteval std::size_t row(std::string_view name) {
  for (std::size_t i = 0; i < kRows.size(); ++i)
    if (kRows[i].name == name) return i;
  throw "backends/cuda/reduce/stages.cuh: no stage of that name";
}

// ---- The split over files ---------------------------------------------------------------------------
// Part<P> runs the element types of part P (common/dispatch.hpp: kTypePart<T>); its members are defined in
// parts.cuh and instantiated in types_part<P>.cu, one file per part.
template <int P>
struct Part {
  // kernels.hpp's reduce, reduce_single_pass_into, reduce_canonical_sum and reduce_canonical_chunk_values for
  // the types of part P.
  static void reduce(std::size_t stage, Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride,
                     void* d_result, Workspace& ws, cudaStream_t stream);
  static void single_pass_into(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* out,
                               bool divide, Workspace& ws, cudaStream_t stream);
  static void canonical_sum(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* d_result,
                            Workspace& ws, cudaStream_t stream);
  static void canonical_chunk_values(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride,
                                     void* values, cudaStream_t stream);
};

}  // namespace tandem::cuda::reduce_table
