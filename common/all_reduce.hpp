// The deterministic all-reduce (tandem::mpi::Engine::all_reduce): its definition and the pieces that the
// host (engine/mpi.cpp, ranks that exchange through MPI) and the GPU (backends/cuda/nccl.cu, NCCL ranks)
// share, so that both give the same bits.
//
// Definition: element i of the result, on every rank, is
//     round_T(((x_0[i] + x_1[i]) + x_2[i]) + ... + x_{P-1}[i])
// the ranks' elements converted to the compute type (float for bfloat16 / half, else T), added left to
// right in rank order with IEEE round-to-nearest additions, and rounded once to T; a NaN result is T's
// canonical quiet NaN (positive, the first mantissa bit set). It depends only on the values and the number
// of ranks: not on the transport, NCCL's algorithm, protocol or channels, the topology or the message size.
//
// How it runs: the vector is cut into P slices (slices()), rank r owns slice r. Every rank sends each
// other rank that rank's slice of its vector (an all-to-all), the owner folds the P contributions to its
// slice in rank order (fold()), and every rank gathers every folded slice (an all-gather).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tandem/dtype.hpp"
#include "tandem/float16.hpp"

namespace tandem::detail::all_reduce {

// The slice each rank owns: `per` elements each (ceil(n / P) rounded up to 64 elements, so that the slices
// start aligned), the last ones shorter or empty.
struct Slices {
  std::size_t n = 0, per = 0;
  int ranks = 1;
  TANDEM_HOST_DEVICE std::size_t first(int r) const { return n < per * std::size_t(r) ? n : per * std::size_t(r); }
  TANDEM_HOST_DEVICE std::size_t count(int r) const { return first(r + 1) - first(r); }
  // Every slice the same length (an all-gather of equal pieces moves them).
  bool equal() const { return per * std::size_t(ranks) == n; }
};
inline Slices slices(std::size_t n, int ranks) {
  const std::size_t p = std::size_t(ranks), per = (n + p - 1) / p;
  return {n, (per + 63) / 64 * 64, ranks};
}

// T's canonical quiet NaN.
template <class T>
TANDEM_HOST_DEVICE T canonical_nan() {
  if constexpr (sizeof(T) == 2) {
    T r;
    r.bits = std::is_same_v<T, bfloat16> ? std::uint16_t(0x7FC0) : std::uint16_t(0x7E00);
    return r;
  } else if constexpr (sizeof(T) == 4) {
    return bits_float(0x7FC00000u);
  } else {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(0x7FF8000000000000LL);
#else
    return std::bit_cast<double>(0x7FF8000000000000ULL);
#endif
  }
}

// One element of the result from the ranks' elements, get(r) for rank r = 0 .. ranks - 1.
template <class T, class Get>
TANDEM_HOST_DEVICE T fold(int ranks, Get&& get) {
  using V = compute_t<T>;
  V acc = V(get(0));
  for (int r = 1; r < ranks; ++r) acc = acc + V(get(r));
  if (acc != acc) return canonical_nan<T>();
  return T(acc);
}

}  // namespace tandem::detail::all_reduce
