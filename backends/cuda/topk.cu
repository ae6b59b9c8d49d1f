// Top-k of resident data on the GPU (TopkArgs, common/backend.hpp): one block per line, a radix select.
//   1. Each element becomes an unsigned key whose order is topk's (a larger key is more extreme; NaN the
//      largest of all, every NaN the same key; -0.0 and +0.0 the same key): the line's keys are kept in
//      shared memory (one read of the line).
//   2. Radix select, 8 bits a pass from the top: a 256-bin histogram of the keys that match the digits found
//      so far (lanes of a warp with the same bin add once: __match_any_sync), and the bin where the k-th
//      largest key falls. After the last pass `threshold` is the k-th largest key, and `ties` how many of the
//      keys equal to it are among the k.
//   3. One ordered pass collects the keys above the threshold (any order) and the first `ties` keys equal
//      to it by index (a block-wide scan over the line in index order), k in all.
//   4. A bitonic sort of the k (key descending, then index ascending: topk's order), and the elements
//      themselves and their indices written out.
// A line whose keys do not fit in shared memory is cut into pieces that do: the k of each piece into a workspace,
// then the k of those (ties still by index: each piece's results are in index order among equal keys, and the
// pieces in order). k <= 1024 (the sort is in shared memory); a larger k, and a very long line with a large k,
// go to sort_lines.cu (each line sorted whole).
#include <algorithm>
#include <cstdint>
#include <cub/block/block_scan.cuh>
#include <type_traits>

#include "backends/cuda/kernels.hpp"
#include "backends/cuda/order_keys.cuh"
#include "common/dispatch.hpp"

