// The host-side drivers the stages share: how many launches a reduction takes, and where partial results
// go between them.
//   reduce_multi_pass  stages 1 to 8: grids sized to n, pass after pass over the partials until one block
//                      is left (kernel decomposition). A stage is a descriptor with kChunks (elements per
//                      thread) and kernel<Op>(), launched by the one launch_tree_stage template.
//   reduce_two_pass    stages 9 and 10: a grid sized to the device, then one block over its partials.
#pragma once

#include <type_traits>

#include "backends/cuda/common.cuh"
#include "backends/cuda/reduce/block_helpers.cuh"
#include "backends/cuda/reduce/launch_config.cuh"

namespace tandem::cuda::reduction {

// Stages 1 to 8: `blocks` blocks of kTextbookBlockSize threads, each covering Stage::kChunks *
// kTextbookBlockSize elements and writing one partial.
template <class Stage, class Op>
void launch_tree_stage(const typename Op::In* x, Index n, Index stride, typename Op::Acc* partials, unsigned blocks,
                       cudaStream_t stream) {
  constexpr unsigned block_size = kTextbookBlockSize;
  const auto kernel = Stage::template kernel<Op>();
  kernel<<<blocks, block_size, block_size * sizeof(typename Op::Acc), stream>>>(x, n, stride, partials);
  TANDEM_CUDA_CHECK_LAUNCH();
}

// Pass 1 reads the input (In, strided); every later pass reduces the previous pass's Acc partials
// (contiguous) with PartialOp<Op>, until one block writes the result itself.
template <class Op, class Stage>
void reduce_multi_pass(const typename Op::In* x, Index n, Index stride, typename Op::Acc* result, Workspace& ws,
                       cudaStream_t stream) {
  using Acc = typename Op::Acc;
  using Later = PartialOp<Op>;
  static_assert(std::is_same_v<typename Later::Acc, Acc>);
  constexpr Index elements_per_block = Index{Stage::kChunks} * kTextbookBlockSize;

  const unsigned first_blocks = grid_size_for(n, elements_per_block);
  if (first_blocks == 1) {
    launch_tree_stage<Stage, Op>(x, n, stride, result, 1, stream);
    return;
  }

  // Ping-pong buffers from one get(): pass 1 writes `first_blocks` partials to buffer 0, pass 2 at most
  // `second_blocks` to buffer 1, pass 3 fewer still to buffer 0, and so on.
  const unsigned second_blocks = grid_size_for(first_blocks, elements_per_block);
  const std::size_t first_bytes = align_up(std::size_t{first_blocks} * sizeof(Acc));
  auto* scratch = static_cast<unsigned char*>(ws.get(first_bytes + std::size_t{second_blocks} * sizeof(Acc)));
  Acc* const buffers[2] = {reinterpret_cast<Acc*>(scratch), reinterpret_cast<Acc*>(scratch + first_bytes)};

  launch_tree_stage<Stage, Op>(x, n, stride, buffers[0], first_blocks, stream);
  Index count = first_blocks;
  int current = 0;
  while (count > 1) {
    const unsigned blocks = grid_size_for(count, elements_per_block);
    Acc* const out = blocks == 1 ? result : buffers[1 - current];
    launch_tree_stage<Stage, Later>(buffers[current], count, 1, out, blocks, stream);
    count = blocks;
    current = 1 - current;
  }
}

// The operator type a two-pass launch runs, as a value for a generic lambda.
template <class Op>
struct OpTag {
  using type = Op;
};

// `blocks` blocks reduce the input to partials, then one block reduces the partials (PartialOp<Op>);
// with one block, it writes the result itself. launch(OpTag<O>{}, x, n, stride, out, blocks) launches
// the stage's kernel for operator O.
template <class Op, class Launch>
void reduce_two_pass(const typename Op::In* x, Index n, Index stride, typename Op::Acc* result, unsigned blocks,
                     Workspace& ws, Launch&& launch) {
  using Acc = typename Op::Acc;
  if (blocks == 1) {
    launch(OpTag<Op>{}, x, n, stride, result, 1u);
    return;
  }
  auto* partials = static_cast<Acc*>(ws.get(blocks * sizeof(Acc)));
  launch(OpTag<Op>{}, x, n, stride, partials, blocks);
  const Acc* partials_in = partials;
  // One block walks all partials (a few thousand at most).
  launch(OpTag<PartialOp<Op>>{}, partials_in, Index{blocks}, Index{1}, result, 1u);
}

}  // namespace tandem::cuda::reduction
