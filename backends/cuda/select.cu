// The engine's elementwise pass on the GPU (SelectArgs, common/backend.hpp): the masked copies of where=
// and the deviations of var / std for Buffer inputs. Each element is common/select.hpp's select_value,
// the host's own step, so the bits are the same on every backend.
#include <algorithm>

#include "backends/cuda/kernels.hpp"
#include "common/select.hpp"

namespace tandem::cuda {

using detail::Index;

namespace {

constexpr int kSelectBlock = 256;

template <class T, class Out>
__global__ void __launch_bounds__(kSelectBlock)
    select_kernel(const T* __restrict__ x, Index cols, Index ld, Index stride, const bool* __restrict__ mask,
                  const double* __restrict__ shift, detail::SelectArgs::Shift kind, Out fill, Out* __restrict__ out,
                  Index total) {
  for (Index k = Index(blockIdx.x) * blockDim.x + threadIdx.x; k < total; k += Index(gridDim.x) * blockDim.x) {
    const Index r = k / cols, c = k - r * cols;
    out[k] = detail::select_value<T, Out>(x[r * ld + c * stride], mask == nullptr || mask[k], shift,
                                          detail::shift_index(kind, r, c), fill);
  }
}

}  // namespace

void select(const detail::SelectArgs& a, cudaStream_t stream) {
  const Index total = a.rows * a.cols;
  if (total == 0) return;
  // (a grid-stride loop: at most 32 blocks of 256 threads per SM, enough to keep the memory busy)
  const Index blocks = std::min<Index>((total + kSelectBlock - 1) / kSelectBlock, Index(multiprocessor_count()) * 32);
  detail::visit_select(a, [&]<class T, class Out>(std::type_identity<T>, std::type_identity<Out>) {
    select_kernel<T, Out><<<unsigned(blocks), kSelectBlock, 0, stream>>>(
        static_cast<const T*>(a.data), a.cols, a.ld, a.stride, a.mask, a.shift, a.shift_kind, detail::fill_of<Out>(a),
        static_cast<Out*>(a.out), total);
    TANDEM_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace tandem::cuda
