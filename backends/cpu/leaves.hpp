// The leaves of the CPU backend's reductions (cpu_backend.cpp): each reduces one contiguous or strided
// range on one thread, in SIMD lanes the compiler vectorises (this file is compiled with -march=native
// where TANDEM_NATIVE is on).
//   min_max_leaf      min / max (NaN-propagating, -0.0 before +0.0)
//   integer_sum_leaf  exact integer sums (ExactSum)
//   float_sum_leaf    float and double sums, and float sums of bfloat16 / half
//   square_sum_leaf   sums of squares (sumsq)
//   arg_leaf          argmin / argmax
//   generic_leaf      any op: its operator's load and combine, element by element (an op of the table
//                     without a leaf of its own runs correctly, if not at SIMD speed)
// Every leaf adds in an order set by the indices alone (lanes of index modulo W), never by the address.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>
#if defined(__F16C__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "common/reduce_ops.hpp"
#include "tandem/float16.hpp"

namespace tandem::detail::cpu_leaves {

// x[0 .. W) as floats in out[0 .. W): bfloat16 by a shift (vectorised by the compiler), half by the
// F16C conversion instruction where the build has it (AVX-512's 16-wide form where GCC tunes for AMD Zen;
// exact for every number, subnormals included; a signalling NaN comes out quiet, where float16.hpp's
// conversion keeps its bits: NaN either way) and by float16.hpp's conversion otherwise.
template <int W>
inline void widen(const bfloat16* x, float* out) {
  for (int j = 0; j < W; ++j) out[j] = detail::bfloat16_to_float(x[j].bits);
}
// Built for AMD Zen with AVX-512 by GCC: half converts sixteen at a time, into one 512-bit store (widen below;
// narrow.hpp's masked pieces).
#if defined(__AVX512F__) && !defined(__clang__) && \
    (defined(__tune_znver3__) || defined(__tune_znver4__) || defined(__tune_znver5__))
#define TANDEM_CPU_HALF_512 1
#endif
template <int W>
inline void widen(const half* x, float* out) {
#if defined(TANDEM_CPU_HALF_512)
  // Built for AMD Zen with AVX-512, sixteen at a time: GCC's Zen tunings read `out` back in 512-bit vectors,
  // and a 512-bit load of two 256-bit stores misses store forwarding (a half sum ran at 0.11x float's bytes
  // per second on a Zen 4 core with GCC 12, and at 1.06x with this). Intel's tunings read it in 256-bit
  // vectors, and there the 256-bit conversion below was measured as fast or faster. (Clang: not measured.)
  if constexpr (W % 16 == 0) {
    for (int j = 0; j < W; j += 16)
      // (the zero-masking form with every lane kept: GCC 12's _mm512_cvtph_ps warns of its own undefined
      // pass-through register, -Wuninitialized; the same instruction)
      _mm512_storeu_ps(out + j, _mm512_maskz_cvtph_ps(__mmask16(0xFFFF),
                                                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + j))));
  } else
#endif
  {
#if defined(__F16C__)
    static_assert(W % 8 == 0);
    for (int j = 0; j < W; j += 8)
      _mm256_storeu_ps(out + j, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + j))));
#else
    for (int j = 0; j < W; ++j) out[j] = float(x[j]);
#endif
  }
}

// Any other element type, as it converts (what the leaves' generic loops do; it lets one `if constexpr`
// branch name widen for every type).
template <int W, class In, class T>
inline void widen(const In* x, T* out) {
  for (int j = 0; j < W; ++j) out[j] = T(x[j]);
}

// `count` contiguous elements of x as floats into out, 16 at a time where they fill 16 (widen), exact either way.
template <class In>
inline void widen_run(const In* x, std::int64_t count, float* out) {
  std::int64_t j = 0;
  for (; j + 16 <= count; j += 16) widen<16>(x + j, out + j);
  for (; j < count; ++j) out[j] = float(x[j]);
}

// A hint to bring the cache lines of [p + kAhead, p + kAhead + Bytes) into L1, kAhead = 2 KiB past p (a
// prefetch never faults, past the end of an array included). Loops that widen each element (the 16-bit
// floats, the integer sums) do more work per byte than a plain read, and on the Xeon hosts of the H100 and
// H200 the hardware prefetcher then fell behind them: a bfloat16 sum read at 0.56-0.68x float's bytes per
// second on one core, and at float's with its lines fetched 2 KiB ahead; on 16 cores the 16-bit floats and
// the narrow integer sums went from 0.67-0.88x float's rate to 0.96-1.12x. (The address is formed as an
// integer: a pointer past the end of the array would be undefined behaviour.)
template <std::int64_t Bytes>
[[gnu::always_inline]] inline void prefetch_ahead(const void* p) {
  constexpr std::uintptr_t kAhead = 2048;
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(p) + kAhead;
  for (std::uintptr_t b = 0; b < std::uintptr_t(Bytes); b += 64)
    __builtin_prefetch(reinterpret_cast<const void*>(at + b), 0, 3);
}