namespace tandem::cuda {

using detail::Index;

namespace {

constexpr int kMaxK = int(kTopkSelectMaxK);
constexpr int kItems = 8;  // elements per thread per step of the ordered pass (3.)

struct Params {
  Index lines, length, line_step, step, k;
  bool largest;
  Index values_line, values_step, indices_line, indices_step;
  // Each line cut into `chunks` pieces of chunk_len elements (the last may be shorter, never below k), a block
  // each: piece c's k results at slots c * k + r (a line longer than a block's shared memory holds: first the
  // k of each piece, then the k of those).
  Index chunks = 1, chunk_len = 0;
  // Where given, element i of line l is element gather[l * length + i] of the data (the second step's input,
  // the pieces' results in order: equal values still by index).
  const std::int64_t* gather = nullptr;
};

template <class K, int kThreads>
struct Shared {
  using Scan = cub::BlockScan<unsigned, kThreads>;
  typename Scan::TempStorage scan;
  unsigned hist[256];
  K sel_key[kMaxK];
  std::int64_t sel_index[kMaxK];
  K prefix;
  Index want;      // keys still to find in the current bin
  unsigned above;  // keys above the threshold collected so far (3.)
};

// topk's order of two (key, index) pairs: a larger key first, then a smaller index.
template <class K>
__device__ bool before(K ka, std::int64_t ia, K kb, std::int64_t ib) {
  return ka > kb || (ka == kb && ia < ib);
}

template <class T, int kThreads>
__global__ void __launch_bounds__(kThreads)
    topk_kernel(const T* __restrict__ x, Params p, T* __restrict__ values, std::int64_t* __restrict__ indices) {
  using K = KeyOf<T>;
  using S = Shared<K, kThreads>;
  __shared__ S s;
  extern __shared__ __align__(16) unsigned char dynamic[];
  K* cached = reinterpret_cast<K*>(dynamic);
  const int tid = int(threadIdx.x);
  for (Index task = blockIdx.x; task < p.lines * p.chunks; task += gridDim.x) {
    const Index line = task / p.chunks, piece = task - line * p.chunks, begin = piece * p.chunk_len;
    const Index length = p.chunks == 1 ? p.length : std::min(p.chunk_len, p.length - begin);
    const T* in = x + line * p.line_step + begin * p.step;
    {  // 1. the keys, read once (kItems loads in flight per thread)
      for (Index base = 0; base < length; base += Index(kThreads) * kItems) {
        T v[kItems];
#pragma unroll
        for (int u = 0; u < kItems; ++u) {
          const Index i = base + Index(u) * kThreads + tid;
          if (i < length) v[u] = in[i * p.step];
        }
#pragma unroll
        for (int u = 0; u < kItems; ++u) {
          const Index i = base + Index(u) * kThreads + tid;
          if (i < length) cached[i] = key_of(v[u], p.largest);
        }
      }
    }
    auto key = [&](Index i) -> K { return cached[i]; };
    // 2. radix select
    if (tid == 0) s.prefix = 0, s.want = p.k, s.above = 0;
    K mask = 0;
    for (int shift = int(sizeof(K)) * 8 - 8; shift >= 0; shift -= 8) {
      for (int b = tid; b < 256; b += kThreads) s.hist[b] = 0;
      __syncthreads();
      const K prefix = s.prefix;
      for (Index base = 0; base < length; base += kThreads) {
        const Index i = base + tid;
        const K kk = i < length ? key(i) : K(0);
        const bool counts = i < length && (kk & mask) == prefix;
        const unsigned active = __ballot_sync(0xffffffffu, counts);
        if (counts) {
          const unsigned bin = unsigned(kk >> shift) & 255u;
          const unsigned same = __match_any_sync(active, bin);
          if ((tid & 31) == __ffs(same) - 1) atomicAdd(&s.hist[bin], unsigned(__popc(same)));
        }
      }
      __syncthreads();
      // The bin of the want-th largest matching key: bins from the top, their counts summed.
      const unsigned count = tid < 256 ? s.hist[255 - tid] : 0u;
      unsigned inclusive;
      typename S::Scan(s.scan).InclusiveSum(count, inclusive);
      const Index want = s.want;
      __syncthreads();  // (every thread has read s.want)
      if (tid < 256 && Index(inclusive) >= want && Index(inclusive - count) < want) {
        s.prefix = prefix | (K(255 - tid) << shift);
        s.want = want - Index(inclusive - count);
      }
      mask |= K(255) << shift;
      __syncthreads();
    }
    const K threshold = s.prefix;
    const Index ties = s.want;  // keys equal to the threshold among the k: the first `ties` of them by index
    const Index k_above = p.k - ties;
    // 3. the k: keys above the threshold anywhere in [0, k_above), the ties in index order after them
    Index tie_base = 0;
    for (Index base = 0; base < length; base += Index(kThreads) * kItems) {
      const Index first = base + Index(tid) * kItems;
      unsigned ties_here = 0;
#pragma unroll
      for (int u = 0; u < kItems; ++u) {
        const Index i = first + u;
        if (i < length) {
          const K kk = key(i);
          if (kk > threshold) {
            const unsigned slot = atomicAdd(&s.above, 1u);
            s.sel_key[slot] = kk, s.sel_index[slot] = i;
          }
          ties_here += kk == threshold;
        }
      }
      unsigned offset, total;
      typename S::Scan(s.scan).ExclusiveSum(ties_here, offset, total);
      if (ties_here > 0 && tie_base + Index(offset) < ties) {
        Index at = tie_base + Index(offset);
        for (int u = 0; u < kItems && at < ties; ++u) {
          const Index i = first + u;
          if (i < length && key(i) == threshold) {
            s.sel_key[k_above + at] = threshold, s.sel_index[k_above + at] = i;
            ++at;
          }
        }
      }
      tie_base += Index(total);
      __syncthreads();  // (the scan's storage is used again)
    }
    // 4. sort the k (padded to a power of two with pairs that sort last), write them out
    int size = 1;
    while (size < int(p.k)) size *= 2;
    for (int i = int(p.k) + tid; i < size; i += kThreads) s.sel_key[i] = 0, s.sel_index[i] = INT64_MAX;
    __syncthreads();
    for (int width = 2; width <= size; width *= 2)
      for (int half_width = width / 2; half_width > 0; half_width /= 2) {
        for (int i = tid; i < size; i += kThreads) {
          const int j = i ^ half_width;
          if (j > i) {
            const bool ascending = (i & width) == 0;  // (this run in topk's order, or reversed)
            const bool swap = before(s.sel_key[j], s.sel_index[j], s.sel_key[i], s.sel_index[i]) == ascending;
            if (swap) {
              const K tk = s.sel_key[i];
              const std::int64_t ti = s.sel_index[i];
              s.sel_key[i] = s.sel_key[j], s.sel_index[i] = s.sel_index[j];
              s.sel_key[j] = tk, s.sel_index[j] = ti;
            }
          }
        }
        __syncthreads();
      }
    for (Index r = tid; r < p.k; r += kThreads) {
      const std::int64_t i = s.sel_index[r];
      const Index slot = piece * p.k + r;
      values[line * p.values_line + slot * p.values_step] = in[i * p.step];
      indices[line * p.indices_line + slot * p.indices_step] = p.gather ? p.gather[line * p.length + i] : begin + i;
    }
    __syncthreads();  // (before the next line reuses the shared memory)
  }
}

template <class T, int kThreads>
void launch(const T* x, const Params& p, std::size_t dynamic, T* values, std::int64_t* indices, int optin,
            cudaStream_t stream) {
  auto kernel = topk_kernel<T, kThreads>;
  // Past the default limit: opted in, to the most the device allows (always that value, so that engines on
  // other streams and threads setting it at the same time agree).
  if (sizeof(Shared<KeyOf<T>, kThreads>) + dynamic > 48 * 1024)
    TANDEM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           optin - int(sizeof(Shared<KeyOf<T>, kThreads>))));
  const Index blocks = std::min<Index>(p.lines * p.chunks, Index(multiprocessor_count()) * 64);
  kernel<<<unsigned(blocks), kThreads, dynamic, stream>>>(x, p, values, indices);
  TANDEM_CUDA_CHECK_LAUNCH();
}

