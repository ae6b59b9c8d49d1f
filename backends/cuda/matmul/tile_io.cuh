// What the tiled matmul stages share: ceil_div, and guarded reads and writes of a short row segment.
// A segment is one 16-byte vector (4 floats or 2 doubles). It moves as one vector instruction when it
// lies inside the matrix and the caller proved 16-byte alignment (kAligned), otherwise element by
// element, reading zeros outside the matrix: a zero adds nothing to a dot product, so edge tiles need
// no special case in the inner loop. Nothing outside the rows x cols block is ever read or written
// (the padding between cols and ld may be uninitialised).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/matmul/params.cuh"
#include "backends/cuda/vector16.cuh"

namespace tandem::cuda::matmul_stages {

using cuda::kVectorWidth;
using cuda::Vector16;

// One vector from 16-byte aligned memory into v[] (shared or global memory).
__device__ __forceinline__ void load_vector(const float* p, float (&v)[4]) {
  const float4 q = *reinterpret_cast<const float4*>(p);
  v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
}
__device__ __forceinline__ void load_vector(const double* p, double (&v)[2]) {
  const double2 q = *reinterpret_cast<const double2*>(p);
  v[0] = q.x, v[1] = q.y;
}

// v[] into 16-byte aligned memory as one vector.
__device__ __forceinline__ void store_vector(float* p, const float (&v)[4]) {
  *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
}
__device__ __forceinline__ void store_vector(double* p, const double (&v)[2]) {
  *reinterpret_cast<double2*>(p) = make_double2(v[0], v[1]);
}

// How many of the kWidth elements starting `remaining` elements before the end of a row (or column)
// lie inside the matrix: remaining clamped to 0..kWidth.
template <class T>
__device__ __forceinline__ int segment_valid(std::int64_t remaining) {
  return remaining <= 0 ? 0 : remaining >= kVectorWidth<T> ? kVectorWidth<T> : static_cast<int>(remaining);
}

// v[j] = p[j] for j < valid, 0 for the rest. kAligned: p is 16-byte aligned (the launcher checked the
// base pointer and leading dimension), so a full segment is one vector load.
template <class T, bool kAligned>
__device__ __forceinline__ void load_segment(const T* p, int valid, T (&v)[kVectorWidth<T>], T fill = T(0)) {
  constexpr int kWidth = kVectorWidth<T>;
  if (kAligned && valid == kWidth) {
    load_vector(p, v);
  } else {
#pragma unroll
    for (int j = 0; j < kWidth; ++j) v[j] = j < valid ? p[j] : fill;
  }
}

// p[j] = v[j] for j < valid.
template <class T, bool kAligned>
__device__ __forceinline__ void store_segment(T* p, int valid, const T (&v)[kVectorWidth<T>]) {
  constexpr int kWidth = kVectorWidth<T>;
  if (kAligned && valid == kWidth) {
    store_vector(p, v);
  } else {
#pragma unroll
    for (int j = 0; j < kWidth; ++j)
      if (j < valid) p[j] = v[j];
  }
}

// ---- The global -> register half of a double-buffered tile pipeline --------------------------------
// register_tiled and the WMMA tensor-core stages load their tiles the same way: a block computes a
// kBlockRows x kBlockCols tile of C and walks along k one kTileK step at a time; each of its kThreads
// threads fetches kALoads 16-byte segments of the A tile (kBlockRows x kTileK) and kBLoads of the B tile
// (kTileK x kBlockCols) into registers (a_next, b_next), while the block computes on the tiles already
// in shared memory. Segments outside the matrices read as zeros (A's may be another fill: register_tiled
// uses -0.0, see there). Tiles wholly inside A and B skip the per-element bounds arithmetic.
template <class T, int kBlockRows, int kBlockCols, int kTileK, int kThreads, bool kAligned>
struct TileLoader {
  static constexpr int kWidth = kVectorWidth<T>;
  static constexpr int kAVectorsPerRow = kTileK / kWidth, kBVectorsPerRow = kBlockCols / kWidth;
  static constexpr int kALoads = kBlockRows * kAVectorsPerRow / kThreads;
  static constexpr int kBLoads = kTileK * kBVectorsPerRow / kThreads;
  static_assert(kALoads * kThreads == kBlockRows * kAVectorsPerRow, "A tile must split evenly over threads");
  static_assert(kBLoads * kThreads == kTileK * kBVectorsPerRow, "B tile must split evenly over threads");