// fma(v, 0, acc): acc while v is finite, NaN from an infinity or a NaN on (one instruction where the
// build has FMA; a multiply and an add otherwise, never a call to the library's fma).
template <class T>
inline T nan_detector(T v, T acc) {
#if defined(__FMA__)
  return std::fma(v, T(0), acc);
#else
  return acc + v * T(0);
#endif
}

// The bits of a T (for compares that tell -0.0 from +0.0).
template <class T>
using BitsOf =
    std::conditional_t<sizeof(T) == 1, std::uint8_t,
                       std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                          std::conditional_t<sizeof(T) == 4, std::uint32_t,
                                                             std::conditional_t<sizeof(T) == 8, std::uint64_t, void>>>>;
template <class T>
BitsOf<T> bits_of(T v) {
  return std::bit_cast<BitsOf<T>>(v);
}

// The index of the first of x[0], x[stride], ..., x[(len - 1) * stride], read as T, for which match(v)
// holds, or len. A contiguous range counts the matches of 128 elements at a time (vectorised) and looks
// one by one only from the first block with one (one by one throughout made float argmin 20 times slower
// than min on a Zen 4 core); a strided one looks one by one.
template <class T, class In, class Match>
std::int64_t first_match(const In* x, std::int64_t len, std::int64_t stride, Match match) {
  constexpr int W = 128;
  std::int64_t k = 0;
  if (stride == 1)
    for (; k + W <= len; k += W) {
      int count = 0;
      if constexpr (std::is_same_v<In, T>) {  // (read in place: a copy cost int32 argmin 12% on Zen 4)
        for (int j = 0; j < W; ++j) count += match(x[k + j]);
      } else {
        T v[W];
        widen<W>(x + k, v);
        for (int j = 0; j < W; ++j) count += match(v[j]);
      }
      if (count) break;
    }
  for (; k < len; ++k)
    if (match(T(x[k * stride]))) return k;
  return len;
}

