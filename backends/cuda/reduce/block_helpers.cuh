// Device helpers every reduction stage shares: 64-bit index math, guarded loads, the warp and block
// reductions built on __shfl_down_sync, and the vectorized grid-stride accumulation of the last stages.
//
// An operator Op (backends/cuda/common.cuh) provides In (element type), Acc (result type), identity(),
// load(In) -> Acc and combine(Acc, Acc) -> Acc. Every helper here combines only through Op, so that
// identities and the NaN / signed-zero rules of min and max are the same in every stage.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "backends/cuda/common.cuh"
#include "backends/cuda/vector16.cuh"

namespace tandem::cuda::reduction {

// Element indices are 64-bit everywhere: inputs can exceed 2^31 elements, and products such as
// blockIdx.x * blockDim.x * 8 overflow 32 bits long before that.
using detail::Index;

inline constexpr int kWarpSize = 32;
inline constexpr unsigned kFullWarpMask = 0xffffffffu;

// The block size of the shared-memory stages: a power of two (the trees halve it) and >= 64 (the
// unrolled last warp reads shared[tid + 32]).
inline constexpr unsigned kTextbookBlockSize = 256;

// Later passes of a multi-pass stage reduce the Acc partials of the previous pass with PartialOp<Op>
// (common/reduce_ops.hpp).
using detail::order_free;
using detail::PartialOp;

// ---- Indices -------------------------------------------------------------------------------------

__device__ inline Index global_thread_index() { return static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; }

__device__ inline Index grid_thread_count() { return static_cast<Index>(gridDim.x) * blockDim.x; }

// ---- Loads ---------------------------------------------------------------------------------------

// x[i * stride] converted to Acc, or the identity for lanes past the end (they must not change the result).
template <class Op>
__device__ inline typename Op::Acc load_or_identity(const typename Op::In* x, Index i, Index n, Index stride) {
  return i < n ? Op::load(x[i * stride], i) : Op::identity();
}

// This thread's `Chunks` elements when each block covers Chunks * block_size consecutive elements:
// first, first + block_size, ... (coalesced: neighbouring threads read neighbouring elements).
// All loads are issued before any combine so that they are in flight together.
template <class Op, int Chunks>
__device__ inline typename Op::Acc load_chunks(const typename Op::In* x, Index n, Index stride, unsigned block_size) {
  using Acc = typename Op::Acc;
  const Index first = static_cast<Index>(blockIdx.x) * (Index{Chunks} * block_size) + threadIdx.x;
  Acc values[Chunks];
#pragma unroll
  for (int c = 0; c < Chunks; ++c) values[c] = load_or_identity<Op>(x, first + Index{c} * block_size, n, stride);
  Acc result = values[0];
#pragma unroll
  for (int c = 1; c < Chunks; ++c) result = Op::combine(result, values[c]);
  return result;
}

// Dynamic shared memory as an array of T. One untyped declaration serves every T: `extern __shared__ T
// shared[]` inside a template would declare one symbol with a different type per T, which nvcc rejects.
template <class T>
__device__ inline T* dynamic_shared_memory() {
  extern __shared__ __align__(16) unsigned char dynamic_shared_bytes[];
  return reinterpret_cast<T*>(dynamic_shared_bytes);
}

// ---- Warp and block reductions through shuffles --------------------------------------------------

// __shfl_down_sync of an accumulator: arithmetic ones directly (there are 64-bit overloads: long,
// unsigned long, double), an arg-reduction's value and index and an exact sum's halves field by field.
template <class Acc>
__device__ inline Acc shuffle_down(const Acc& value, int offset) {
  if constexpr (std::is_integral_v<Acc> && sizeof(Acc) < 4)  // (8- and 16-bit values: through an int)
    return static_cast<Acc>(__shfl_down_sync(kFullWarpMask, static_cast<int>(value), offset));
  else
    return __shfl_down_sync(kFullWarpMask, value, offset);
}
template <class T>
__device__ inline detail::ArgAcc<T> shuffle_down(const detail::ArgAcc<T>& value, int offset) {
  return {shuffle_down(value.value, offset), __shfl_down_sync(kFullWarpMask, value.index, offset)};
}
__device__ inline detail::ExactSum shuffle_down(const detail::ExactSum& value, int offset) {
  return {__shfl_down_sync(kFullWarpMask, value.lo, offset), __shfl_down_sync(kFullWarpMask, value.hi, offset)};
}

// An accumulator another block wrote, read from L2 (__ldcg), never from this SM's L1. (__ldcg has no bool
// overload: a bool is read as its byte.)
template <class Acc>
__device__ inline Acc load_from_l2(const Acc* p) {
  if constexpr (std::is_same_v<Acc, bool>)
    return __ldcg(reinterpret_cast<const unsigned char*>(p)) != 0;
  else
    return __ldcg(p);
}
template <class T>
__device__ inline detail::ArgAcc<T> load_from_l2(const detail::ArgAcc<T>* p) {
  return {load_from_l2(&p->value), __ldcg(&p->index)};
}
__device__ inline detail::ExactSum load_from_l2(const detail::ExactSum* p) { return {__ldcg(&p->lo), __ldcg(&p->hi)}; }

// Lane 0 gets the combination of all 32 lanes' values. Every lane of the warp must call it.
template <class Op>
__device__ inline typename Op::Acc warp_reduce(typename Op::Acc value) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) value = Op::combine(value, shuffle_down(value, offset));
  return value;
}

