// What the tiled matmul stages share: ceil_div, and guarded reads and writes of a short row segment.
// A segment is one 16-byte vector (4 floats or 2 doubles). It moves as one vector instruction when it
// lies inside the matrix and the caller proved 16-byte alignment (kAligned), otherwise element by
// element, reading zeros outside the matrix: a zero adds nothing to a dot product, so edge tiles need
// no special case in the inner loop. Nothing outside the rows x cols block is ever read or written
// (the padding between cols and ld may be uninitialised).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

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

// v[j] = p[j] for j < valid, `fill` for the rest: a segment of kVectorWidth<T> elements of S, T itself or (a mixed
// product's operand, T float) a 16-bit one (bfloat16, half), kept as stored: converted where it is used (as_compute),
// so that the load stays in flight until then. kAligned: p is aligned for a whole segment (the launcher checked the
// base pointer and leading dimension, vector_aligned), so a full segment is one vector load (16-bit: 8 bytes).
template <class T, bool kAligned, class S = T>
__device__ __forceinline__ void load_segment(const S* p, int valid, S (&v)[kVectorWidth<T>], S fill = S(0.0f)) {
  constexpr int kWidth = kVectorWidth<T>;
  if constexpr (std::is_same_v<S, T>) {
    if (kAligned && valid == kWidth) return load_vector(p, v);
  } else {
    static_assert(std::is_same_v<T, float> && sizeof(S) == 2, "a 16-bit element read as float");
    if (kAligned && valid == kWidth) {
      const uint2 w = *reinterpret_cast<const uint2*>(p);
      static_assert(sizeof(v) == sizeof(w));
      memcpy(v, &w, sizeof(w));
      return;
    }
  }
#pragma unroll
  for (int j = 0; j < kWidth; ++j) v[j] = j < valid ? p[j] : fill;
}

// x as the compute type T (a 16-bit S: converted to float, exactly).
template <class T, class S>
__device__ __forceinline__ T as_compute(S x) {
  if constexpr (std::is_same_v<S, T>)
    return x;
  else
    return float(x);
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

}  // namespace tandem::cuda::matmul_stages