// Min or max of x[0], x[stride], ..., x[(len - 1) * stride], by the rules of Op::combine.
// It exists because Eigen's NaN-propagating minCoeff/maxCoeff<PropagateNaN> (a compare, a min and a
// blend in the chain of each of only two accumulators) does not reach memory bandwidth: with AVX-512
// it ran at a third of an Eigen sum's speed per core, and at 0.69x of a plain read on 16 cores. Here
// W lanes (4 AVX-512 or 8 AVX2 registers) take a plain min/max (vminps, vpminsd), which a NaN leaves
// unchanged. For floating types, `finite` lanes take fma(v, 0, finite) (nan_detector): they stay zero
// while they see only finite values and turn NaN at an infinity or a NaN, one fused instruction per
// vector off the min/max chain (tracking NaNs with a compare and a masked move instead ran at half this
// speed per core on the H200's Xeon host). Only a leaf with an infinity or a NaN then takes a second
// pass for the first NaN. Contiguous 16-bit elements are converted W at a time (widen).
template <class Op>
typename Op::Acc min_max_leaf(const typename Op::In* x, std::int64_t len, std::int64_t stride) {
  using In = typename Op::In;
  using T = typename Op::Acc;  // the element type, or float for a 16-bit input (converted as it is read)
  constexpr bool is_min = std::is_same_v<Op, MinOp<In>>;
  constexpr bool floating = std::is_floating_point_v<T>;
  constexpr int W = 256 / sizeof(T);
  T lane[W], finite[W] = {};
  std::fill_n(lane, W, Op::identity());
  // Zeros: a lane keeps the first of equal values, so with zeros of both signs the lanes may hold either.
  // By reduce_ops' rule (-0.0 before +0.0 in min, +0.0 before -0.0 in max) a zero result is `preferred`
  // if the leaf holds one. After each chunk of kChunk elements whose running result is a zero, the chunk
  // is searched for `preferred` (first_match, from L1; a chunk holding a zero always ends with a zero
  // running result when the leaf's result is a zero). (A search over the whole leaf at the end read data
  // >= 0 with a zero twice from memory.)
  const T preferred = is_min ? T(-0.0) : T(0.0);
  const auto is_preferred = [&](T v) { return bits_of(v) == bits_of(preferred); };
  bool holds_preferred = false;
  constexpr std::int64_t kChunk = 4096;
  std::int64_t i = 0;
  auto lanes = [&](auto contiguous) {  // a contiguous leaf has a loop of its own, which the compiler vectorises
    const std::int64_t step = decltype(contiguous)::value ? 1 : stride;
    while (i + W <= len) {
      const std::int64_t start = i, end = std::min(len, i + kChunk);
      for (; i + W <= end; i += W) {
        if constexpr (is_storage_type_v<In> && decltype(contiguous)::value) {
          T v[W];
          prefetch_ahead<W * sizeof(In)>(x + i);
          widen<W>(x + i, v);
          for (int j = 0; j < W; ++j) {
            lane[j] = (is_min ? v[j] < lane[j] : v[j] > lane[j]) ? v[j] : lane[j];
            finite[j] = nan_detector(v[j], finite[j]);
          }
        } else {
          for (int j = 0; j < W; ++j) {
            const T v = Op::load(x[(i + j) * step], 0);
            lane[j] = (is_min ? v < lane[j] : v > lane[j]) ? v : lane[j];
            if constexpr (floating) finite[j] = nan_detector(v, finite[j]);
          }
        }
      }
      if constexpr (floating) {  // the running result is a zero: a lane is zero and none is beyond it
        int zero = 0, beyond = 0;
        for (int j = 0; j < W; ++j) zero += lane[j] == T(0), beyond += is_min ? lane[j] < T(0) : lane[j] > T(0);
        if (zero && !beyond && !holds_preferred)
          holds_preferred = first_match<T>(x + start * step, i - start, step, is_preferred) < i - start;
      }
    }
  };
  if (stride == 1)
    lanes(std::true_type{});
  else
    lanes(std::false_type{});
  T r = Op::identity();
  for (int j = 0; j < W; ++j) r = Op::combine(r, lane[j]);
  if constexpr (floating)
    if (r == T(0)) r = holds_preferred ? preferred : -preferred;
  for (; i < len; ++i) r = Op::combine(r, Op::load(x[i * stride], 0));  // (combine applies the zero rule)
  if constexpr (floating) {
    T any = 0;
    for (int j = 0; j < W; ++j) any += finite[j];
    if (is_nan(any))  // an infinity or a NaN: a NaN wins
      if (const std::int64_t k = first_match<T>(x, len, stride, [](T v) { return v != v; }); k < len)
        return Op::load(x[k * stride], 0);
  }
  return r;
}