// One launch over lines of p.length elements whose keys fit in a block's shared memory (max_cached of them):
// 256 threads for short lines (more lines at a time on an SM), else 1024.
template <class T>
void launch_cached(const T* x, const Params& p, T* values, std::int64_t* indices, int optin, cudaStream_t stream) {
  const Index length = p.chunks == 1 ? p.length : p.chunk_len;
  const std::size_t keys = std::size_t(length) * sizeof(KeyOf<T>);
  if (length <= 4096)
    launch<T, 256>(x, p, keys, values, indices, optin, stream);
  else
    launch<T, 1024>(x, p, keys, values, indices, optin, stream);
}

}  // namespace

bool topk(const detail::TopkArgs& a, Workspace& ws, cudaStream_t stream) {
  if (a.argsort || a.k > kMaxK || a.length > Index(UINT32_MAX))  // (the histograms count in 32 bits)
    return sort_lines(a, ws, stream);
  if (a.lines == 0 || a.k == 0) return true;
  const Params p{a.lines,   a.length,      a.line_step,   a.step,         a.k,
                 a.largest, a.values_line, a.values_step, a.indices_line, a.indices_step};
  int device = current_device(), optin = 0;
  TANDEM_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  bool taken = true;
  detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    using K = KeyOf<T>;
    const auto* x = static_cast<const T*>(a.data);
    auto* values = static_cast<T*>(a.values);
    const Index max_cached = (Index(optin) - Index(sizeof(Shared<K, 1024>)) - 1024) / Index(sizeof(K));
    if (a.length <= max_cached) return launch_cached(x, p, values, a.indices, optin, stream);
    // A longer line: pieces of at most max_cached elements, the k of each into the workspace (values and global
    // indices, piece by piece), then the k of those; as many lines at a time as 1 GiB of workspace holds. Sorted
    // whole (sort_lines) where the pieces' results do not fit in shared memory themselves, or a piece is shorter
    // than k (a very long line with a large k).
    const Index chunks = (a.length + max_cached - 1) / max_cached, chunk_len = (a.length + chunks - 1) / chunks;
    const Index candidates = chunks * a.k, per_line = candidates * Index(sizeof(T) + sizeof(std::int64_t));
    const Index at_once = std::min(a.lines, (Index(1) << 30) / per_line);
    if (candidates > max_cached || a.length - (chunks - 1) * chunk_len < a.k || at_once == 0) {
      taken = false;
      return;
    }
    const std::size_t value_bytes = (std::size_t(at_once * candidates) * sizeof(T) + 255) / 256 * 256;
    auto* base = static_cast<unsigned char*>(ws.get(value_bytes + std::size_t(at_once * candidates) * 8));
    T* cand_values = reinterpret_cast<T*>(base);
    auto* cand_indices = reinterpret_cast<std::int64_t*>(base + value_bytes);
    for (Index first = 0; first < a.lines; first += at_once) {
      Params pieces = p;
      pieces.lines = std::min(at_once, a.lines - first);
      pieces.chunks = chunks, pieces.chunk_len = chunk_len;
      pieces.values_line = pieces.indices_line = candidates, pieces.values_step = pieces.indices_step = 1;
      launch_cached(x + first * a.line_step, pieces, cand_values, cand_indices, optin, stream);
      Params merge = p;
      merge.lines = pieces.lines;
      merge.length = candidates, merge.line_step = candidates, merge.step = 1, merge.gather = cand_indices;
      launch_cached(static_cast<const T*>(cand_values), merge, values + first * a.values_line,
                    a.indices + first * a.indices_line, optin, stream);
    }
  });
  return taken || sort_lines(a, ws, stream);
}

}  // namespace tandem::cuda