// Thread 0 gets the combination of the whole block's values. blockDim.x must be a multiple of 32.
// Two calls in a row need a __syncthreads() between them (they share warp_totals).
template <class Op>
__device__ inline typename Op::Acc block_reduce(typename Op::Acc value) {
  using Acc = typename Op::Acc;
  __shared__ Acc warp_totals[kWarpSize];
  const unsigned lane = threadIdx.x % kWarpSize;
  const unsigned warp = threadIdx.x / kWarpSize;
  value = warp_reduce<Op>(value);
  if (lane == 0) warp_totals[warp] = value;
  __syncthreads();
  if (warp == 0) {
    const unsigned warps = blockDim.x / kWarpSize;
    value = lane < warps ? warp_totals[lane] : Op::identity();
    value = warp_reduce<Op>(value);
  }
  return value;
}

// ---- Vectorized grid-stride accumulation (warp_shuffle and single_pass) --------------------------

// Element types read as 16-byte vectors (the arithmetic and 16-bit ones; an arg-reduction's partials
// are not).
template <class T>
inline constexpr bool kVectorLoads = std::is_arithmetic_v<T> || is_storage_type_v<T>;

template <class T>
inline constexpr Index kElementsPerVector = kVectorLoads<T> ? kVectorWidth<T> : 1;

// How a contiguous input splits into units of one 16-byte vector's worth of elements, from index 0 (unit v
// holds elements v * W .. v * W + W - 1), and a scalar tail. Which thread adds which element, and in what
// order, depends on the indices alone: a 16-byte aligned input reads each unit as one vector, any other
// the same unit element by element (the same adds, so the same bits at any address). units == 0 means:
// plain (strided) scalar loads for everything.
struct VectorSplit {
  Index units = 0;
  bool aligned = false;  // the units are 16-byte vectors in memory
};

// Host side. Units only for stride 1 and an element-aligned pointer (cudaMalloc'd arrays always are 16-byte
// aligned; a pointer into the middle of one need not be).
template <class T>
inline VectorSplit split_for_vectors(const T* x, Index n, Index stride) {
  const auto address = reinterpret_cast<std::uintptr_t>(x);
  if (!kVectorLoads<T> || stride != 1 || address % sizeof(T) != 0) return {};
  return {n / kElementsPerVector<T>, address % 16 == 0};
}

// Unit v of x: one 16-byte load where x is 16-byte aligned, else element by element.
template <class In, class Vector = typename Vector16<In>::type>
__device__ inline Vector load_unit(const In* __restrict__ x, Index v, bool aligned) {
  if (aligned) return reinterpret_cast<const Vector*>(x)[v];
  Vector unit;
  const In* from = x + v * kElementsPerVector<In>;
  In* to = reinterpret_cast<In*>(&unit);
#pragma unroll
  for (int k = 0; k < int(kElementsPerVector<In>); ++k) to[k] = from[k];
  return unit;
}

// min and max of narrow integers (8 and 16 bits, bool) take a vector's extreme by the SIMD-in-a-word
// instructions (__vmaxs4 ...: 4 bytes or 2 halves per instruction; argmin and argmax: ArgKeys below).
// (An Op::combine per element ran 8-bit min and max at 0.86x float32's bytes per second on an H200.)
template <class Op>
struct NarrowExtreme {
  static constexpr bool kApplies = false;
};
template <class T>
struct NarrowExtreme<detail::MinOp<T>> {
  static constexpr bool kApplies = true, kMax = false;
};
template <class T>
struct NarrowExtreme<detail::MaxOp<T>> {
  static constexpr bool kApplies = true, kMax = true;
};