// The exact sum (ExactSum) of the integers x[0], x[stride], ..., x[(len - 1) * stride], in W lanes. Eigen's
// cast<uint64_t>().sum() widened one element at a time (0.61x of a plain read on 16 cores for int32), and
// 64-bit lanes of sign-extended elements (vpmovsxdq) are limited by the one port that widens on the H200's
// Xeon host (29 GB/s per core). A contiguous int32 leaf instead adds, in 32-bit lanes, the elements
// (wrapping) and their high 16 bits (signed, an arithmetic shift): the sum of the low 16 bits is what the
// wrapped sum leaves modulo 2^32, as long as it stays below 2^32, so each lane's exact sum comes back from
// the two (a shift and two adds per vector, on any vector port: 48 GB/s per core there); the lanes go into
// the exact sum every 2^15 elements per lane. Contiguous 8- and 16-bit elements add in 32-bit lanes, exact for
// 2^15 of them per lane. Other leaves (64-bit elements, strides) add each element's
// high 32 bits and low 32 bits in 64-bit lanes, exact for 2^31 elements per lane, and put them into the
// exact sum as high * 2^32 + low.
template <class T>
ExactSum integer_sum_leaf(const T* x, std::int64_t len, std::int64_t stride) {
  constexpr int W = 32;
  ExactSum r;
  std::int64_t i = 0;
  if (sizeof(T) <= 2 && stride == 1) {  // 8- and 16-bit integers: exact in 32-bit lanes for 2^15 values
    constexpr std::int64_t kBlock = std::int64_t(W) << 15;
    using Lane = std::conditional_t<std::is_signed_v<T>, std::int32_t, std::uint32_t>;
    // 8-bit integers first add in 16-bit lanes, exact for 255 of them (255 * 255 and 255 * -128 fit), half
    // the widening of 32-bit lanes (uint8 sums 0.70x -> 0.95-1.07x float's bytes per second on 2 Zen 4 cores).
    using Lane16 = std::conditional_t<std::is_signed_v<T>, std::int16_t, std::uint16_t>;
    constexpr std::int64_t kInner = sizeof(T) == 1 ? 255 * std::int64_t(W) : kBlock;
    while (len - i >= W) {
      const std::int64_t end = i + std::min(kBlock, (len - i) / W * W);
      Lane lanes[W] = {};
      if constexpr (sizeof(T) == 1)
        while (i < end) {
          const std::int64_t inner_end = i + std::min(kInner, end - i);
          Lane16 narrow[W] = {};
          for (; i < inner_end; i += W) {
            prefetch_ahead<W * sizeof(T)>(x + i);
            for (int j = 0; j < W; ++j) narrow[j] = Lane16(narrow[j] + Lane16(x[i + j]));
          }
          for (int j = 0; j < W; ++j) lanes[j] += Lane(narrow[j]);
        }
      for (; i < end; i += W) {
        prefetch_ahead<W * sizeof(T)>(x + i);
        for (int j = 0; j < W; ++j) lanes[j] += Lane(x[i + j]);
      }
      std::int64_t block = 0;  // (exact: at most 2^20 elements below 2^16 in magnitude)
      for (int j = 0; j < W; ++j) block += std::int64_t(lanes[j]);
      r += ExactSum::of(block);
    }
  } else if (sizeof(T) == 4 && std::is_signed_v<T> && stride == 1) {
    constexpr std::int64_t kBlock = std::int64_t(W) << 15;  // every lane takes at most 2^15 values per block
    while (len - i >= W) {
      const std::int64_t end = i + std::min(kBlock, (len - i) / W * W);
      std::uint32_t wrapped[W] = {};  // the sum modulo 2^32
      std::int32_t high[W] = {};
      for (; i < end; i += W)
        for (int j = 0; j < W; ++j) {
          wrapped[j] += std::uint32_t(x[i + j]);
          high[j] += std::int32_t(x[i + j]) >> 16;
        }
      std::int64_t block = 0;  // (exact: at most 2^20 elements below 2^31 in magnitude)
      for (int j = 0; j < W; ++j) {
        // The sum of the low halves is below 2^31, so it is what the wrapped sum leaves modulo 2^32.
        const std::uint32_t low = wrapped[j] - (std::uint32_t(high[j]) << 16);
        block += std::int64_t(low) + std::int64_t(high[j]) * 65536;
      }
      r += ExactSum::of(block);
    }
  } else {
    constexpr std::int64_t kBlock = std::int64_t(W) << 31;  // every lane takes at most 2^31 values per block
    while (len - i >= W) {
      const std::int64_t end = i + std::min(kBlock, (len - i) / W * W);
      std::int64_t high[W] = {};
      std::uint64_t low[W] = {};
      for (; i < end; i += W) {
        if (stride == 1) prefetch_ahead<W * sizeof(T)>(x + i);
        for (int j = 0; j < W; ++j) {
          const T v = x[(i + j) * stride];
          if constexpr (std::is_unsigned_v<T>)
            high[j] += std::int64_t(std::uint64_t(v) >> 32);
          else
            high[j] += std::int64_t(v) >> 32;
          low[j] += std::uint64_t(v) & 0xffffffffu;
        }
      }
      for (int j = 0; j < W; ++j) r += ExactSum::of_halves(high[j], low[j]);
    }
  }
  for (; i < len; ++i) r += SumOp<T>::load(x[i * stride], 0);
  return r;
}