  // Where segment l of this thread lies in the block's tiles: A(a_row, a_col .. + kWidth) and
  // B(b_row, b_col .. + kWidth), relative to the tile's first row and column.
  __device__ static int a_row(int l) { return (threadIdx.x + l * kThreads) / kAVectorsPerRow; }
  __device__ static int a_col(int l) { return (threadIdx.x + l * kThreads) % kAVectorsPerRow * kWidth; }
  __device__ static int b_row(int l) { return (threadIdx.x + l * kThreads) / kBVectorsPerRow; }
  __device__ static int b_col(int l) { return (threadIdx.x + l * kThreads) % kBVectorsPerRow * kWidth; }

  // The next tiles, on their way from global to shared memory.
  T a_next[kALoads][kWidth];
  T b_next[kBLoads][kWidth];

  // Where this thread's loads start for the block tile at (row0, col0); rows outside the matrix get a
  // valid count of 0.
  __device__ TileLoader(const GemmParams<T>& p, std::int64_t row0, std::int64_t col0)
      : ldb_(p.ldb), interior_(row0 + kBlockRows <= p.m && col0 + kBlockCols <= p.n) {
#pragma unroll
    for (int l = 0; l < kALoads; ++l) {
      const std::int64_t row = row0 + a_row(l);
      a_row_ok_[l] = row < p.m;
      a_src_[l] = p.a + (a_row_ok_[l] ? row : 0) * p.lda + a_col(l);
    }
#pragma unroll
    for (int l = 0; l < kBLoads; ++l) {
      const std::int64_t col = col0 + b_col(l);
      const int kk = b_row(l);
      b_cols_valid_[l] = segment_valid<T>(p.n - col);
      b_src_[l] = p.b + (kk < p.k ? kk : 0) * p.ldb + (b_cols_valid_[l] > 0 ? col : 0);
    }
  }

  // Loads the tiles that start k_left columns of A (rows of B) before the end of the matrix, then
  // steps the sources one tile along k (staying inside the matrices).
  __device__ __forceinline__ void load(std::int64_t k_left, T a_fill = T(0)) {
    const bool full = interior_ && k_left >= kTileK;
#pragma unroll
    for (int l = 0; l < kALoads; ++l) {
      const int kk = a_col(l);
      if (full)
        load_segment<T, kAligned>(a_src_[l], kWidth, a_next[l]);
      else
        load_segment<T, kAligned>(a_src_[l], a_row_ok_[l] ? segment_valid<T>(k_left - kk) : 0, a_next[l], a_fill);
      if (kk + kTileK < k_left) a_src_[l] += kTileK;  // stays inside A
    }
#pragma unroll
    for (int l = 0; l < kBLoads; ++l) {
      const int kk = b_row(l);
      if (full)
        load_segment<T, kAligned>(b_src_[l], kWidth, b_next[l]);
      else
        load_segment<T, kAligned>(b_src_[l], kk < k_left ? b_cols_valid_[l] : 0, b_next[l]);
      if (kk + kTileK < k_left) b_src_[l] += kTileK * ldb_;  // stays inside B
    }
  }

 private:
  const T* a_src_[kALoads];
  bool a_row_ok_[kALoads];
  const T* b_src_[kBLoads];
  int b_cols_valid_[kBLoads];
  std::int64_t ldb_;
  bool interior_;
};

}  // namespace tandem::cuda::matmul_stages