// Lane by lane, the larger (Max) or smaller of a and b: 4 lanes of 8 bits or 2 of 16, signed as In is.
template <class In, bool Max>
__device__ inline std::uint32_t lanes_extreme(std::uint32_t a, std::uint32_t b) {
  if constexpr (sizeof(In) == 1 && std::is_signed_v<In>)
    return Max ? __vmaxs4(a, b) : __vmins4(a, b);
  else if constexpr (sizeof(In) == 1)
    return Max ? __vmaxu4(a, b) : __vminu4(a, b);
  else if constexpr (std::is_signed_v<In>)
    return Max ? __vmaxs2(a, b) : __vmins2(a, b);
  else
    return Max ? __vmaxu2(a, b) : __vminu2(a, b);
}

// acc combined with the extreme of the 16 bytes of narrow integers `words` (elements first, first + 1, ...).
template <class Op>
__device__ inline typename Op::Acc combine_narrow_extreme(typename Op::Acc acc, const std::uint32_t (&words)[4],
                                                          Index first) {
  using In = typename Op::In;
  constexpr bool kMax = NarrowExtreme<Op>::kMax;
  constexpr unsigned kLaneBits = 8 * sizeof(In), kLanes = 32 / kLaneBits;
  std::uint32_t m =
      lanes_extreme<In, kMax>(lanes_extreme<In, kMax>(words[0], words[1]), lanes_extreme<In, kMax>(words[2], words[3]));
  if constexpr (kLanes == 4) m = lanes_extreme<In, kMax>(m, m >> 16);  // (the upper lanes are left unused)
  m = lanes_extreme<In, kMax>(m, m >> kLaneBits);                      // lane 0: the extreme
  In best;
  memcpy(&best, &m, sizeof(In));
  return Op::combine(acc, Op::load(best, first));
}

// v holds elements first, first + 1, ... of the input.
template <class Op, class Vector>
__device__ inline typename Op::Acc combine_vector(typename Op::Acc acc, const Vector& v, Index first) {
  using In = typename Op::In;
  if constexpr (is_storage_type_v<In>) {  // 8 elements, two per 32-bit word, low half first
    static_assert(sizeof(In) == 2 && kElementsPerVector<In> == 8, "combine_vector: 8 16-bit elements per vector");
    const std::uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      acc = Op::combine(acc, Op::load(In::from_bits(std::uint16_t(words[q] & 0xffffu)), first + 2 * q));
      acc = Op::combine(acc, Op::load(In::from_bits(std::uint16_t(words[q] >> 16)), first + 2 * q + 1));
    }
  } else if constexpr (std::is_integral_v<In> && sizeof(In) < 4) {  // 16 or 8 narrow integers: the vector's bytes
    static_assert(sizeof(Vector) == 16, "combine_vector: 16-byte vectors (Vector16)");
    In e[kElementsPerVector<In>];
    memcpy(e, &v, 16);
    if constexpr (std::is_same_v<typename Op::Acc, detail::ExactSum> && !detail::load_transforms<Op>) {
      // A sum: the vector's elements added in an int first (exact: at most 16 of 16 bits), then one exact add
      // (an exact add per element made 8-bit sums 0.46x float32's bytes per second on an H100).
      std::int32_t part = 0;
#pragma unroll
      for (int q = 0; q < int(kElementsPerVector<In>); ++q) part += std::int32_t(e[q]);
      acc = Op::combine(acc, detail::ExactSum::of(part));
    } else {
#pragma unroll
      for (int q = 0; q < int(kElementsPerVector<In>); ++q) acc = Op::combine(acc, Op::load(e[q], first + q));
    }
  } else if constexpr (std::is_integral_v<In> && std::is_same_v<Vector, uint4>) {  // 4 uint32 as uint4
    acc = Op::combine(acc, Op::load(static_cast<In>(v.x), first));
    acc = Op::combine(acc, Op::load(static_cast<In>(v.y), first + 1));
    acc = Op::combine(acc, Op::load(static_cast<In>(v.z), first + 2));
    acc = Op::combine(acc, Op::load(static_cast<In>(v.w), first + 3));
  } else if constexpr (order_free<Op> && kElementsPerVector<In> == 4) {  // a tree: a shorter dependency chain
    static_assert(sizeof(Vector) == 16, "combine_vector: 16-byte vectors (Vector16)");
    const auto xy = Op::combine(Op::load(static_cast<In>(v.x), first), Op::load(static_cast<In>(v.y), first + 1));
    const auto zw = Op::combine(Op::load(static_cast<In>(v.z), first + 2), Op::load(static_cast<In>(v.w), first + 3));
    acc = Op::combine(acc, Op::combine(xy, zw));
  } else {
    static_assert(kElementsPerVector<In> == 2 || kElementsPerVector<In> == 4,
                  "combine_vector: vectors of 2 or 4 elements (x, y, z, w); a type of another width needs its branch");
    acc = Op::combine(acc, Op::load(static_cast<In>(v.x), first));
    acc = Op::combine(acc, Op::load(static_cast<In>(v.y), first + 1));
    if constexpr (kElementsPerVector<In> == 4) {
      acc = Op::combine(acc, Op::load(static_cast<In>(v.z), first + 2));
      acc = Op::combine(acc, Op::load(static_cast<In>(v.w), first + 3));
    }
  }
  return acc;
}