// The sum of floating elements x[0], x[stride], ..., x[(len - 1) * stride] (float, double; bfloat16 and half
// as float) in W lanes of the compute type, starting at -0.0 (so that a sum of only -0.0 stays -0.0): lane j
// adds the elements whose index is j modulo W, in order, then the lanes are added in a fixed order. The order
// depends on the indices alone, never on where the data lies (Eigen's sum peeled to an aligned address first,
// so the same values 16 bytes apart gave other bits). Contiguous 16-bit elements are converted W at a time
// (Eigen's cast<float>().sum() added one element at a time in a chain of scalar adds: 4.6 GB/s of bfloat16
// on 2 Zen 4 cores, against 179 for a float sum; 48-55 GB/s per core here).
// The lanes restart every kBlock elements: each block's lane sum goes into a sum of blocks, which goes into the
// leaf's total every kBlocks blocks, so that no running sum takes more than 2^12 adds in a row (a lane of a
// leaf of 2^20 floats took 2^15, and its rounding errors grew with them: NumPy's pairwise sum was more accurate).
template <class In>
compute_t<In> float_sum_leaf(const In* x, std::int64_t len, std::int64_t stride) {
  using T = compute_t<In>;
  constexpr int W = 32;
  constexpr std::int64_t kBlock = std::int64_t(W) * 128, kBlocks = 64;
  T total = T(-0.0), blocks = T(-0.0);
  std::int64_t i = 0, in_blocks = 0;
  T lane[W];
  while (i + W <= len) {
    for (int j = 0; j < W; ++j) lane[j] = T(-0.0);
    const std::int64_t steps = std::min(kBlock, len - i) / W;  // (W elements each)
    if (stride == 1) {
      const In* p = x + i;
      for (std::int64_t k = 0; k < steps; ++k, p += W) {
        if constexpr (std::is_same_v<In, T>) {
          for (int j = 0; j < W; ++j) lane[j] += p[j];
        } else {
          T v[W];
          prefetch_ahead<W * sizeof(In)>(p);
          widen<W>(p, v);
          for (int j = 0; j < W; ++j) lane[j] += v[j];
        }
      }
    } else {
      for (std::int64_t k = 0; k < steps; ++k)
        for (int j = 0; j < W; ++j) lane[j] += T(x[(i + k * W + j) * stride]);
    }
    i += steps * W;
    T block = T(-0.0);
    for (int j = 0; j < W; ++j) block += lane[j];
    blocks += block;
    if (++in_blocks == kBlocks) total += blocks, blocks = T(-0.0), in_blocks = 0;
  }
  T r = total + blocks;
  for (; i < len; ++i) r += T(x[i * stride]);
  return r;
}

// The sum of squares of x[0], x[stride], ..., x[(len - 1) * stride] (SumSqOp: each square rounded to the
// compute type, integers as wrapping 64-bit products) in W lanes, contiguous 16-bit elements converted W
// at a time, the lanes added in a fixed order.
template <class T>
typename SumSqOp<T>::Acc square_sum_leaf(const T* x, std::int64_t len, std::int64_t stride) {
  using Op = SumSqOp<T>;
  using Acc = typename Op::Acc;
  constexpr int W = 32;
  Acc lane[W];
  std::fill_n(lane, W, Op::identity());
  std::int64_t i = 0;
  if (stride == 1) {
    for (; i + W <= len; i += W) {
      Acc v[W];
      widen<W>(x + i, v);
      for (int j = 0; j < W; ++j) lane[j] += v[j] * v[j];
    }
  } else {
    for (; i + W <= len; i += W)
      for (int j = 0; j < W; ++j) lane[j] += Op::load(x[(i + j) * stride], 0);
  }
  Acc r = Op::identity();
  for (int j = 0; j < W; ++j) r += lane[j];
  for (; i < len; ++i) r += Op::load(x[i * stride], 0);
  return r;
}

// argmin / argmax of a leaf, whose first element has index `first`: the extreme by min_max_leaf (at the
// speed of the reads), then the first element equal to it (same sign of zero; the first NaN if it is
// NaN), a second pass (first_match) over a leaf that is still in cache.
template <class Op>
typename Op::Acc arg_leaf(const typename Op::In* x, std::int64_t len, std::int64_t stride, std::int64_t first) {
  using In = typename Op::In;
  using T = typename Op::Value;
  using Extreme = std::conditional_t<std::is_same_v<Op, ArgOp<In, true>>, MaxOp<In>, MinOp<In>>;
  const T m = min_max_leaf<Extreme>(x, len, stride);
  // The first NaN if m is NaN (the only value unequal to itself), else the first with m's bits.
  const std::int64_t k = is_nan(m) ? first_match<T>(x, len, stride, [](T v) { return v != v; })
                                   : first_match<T>(x, len, stride, [b = bits_of(m)](T v) { return bits_of(v) == b; });
  if (k < len) return {T(x[k * stride]), first + k};
  return Op::identity();  // not reached for len > 0
}

// Any op: x[0], x[stride], ... (len >= 1; `first` the index of x[0]) by the operator's load and combine.
template <class Op>
typename Op::Acc generic_leaf(const typename Op::In* x, std::int64_t len, std::int64_t stride, std::int64_t first) {
  typename Op::Acc acc = Op::identity();
  for (std::int64_t i = 0; i < len; ++i) acc = Op::combine(acc, Op::load(x[i * stride], first + i));
  return acc;
}

}  // namespace tandem::detail::cpu_leaves
