// Stage 12: cub, the vendor baseline: cub::DeviceReduce from the toolkit's CCCL, with tuned tile sizes per
// architecture. The ladder's stages are measured against it.
//
// CUB gets our operator, not its own Min/Max/Sum: DeviceReduce::Reduce with Op::combine as the reduction
// functor and Op::identity() as the initial value, so that NaN and signed-zero results match the other
// stages bitwise. Where elements need converting (integer sums accumulate in uint64) or transforming
// (a square), or are strided, DeviceReduce::TransformReduce applies Op::load, reading x[i * stride]
// through a counting iterator.
// CUB's temporary storage comes from the Workspace.
#pragma once

#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cub/device/device_reduce.cuh>
#include <type_traits>

#include "backends/cuda/common.cuh"
#include "backends/cuda/reduce/block_helpers.cuh"

namespace tandem::cuda::reduction {

template <class Op>
struct CombineFunctor {
  __host__ __device__ typename Op::Acc operator()(const typename Op::Acc& a, const typename Op::Acc& b) const {
    return Op::combine(a, b);
  }
};

// For operators whose load ignores the index (Op::kIndexFree): CUB reads the input itself.
template <class Op>
struct LoadFunctor {
  __host__ __device__ typename Op::Acc operator()(const typename Op::In& value) const { return Op::load(value, 0); }
};

// Element i of the strided input, converted to Acc.
template <class Op>
struct StridedLoadFunctor {
  const typename Op::In* x;
  Index stride;
  __host__ __device__ typename Op::Acc operator()(Index i) const { return Op::load(x[i * stride], i); }
};

template <class Op>
void reduce_with_cub(const typename Op::In* x, Index n, Index stride, typename Op::Acc* result, Workspace& ws,
                     cudaStream_t stream) {
  using In = typename Op::In;
  using Acc = typename Op::Acc;

  // Called twice: with temp == nullptr CUB only reports temp_bytes, then it runs.
  std::size_t temp_bytes = 0;
  const auto run = [&](void* temp) -> cudaError_t {
    if (stride == 1 && Op::kIndexFree) {
      if constexpr (std::is_same_v<In, Acc> && !detail::load_transforms<Op>)
        return cub::DeviceReduce::Reduce(temp, temp_bytes, x, result, n, CombineFunctor<Op>{}, Op::identity(), stream);
      else
        return cub::DeviceReduce::TransformReduce(temp, temp_bytes, x, result, n, CombineFunctor<Op>{},
                                                  LoadFunctor<Op>{}, Op::identity(), stream);
    }
    return cub::DeviceReduce::TransformReduce(temp, temp_bytes, thrust::counting_iterator<Index>(0), result, n,
                                              CombineFunctor<Op>{}, StridedLoadFunctor<Op>{x, stride}, Op::identity(),
                                              stream);
  };
  TANDEM_CUDA_CHECK(run(nullptr));
  // A zero-byte request could come back as nullptr, which CUB would take as another size query.
  void* temp = ws.get(std::max<std::size_t>(temp_bytes, 16));
  TANDEM_CUDA_CHECK(run(temp));
}

}  // namespace tandem::cuda::reduction