// ---- argmin / argmax of 8- and 16-bit types: the extreme's value first, its position once --------------
//
// Each element maps to an unsigned order key of its own width, whose order is ArgOp::before's without the
// index: a signed integer with its sign bit flipped, a bfloat16 or half by its sign-magnitude bits (+0 after
// -0, NaN the first of all). A thread keeps, per load in flight, the best key so far and the first unit that
// holds it (keys by SIMD-in-a-word instructions, one compare per unit); only at the end does it read each
// kept unit again for the first position of its key. (Finding the position in every unit ran 8-bit argmax
// at 0.62x float32's bytes per second on an H200, bfloat16 at 0.60x.)
template <class Op>
struct ArgKeys {
  static constexpr bool kApplies = false;
};
template <class T, bool Max>
requires((std::is_integral_v<T> && sizeof(T) < 4) || is_storage_type_v<T>) struct ArgKeys<detail::ArgOp<T, Max>> {
  static constexpr bool kApplies = true, kMax = Max;
  static constexpr unsigned kLaneBits = 8 * sizeof(T), kLanes = 32 / kLaneBits;
  static constexpr std::uint32_t kLaneMask = (std::uint32_t{1} << kLaneBits) - 1;
  static constexpr std::uint32_t kEachLane = kLanes == 4 ? 0x01010101u : 0x00010001u;
  using Lane = std::conditional_t<kLanes == 4, std::uint8_t, std::uint16_t>;  // keys compare unsigned

  // The keys of the lanes of one 32-bit word of the input.
  __device__ static std::uint32_t keys(std::uint32_t w) {
    if constexpr (is_storage_type_v<T>) {
      constexpr std::uint32_t kInf = std::is_same_v<T, bfloat16> ? 0x7f80u : 0x7c00u;
      const std::uint32_t sign = ((w >> 15) & kEachLane) * 0xffffu;  // all ones in the negative lanes
      std::uint32_t k = w ^ (sign | 0x80008000u);                    // negative: ~bits; else: bits + 0x8000
      // Bit 15 of a lane of magnitude + (0x7fff - inf) is set exactly when the magnitude is above inf: a NaN.
      const std::uint32_t nan = ((((w & 0x7fff7fffu) + (0x7fffu - kInf) * kEachLane) >> 15) & kEachLane) * 0xffffu;
      return Max ? k | nan : k & ~nan;
    } else if constexpr (std::is_signed_v<T>) {
      return w ^ (kEachLane << (kLaneBits - 1));
    } else {
      return w;
    }
  }
  // The best key among the four words' lanes.
  __device__ static std::uint32_t best_key(const std::uint32_t (&k)[4]) {
    std::uint32_t m =
        lanes_extreme<Lane, Max>(lanes_extreme<Lane, Max>(k[0], k[1]), lanes_extreme<Lane, Max>(k[2], k[3]));
    if constexpr (kLanes == 4) m = lanes_extreme<Lane, Max>(m, m >> 16);  // (the upper lanes are left unused)
    return lanes_extreme<Lane, Max>(m, m >> kLaneBits) & kLaneMask;
  }
  // The first lane of the four words whose key is `key` (one must be).
  __device__ static int first_with(const std::uint32_t (&k)[4], std::uint32_t key) {
    int at = 0;
#pragma unroll
    for (int q = 3; q >= 0; --q) {
      const std::uint32_t equal = kLanes == 4 ? __vcmpeq4(k[q], key * kEachLane) : __vcmpeq2(k[q], key * kEachLane);
      if (equal != 0) at = q * int(kLanes) + (__ffs(int(equal)) - 1) / int(kLaneBits);
    }
    return at;
  }
  template <class Vector>
  __device__ static void unit_keys(const Vector& v, std::uint32_t (&k)[4]) {
    static_assert(sizeof(Vector) == 16, "ArgKeys: 16-byte vectors");
    memcpy(k, &v, 16);
#pragma unroll
    for (int q = 0; q < 4; ++q) k[q] = keys(k[q]);
  }
};

