// Per-row and per-column reductions (Engine::sum(MatrixView, Per, ...)) of a row-major matrix in device
// memory, with the operators of common/reduce_ops.hpp, so NaN, signed-zero and first-index
// rules are those of the vector ops.
//   per row, narrow rows  one thread per row, its elements in order (up to 40, 64 for argmin / argmax: a
//                         warp per row would leave lanes idle and spend more on its shuffle tree than on
//                         the loads; the k-means step's 200000 x 16 or x 50 distances)
//   per row, short rows   one warp per row (warps grid-stride over rows), lanes stride the row
//                         (coalesced), a shuffle tree ends it: tall, narrow matrices (2^20 x 64)
//   per row, long rows    one block per row (blocks grid-stride over rows), block_reduce ends it
//   per column            a block is 32 columns (one warp wide, coalesced) x 8 warps; each warp walks
//                         every 8th row of the block's row split. Tall matrices split their rows over
//                         gridDim.y so the GPU fills; a second kernel combines the splits in order.
//   deterministic float sums: each row's or column's canonical sum (common/canonical.hpp).
//                         Per row, one warp per (row, 4096-element chunk), like canonical_sum.cuh; per
//                         column, one thread per (column, chunk) with its 32 lanes in registers (a fully
//                         unrolled loop, so the lane indices are static). Chunk values are a matrix
//                         again (one row, or column, per input row or column), reduced level after level.
// Every index is 64-bit: rows * ld passes 2^31 long before memory runs out.
#include <algorithm>
#include <string>

#include "backends/cuda/reduce/block_helpers.cuh"
#include "backends/cuda/reduce/launch_config.cuh"
#include "backends/cuda/reduce/per_matrix.cuh"
#include "common/canonical.hpp"
#include "common/dispatch.hpp"