// This thread's argmin / argmax over the vector units of split (ArgKeys<Op>::kApplies).
template <class Op, int Unroll>
__device__ inline typename Op::Acc accumulate_arg_keys(const typename Op::In* __restrict__ x, VectorSplit split,
                                                       Index thread, Index threads) {
  using In = typename Op::In;
  using Keys = ArgKeys<Op>;
  using Vector = typename Vector16<In>::type;
  constexpr Index W = kElementsPerVector<In>;
  // Before any key: -1 for the max, past every key for the min, so that the first unit always replaces it.
  constexpr std::int32_t kNone = Keys::kMax ? -1 : std::int32_t(Keys::kLaneMask) + 1;
  std::int32_t best[Unroll];
  Index best_unit[Unroll];
#pragma unroll
  for (int u = 0; u < Unroll; ++u) best[u] = kNone, best_unit[u] = -1;
  // A unit replaces a slot's best only when strictly better: the slot keeps its first unit of the best key.
  const auto consider = [&](int u, const Vector& loaded, Index unit) {
    std::uint32_t k[4];
    Keys::unit_keys(loaded, k);
    const std::int32_t key = std::int32_t(Keys::best_key(k));
    if (Keys::kMax ? key > best[u] : key < best[u]) best[u] = key, best_unit[u] = unit;
  };
  Index v = thread;
  for (; v + (Unroll - 1) * threads < split.units; v += Unroll * threads) {
    Vector loaded[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) loaded[u] = load_unit<In>(x, v + u * threads, split.aligned);
#pragma unroll
    for (int u = 0; u < Unroll; ++u) consider(u, loaded[u], v + u * threads);
  }
  for (; v < split.units; v += threads) consider(0, load_unit<In>(x, v, split.aligned), v);  // (after slot 0's)

  typename Op::Acc acc = Op::identity();
#pragma unroll
  for (int u = 0; u < Unroll; ++u) {
    if (best_unit[u] < 0) continue;
    std::uint32_t k[4];
    Keys::unit_keys(load_unit<In>(x, best_unit[u], split.aligned), k);
    const Index i = best_unit[u] * W + Keys::first_with(k, std::uint32_t(best[u]));
    acc = Op::combine(acc, Op::load(x[i], i));
  }
  return acc;
}

// This thread's min / max of narrow integers over the vector units of split: per load in flight, four words
// of running lane extremes (one SIMD-in-a-word instruction per word of a unit), reduced to one value at the
// end. (Reducing each unit to its extreme first ran 8-bit max at 0.89x float32's bytes per second on an H200.)
template <class Op>
inline constexpr bool kNarrowLanes = NarrowExtreme<Op>::kApplies&& std::is_integral_v<typename Op::In> &&
                                     sizeof(typename Op::In) < 4;

template <class Op, int Unroll>
__device__ inline typename Op::Acc accumulate_narrow_lanes(const typename Op::In* __restrict__ x, VectorSplit split,
                                                           Index thread, Index threads) {
  using In = typename Op::In;
  using Vector = typename Vector16<In>::type;
  constexpr bool kMax = NarrowExtreme<Op>::kMax;
  constexpr unsigned kLaneBits = 8 * sizeof(In), kLanes = 32 / kLaneBits;
  constexpr std::uint32_t kEachLane = kLanes == 4 ? 0x01010101u : 0x00010001u;
  // Every lane the identity: the type's least value for max, its greatest for min.
  constexpr In kIdentity = kMax ? std::numeric_limits<In>::lowest() : std::numeric_limits<In>::max();
  constexpr std::uint32_t kStart =
      std::uint32_t(static_cast<std::conditional_t<kLanes == 4, std::uint8_t, std::uint16_t>>(kIdentity)) * kEachLane;
  std::uint32_t run[Unroll][4];
#pragma unroll
  for (int u = 0; u < Unroll; ++u)
#pragma unroll
    for (int q = 0; q < 4; ++q) run[u][q] = kStart;
  const auto take = [&](int u, const Vector& loaded) {
    std::uint32_t w[4];
    memcpy(w, &loaded, 16);
#pragma unroll
    for (int q = 0; q < 4; ++q) run[u][q] = lanes_extreme<In, kMax>(run[u][q], w[q]);
  };
  Index v = thread;
  for (; v + (Unroll - 1) * threads < split.units; v += Unroll * threads) {
    Vector loaded[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) loaded[u] = load_unit<In>(x, v + u * threads, split.aligned);
#pragma unroll
    for (int u = 0; u < Unroll; ++u) take(u, loaded[u]);
  }
  for (; v < split.units; v += threads) take(0, load_unit<In>(x, v, split.aligned));
#pragma unroll
  for (int u = 1; u < Unroll; ++u)
#pragma unroll
    for (int q = 0; q < 4; ++q) run[0][q] = lanes_extreme<In, kMax>(run[0][q], run[u][q]);
  return combine_narrow_extreme<Op>(Op::identity(), run[0], 0);
}

// This thread's combination of its share of x[0], x[stride], ..., x[(n-1)*stride], walking the input
// with the whole grid as the stride (coalesced, any grid size covers any n). Each loop step issues
// Unroll independent loads before combining, so that several are in flight per thread.
template <class Op, int Unroll>
__device__ inline typename Op::Acc accumulate_grid_stride(const typename Op::In* __restrict__ x, Index n, Index stride,
                                                          VectorSplit split) {
  using In = typename Op::In;
  using Acc = typename Op::Acc;
  const Index thread = global_thread_index();
  const Index threads = grid_thread_count();
  Acc acc = Op::identity();

  if constexpr (kVectorLoads<In>) {
    if (split.units > 0) {
      using Vector = typename Vector16<In>::type;
      constexpr Index W = kElementsPerVector<In>;
      if constexpr (ArgKeys<Op>::kApplies) {
        acc = accumulate_arg_keys<Op, Unroll>(x, split, thread, threads);
      } else if constexpr (kNarrowLanes<Op>) {
        acc = accumulate_narrow_lanes<Op, Unroll>(x, split, thread, threads);
      } else {
        Index v = thread;
        // Operators that give the same bits in any order keep one accumulator per load in flight (no
        // dependency chain across them); the others (floating-point sums) one, in index order per thread.
        constexpr int kAccs = order_free<Op> ? Unroll : 1;
        Acc accs[kAccs];
#pragma unroll
        for (int u = 0; u < kAccs; ++u) accs[u] = Op::identity();
        for (; v + (Unroll - 1) * threads < split.units; v += Unroll * threads) {
          Vector loaded[Unroll];
#pragma unroll
          for (int u = 0; u < Unroll; ++u) loaded[u] = load_unit<In>(x, v + u * threads, split.aligned);
#pragma unroll
          for (int u = 0; u < Unroll; ++u)
            accs[u % kAccs] = combine_vector<Op>(accs[u % kAccs], loaded[u], (v + u * threads) * W);
        }
        acc = accs[0];
#pragma unroll
        for (int u = 1; u < kAccs; ++u) acc = Op::combine(acc, accs[u]);
        for (; v < split.units; v += threads) acc = combine_vector<Op>(acc, load_unit<In>(x, v, split.aligned), v * W);
      }
      // The tail: fewer than one unit's worth, read as scalars.
      for (Index i = split.units * W + thread; i < n; i += threads) acc = Op::combine(acc, Op::load(x[i], i));
      return acc;
    }
  }

  Index i = thread;
  for (; i + (Unroll - 1) * threads < n; i += Unroll * threads) {
    In loaded[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) loaded[u] = x[(i + u * threads) * stride];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) acc = Op::combine(acc, Op::load(loaded[u], i + u * threads));
  }
  for (; i < n; i += threads) acc = Op::combine(acc, Op::load(x[i * stride], i));
  return acc;
}

}  // namespace tandem::cuda::reduction