namespace tandem::cuda {
namespace {

using detail::MatrixReduceArgs;
using reduction::Index;
using reduction::kFullWarpMask;
using reduction::kWarpSize;

constexpr int kBlock = 256;
constexpr int kColumnWarps = 8;       // warps (rows in flight) per block of the column kernel
constexpr Index kBlockPerRow = 1024;  // rows at least this long get a block each, shorter ones a warp
// Rows at most this long get a thread each (measured on an H100 and an H200 at 200000 and 2^20 rows: a warp
// per row spends more on its shuffles than on the loads; an arg-reduction shuffles a value and an index, so
// it gains longer; from 48 floats a row, 192 bytes, other ops read faster by warps).
constexpr Index kThreadPerRow = 40;
constexpr Index kThreadPerArgRow = 64;
constexpr int kUnroll = 4;  // loads issued before their combines

template <Op O, class T>
using OperatorOf = typename detail::OpFor<O, T>::type;
template <Op O, class T>
using AccOf = typename OperatorOf<O, T>::Acc;

// Result i (of a vector of `len` elements) from its accumulator, as MatrixReduceArgs::out holds it
// (detail::store_result: the op table's result, or with `divide` double(sum) / len).
template <Op O, class T>
__device__ inline void store(AccOf<O, T> acc, Index len, bool divide, void* out, Index i) {
  detail::store_result<O, T>(acc, len, divide, out, i);
}

// This thread's combination of row[first], row[first + step], ... below len, in that order, with kUnroll
// loads in flight.
template <class Operator>
__device__ inline typename Operator::Acc accumulate_row(const typename Operator::In* __restrict__ row, Index first,
                                                        Index step, Index len) {
  using In = typename Operator::In;
  typename Operator::Acc acc = Operator::identity();
  Index j = first;
  for (; j + (kUnroll - 1) * step < len; j += kUnroll * step) {
    In v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = row[j + u * step];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc = Operator::combine(acc, Operator::load(v[u], j + u * step));
  }
  // Fewer than kUnroll of this thread's elements are left: loaded together too (short rows are all tail).
  In v[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
    if (j + u * step < len) v[u] = row[j + u * step];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
    if (j + u * step < len) acc = Operator::combine(acc, Operator::load(v[u], j + u * step));
  return acc;
}

template <Op O, class T>
__global__ void __launch_bounds__(kBlock)
    row_warp_kernel(const T* __restrict__ x, Index rows, Index cols, Index ld, bool divide, void* out) {
  using Operator = OperatorOf<O, T>;
  const int lane = threadIdx.x % kWarpSize;
  const Index warps = Index(gridDim.x) * (blockDim.x / kWarpSize);
  // r is the same for the whole warp, so every lane takes part in the shuffles.
  for (Index r = Index(blockIdx.x) * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize; r < rows; r += warps) {
    auto acc = accumulate_row<Operator>(x + r * ld, lane, kWarpSize, cols);
    acc = reduction::warp_reduce<Operator>(acc);
    if (lane == 0) store<O, T>(acc, cols, divide, out, r);
  }
}

template <Op O, class T>
__global__ void __launch_bounds__(kBlock)
    row_thread_kernel(const T* __restrict__ x, Index rows, Index cols, Index ld, bool divide, void* out) {
  using Operator = OperatorOf<O, T>;
  const Index threads = Index(gridDim.x) * blockDim.x;
  for (Index r = Index(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += threads)
    store<O, T>(accumulate_row<Operator>(x + r * ld, 0, 1, cols), cols, divide, out, r);
}

template <Op O, class T>
__global__ void __launch_bounds__(kBlock)
    row_block_kernel(const T* __restrict__ x, Index rows, Index cols, Index ld, bool divide, void* out) {
  using Operator = OperatorOf<O, T>;
  for (Index r = blockIdx.x; r < rows; r += gridDim.x) {
    auto acc = accumulate_row<Operator>(x + r * ld, threadIdx.x, blockDim.x, cols);
    acc = reduction::block_reduce<Operator>(acc);
    if (threadIdx.x == 0) store<O, T>(acc, cols, divide, out, r);
    __syncthreads();  // block_reduce's shared memory is written again for the next row
  }
}

// Rows [y * rows_per_split, ...) of 32 columns; blockDim = (32, kColumnWarps). With one split the block
// stores the results, otherwise its partial accumulators into partials[split * cols + j].
template <Op O, class T>
__global__ void __launch_bounds__(kWarpSize* kColumnWarps)
    column_kernel(const T* __restrict__ x, Index rows, Index cols, Index ld, Index rows_per_split, bool divide,
                  void* out, AccOf<O, T>* __restrict__ partials) {
  using Operator = OperatorOf<O, T>;
  using Acc = AccOf<O, T>;
  __shared__ Acc shared[kColumnWarps][kWarpSize];
  const Index j = Index(blockIdx.x) * kWarpSize + threadIdx.x;
  const Index r0 = Index(blockIdx.y) * rows_per_split;
  const Index r1 = rows - r0 < rows_per_split ? rows : r0 + rows_per_split;
  Acc acc = Operator::identity();
  if (j < cols) {
    const Index step = kColumnWarps;
    Index i = r0 + threadIdx.y;
    for (; i + (kUnroll - 1) * step < r1; i += kUnroll * step) {
      T v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = x[(i + u * step) * ld + j];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) acc = Operator::combine(acc, Operator::load(v[u], i + u * step));
    }
    for (; i < r1; i += step) acc = Operator::combine(acc, Operator::load(x[i * ld + j], i));
  }
  shared[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y != 0 || j >= cols) return;
#pragma unroll
  for (int w = 1; w < kColumnWarps; ++w) acc = Operator::combine(acc, shared[w][threadIdx.x]);
  if (gridDim.y == 1)
    store<O, T>(acc, rows, divide, out, j);
  else
    partials[Index(blockIdx.y) * cols + j] = acc;
}

// The splits of column j, in order.
template <Op O, class T>
__global__ void __launch_bounds__(kBlock) column_splits_kernel(const AccOf<O, T>* __restrict__ partials, Index splits,
                                                               Index rows, Index cols, bool divide, void* out) {
  using Operator = OperatorOf<O, T>;
  const Index j = Index(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  auto acc = Operator::identity();
  for (Index s = 0; s < splits; ++s) acc = Operator::combine(acc, partials[s * cols + j]);
  store<O, T>(acc, rows, divide, out, j);
}

// ---- Deterministic float sums -------------------------------------------------------------------------

// Per row: one warp per (row r, chunk c) writes the chunk's canonical value to values[r * values_ld + c]
// (the lanes and tree of canonical_sum.cuh) of the sum-like operator Op's loaded values (a 16-bit
// input's elements as floats; sumsq's squares). Later levels add chunk values (Op: SumOp of them).
template <class Op, class In = typename Op::In, class T = typename Op::Acc>
__global__ void __launch_bounds__(kBlock)
    canonical_row_chunks_kernel(const In* __restrict__ x, Index rows, Index cols, Index ld, T* __restrict__ values,
                                Index values_ld) {
  constexpr Index kChunk = detail::canonical::kChunk;
  const int lane = threadIdx.x % kWarpSize;
  const Index chunks = (cols + kChunk - 1) / kChunk;
  const Index warps = Index(gridDim.x) * (blockDim.x / kWarpSize);
  for (Index t = Index(blockIdx.x) * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize; t < rows * chunks;
       t += warps) {
    const Index r = t / chunks, c = t % chunks;
    const In* p = x + r * ld + c * kChunk;
    const Index len = cols - c * kChunk < kChunk ? cols - c * kChunk : kChunk;
    // Lane j adds elements j, j + 32, ... in order from -0.0 (the identity): canonical.hpp's step 2.
    T acc = accumulate_row<Op>(p, lane, kWarpSize, len);
#pragma unroll
    for (int s = kWarpSize / 2; s > 0; s /= 2) acc = Op::combine(acc, __shfl_down_sync(kFullWarpMask, acc, s));
    if (lane == 0) values[r * values_ld + c] = acc;
  }
}

// Per column: one thread per (column j, chunk c), its 32 lanes in registers. Writes the chunk value to
// values[c * cols + j], or, when the column is one chunk (Final), stores the result (a sum-like op's
// result is a sum: ResultKind::sum).
template <class Operator, bool Final, class In = typename Operator::In, class T = typename Operator::Acc>
__global__ void __launch_bounds__(kBlock)
    canonical_column_chunks_kernel(const In* __restrict__ x, Index rows, Index cols, Index ld, T* __restrict__ values,
                                   Index length, bool divide, void* out) {
  constexpr Index kChunk = detail::canonical::kChunk;
  constexpr int kLanes = int(detail::canonical::kLanes);
  const Index j = Index(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  const Index chunks = (rows + kChunk - 1) / kChunk;
  for (Index c = blockIdx.y; c < chunks; c += gridDim.y) {
    const In* p = x + c * kChunk * ld + j;
    const Index len = rows - c * kChunk < kChunk ? rows - c * kChunk : kChunk;
    T lane[kLanes];
#pragma unroll
    for (int q = 0; q < kLanes; ++q) lane[q] = Operator::identity();  // canonical.hpp: -0.0 (prod: 1)
    Index k = 0;
    for (; k + kLanes <= len; k += kLanes) {
#pragma unroll
      for (int q = 0; q < kLanes; ++q) lane[q] = Operator::combine(lane[q], Operator::load(p[(k + q) * ld], 0));
    }
#pragma unroll
    for (int q = 0; q < kLanes; ++q)
      if (k + q < len) lane[q] = Operator::combine(lane[q], Operator::load(p[(k + q) * ld], 0));
#pragma unroll
    for (int s = kLanes / 2; s > 0; s /= 2) {
#pragma unroll
      for (int q = 0; q < s; ++q) lane[q] = Operator::combine(lane[q], lane[q + s]);
    }
    if constexpr (Final)
      store<Op::sum, T>(lane[0], length, divide, out, j);
    else
      values[c * cols + j] = lane[0];
  }
}

// The finished per-row values (one per row) into the results.
template <class T>
__global__ void __launch_bounds__(kBlock)
    store_sums_kernel(const T* __restrict__ values, Index count, Index length, bool divide, void* out) {
  const Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) store<Op::sum, T>(values[i], length, divide, out, i);
}

// ---- Host side ------------------------------------------------------------------------------------------

// Blocks for `items` work items, per_block each (kernels that take one item per thread).
unsigned blocks_for(Index items, Index per_block) { return reduction::grid_size_for(items, per_block); }

// The grid of a grid-stride kernel: enough blocks for the items, at most those resident on the GPU.
template <class Kernel>
unsigned grid_stride_blocks(Kernel kernel, Index items, Index per_block) {
  const Index resident = reduction::resident_grid_size(reinterpret_cast<const void*>(kernel), kBlock, 0);
  return unsigned(std::max<Index>(1, std::min(resident, (items + per_block - 1) / per_block)));
}

// Level 0 reads the input (In, through the sum-like operator Op), later levels the previous level's chunk
// values (T, added as they are).
template <class Operator, class In = typename Operator::In>
void canonical_rows(const MatrixReduceArgs& a, const In* x, Index ld, void* out, Workspace& ws, cudaStream_t stream) {
  using detail::canonical::chunk_count;
  using T = typename Operator::Acc;
  const Index rows = a.rows, first = chunk_count(a.cols), second = chunk_count(first);
  T* scratch = static_cast<T*>(ws.get(std::size_t(rows * (first + second)) * sizeof(T) + 256));
  T* levels[2] = {scratch, scratch + rows * first};
  auto run_level = [&]<class LevelOp>(const typename LevelOp::In* src, Index n, Index src_ld, T* values, Index chunks) {
    const auto kernel = canonical_row_chunks_kernel<LevelOp>;
    const unsigned grid = grid_stride_blocks(kernel, rows * chunks, kBlock / kWarpSize);
    kernel<<<grid, kBlock, 0, stream>>>(src, rows, n, src_ld, values, chunks);
    TANDEM_CUDA_CHECK_LAUNCH();
  };
  Index n = a.cols;
  const T* previous = nullptr;
  for (int level = 0;; ++level) {
    const Index chunks = chunk_count(n);
    T* values = levels[level % 2];
    if (level == 0)
      run_level.template operator()<Operator>(x, n, ld, values, chunks);
    else
      run_level.template operator()<detail::PartialOp<Operator>>(previous, n, ld, values, chunks);
    if (chunks == 1) {
      store_sums_kernel<T><<<blocks_for(rows, kBlock), kBlock, 0, stream>>>(values, rows, a.cols, a.divide, out);
      TANDEM_CUDA_CHECK_LAUNCH();
      return;
    }
    previous = values;
    n = chunks;
    ld = chunks;
  }
}

template <class Operator, class In = typename Operator::In>
void canonical_columns(const MatrixReduceArgs& a, const In* x, Index ld, void* out, Workspace& ws,
                       cudaStream_t stream) {
  using detail::canonical::chunk_count;
  using T = typename Operator::Acc;
  const Index cols = a.cols, first = chunk_count(a.rows), second = chunk_count(first);
  T* scratch = static_cast<T*>(ws.get(std::size_t(cols * (first + second)) * sizeof(T) + 256));
  T* levels[2] = {scratch, scratch + cols * first};
  // Narrow matrices get narrower blocks, so that no thread idles past the last column.
  const int block = int(std::min<Index>(kBlock, (cols + kWarpSize - 1) / kWarpSize * kWarpSize));
  // One level; returns true when it stored the results.
  auto run_level = [&]<class LevelOp>(const typename LevelOp::In* src, Index n, Index src_ld, T* values) {
    const Index chunks = chunk_count(n);
    const dim3 grid(blocks_for(cols, block), unsigned(std::min<Index>(chunks, 65535)));
    if (chunks == 1)
      canonical_column_chunks_kernel<LevelOp, true>
          <<<grid, block, 0, stream>>>(src, n, cols, src_ld, static_cast<T*>(nullptr), a.rows, a.divide, out);
    else
      canonical_column_chunks_kernel<LevelOp, false>
          <<<grid, block, 0, stream>>>(src, n, cols, src_ld, values, a.rows, a.divide, out);
    TANDEM_CUDA_CHECK_LAUNCH();
    return chunks == 1;
  };
  Index n = a.rows;
  const T* previous = nullptr;
  for (int level = 0;; ++level) {
    T* values = levels[level % 2];
    if (level == 0 ? run_level.template operator()<Operator>(x, n, ld, values)
                   : run_level.template operator()<detail::PartialOp<Operator>>(previous, n, ld, values))
      return;
    previous = values;
    n = chunk_count(n);
    ld = cols;
  }
}

template <Op O, class T>
void per_row(const MatrixReduceArgs& a, const T* x, Index ld, void* out, cudaStream_t stream) {
  if (a.cols >= kBlockPerRow) {
    const auto kernel = row_block_kernel<O, T>;
    const unsigned grid = grid_stride_blocks(kernel, a.rows, 1);
    kernel<<<grid, kBlock, 0, stream>>>(x, a.rows, a.cols, ld, a.divide, out);
  } else if (a.cols <= (is_arg(O) ? kThreadPerArgRow : kThreadPerRow)) {
    const auto kernel = row_thread_kernel<O, T>;
    const unsigned grid = grid_stride_blocks(kernel, a.rows, kBlock);
    kernel<<<grid, kBlock, 0, stream>>>(x, a.rows, a.cols, ld, a.divide, out);
  } else {
    const auto kernel = row_warp_kernel<O, T>;
    const unsigned grid = grid_stride_blocks(kernel, a.rows, kBlock / kWarpSize);
    kernel<<<grid, kBlock, 0, stream>>>(x, a.rows, a.cols, ld, a.divide, out);
  }
  TANDEM_CUDA_CHECK_LAUNCH();
}

template <Op O, class T>
void per_column(const MatrixReduceArgs& a, const T* x, Index ld, void* out, Workspace& ws, cudaStream_t stream) {
  using Acc = AccOf<O, T>;
  const auto kernel = column_kernel<O, T>;
  const dim3 block(kWarpSize, kColumnWarps);
  const Index column_blocks = blocks_for(a.cols, kWarpSize);
  // Enough row splits for about two waves of blocks, each split at least 32 rows per warp.
  const Index target = 2 * Index(reduction::resident_grid_size(reinterpret_cast<const void*>(kernel), kBlock, 0));
  const Index most = std::max<Index>(1, std::min<Index>(65535, a.rows / (32 * kColumnWarps)));
  const Index wanted = std::clamp<Index>((target + column_blocks - 1) / column_blocks, 1, most);
  const Index rows_per_split = (a.rows + wanted - 1) / wanted;
  const Index splits = (a.rows + rows_per_split - 1) / rows_per_split;
  Acc* partials = splits > 1 ? static_cast<Acc*>(ws.get(std::size_t(splits * a.cols) * sizeof(Acc))) : nullptr;
  kernel<<<dim3(unsigned(column_blocks), unsigned(splits)), block, 0, stream>>>(x, a.rows, a.cols, ld, rows_per_split,
                                                                                a.divide, out, partials);
  TANDEM_CUDA_CHECK_LAUNCH();
  if (splits == 1) return;
  column_splits_kernel<O, T>
      <<<blocks_for(a.cols, kBlock), kBlock, 0, stream>>>(partials, splits, a.rows, a.cols, a.divide, out);
  TANDEM_CUDA_CHECK_LAUNCH();
}

}  // namespace

namespace {
__global__ void __launch_bounds__(kBlock)
    fill_kernel(unsigned char* out, Index count, unsigned long long value, int bytes) {
  const Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) memcpy(out + i * bytes, &value, std::size_t(bytes));
}
}  // namespace

void fill_empty_results(Op op, Dtype dtype, void* out, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  unsigned long long value = 0;  // the result's bits, as detail::store_result stores them (at most 8 bytes)
  detail::visit(dtype, [&]<class T>(std::type_identity<T>) {
    detail::visit_backend_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      detail::store_result<O, T>(detail::empty_acc<O, T>(), 0, false, &value, 0);
    });
  });
  if (value == 0) {
    TANDEM_CUDA_CHECK(cudaMemsetAsync(out, 0, std::size_t(count) * size_of(result_dtype(op, dtype)), stream));
    return;
  }
  fill_kernel<<<blocks_for(count, kBlock), kBlock, 0, stream>>>(static_cast<unsigned char*>(out), count, value,
                                                                int(size_of(result_dtype(op, dtype))));
  TANDEM_CUDA_CHECK_LAUNCH();
}

void reduce_matrix(const MatrixReduceArgs& a, const void* x, std::int64_t ld, void* out, Workspace& ws,
                   cudaStream_t stream) {
  const Index count = a.per == Per::row ? a.rows : a.cols, length = a.per == Per::row ? a.cols : a.rows;
  if (count == 0) return;
  if (length == 0) {  // the op's EmptyRule (the engine rejects an empty row of the other ops): 0 or 1
    fill_empty_results(a.op, a.dtype, out, count, stream);
    return;
  }
  detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    const T* data = static_cast<const T*>(x);
    detail::visit_backend_op(a.op, [&]<Op O>(std::integral_constant<Op, O>) {
      using Operator = OperatorOf<O, T>;
      if constexpr (detail::canonical_order<Operator>)
        if (a.deterministic)
          return a.per == Per::row ? canonical_rows<Operator>(a, data, ld, out, ws, stream)
                                   : canonical_columns<Operator>(a, data, ld, out, ws, stream);
      if (a.per == Per::row)
        per_row<O, T>(a, data, ld, out, stream);
      else
        per_column<O, T>(a, data, ld, out, ws, stream);
    });
  });
}

}  // namespace tandem::cuda
