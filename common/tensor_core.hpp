// The tensor-core arithmetic of deterministic mode: one k-step of a Hopper matrix multiply-accumulate
// (wgmma), computed exactly as the hardware computes it, on any processor.
//
// One k-step takes K values a[0..K) of a row of A, K values b[0..K) of a column of B (K = 16 for bfloat16
// and half, 8 for tf32) and the float accumulator c, and gives the new float accumulator d. It is not IEEE
// arithmetic. The model (after Khattak and Mikaitis, "Accurate Models of NVIDIA Tensor Cores", 2025, and
// fitted to and checked against an H200's wgmma, tests/tc_model):
//   1. The K values are taken in blocks of kBlock consecutive k; each block is one fused step
//      c <- fused(a[block], b[block], c), and the last block's c is d.
//   2. A fused step: every product a[k] * b[k] is exact. Each term (the products and c) has an alignment
//      exponent: a product's is ea + eb (its factors' exponents, the product not normalised), c's its own.
//      E is the largest alignment exponent of the nonzero terms. Every term is cut to a multiple of
//      2^(E - kFracBits): the bits below are dropped (truncation toward zero of each term's magnitude).
//   3. The cut terms are added exactly, and the sum is rounded to float toward zero (a sum of 0 is +0.0).
//      A sum beyond float's range is +-inf.
//   4. NaN in, inf * 0, or inf - inf give the canonical NaN (0x7fffffff); otherwise an infinite term gives
//      the infinity.
// The format of the inputs: bfloat16 (8 exponent, 7 fraction bits), half (5, 10) or tf32 (8, 10: a float
// whose low 13 fraction bits the tensor core ignores).
#pragma once

#include <cstdint>

#include "common/reduce_ops.hpp"  // TANDEM_HD
#include "tandem/dtype.hpp"
#include "tandem/float16.hpp"
#include "tandem/types.hpp"

namespace tandem::detail::tensor_core {

enum class Format : std::uint8_t { bf16, f16, tf32 };

// The numerical features of one k-step (fitted per format; tests/tc_model searches over them).
struct Params {
  int block = 16;                // products per fused step
  int frac_bits = 24;            // terms are cut to multiples of 2^(E - frac_bits)
  bool floor_terms = false;      // cut negative terms toward -inf (two's complement) instead of toward zero
  bool nearest = false;          // the sum rounded to nearest even instead of toward zero
  bool normalised = false;       // alignment exponents of the normalised terms instead of ea + eb
  bool ieee_zero_sign = false;   // an exact zero sum is -0.0 when every term is -0.0 (IEEE), else +0.0
  bool flush_subnormal = false;  // results below 2^-126 become zero
  bool overflow_to_max = false;  // a sum beyond float's range gives +-FLT_MAX (toward zero) instead of +-inf
};

struct Decoded {
  bool neg;
  bool nan, inf;
  std::int32_t exp;   // unbiased exponent (subnormals: the format's minimum)
  std::uint32_t mag;  // integer significand: value = mag * 2^(exp - frac)
};

template <Format F>
struct FormatTraits;
template <>
struct FormatTraits<Format::bf16> {
  using Bits = std::uint16_t;
  static constexpr int kExpBits = 8, kFrac = 7, kBias = 127, kSteps = 16;
};
template <>
struct FormatTraits<Format::f16> {
  using Bits = std::uint16_t;
  static constexpr int kExpBits = 5, kFrac = 10, kBias = 15, kSteps = 16;
};
template <>
struct FormatTraits<Format::tf32> {
  using Bits = std::uint32_t;  // a float's bits; the low 13 fraction bits are ignored
  static constexpr int kExpBits = 8, kFrac = 10, kBias = 127, kSteps = 8;
};

// Calls f.template operator()<F, Src>() with the format and the element type its inputs are stored in
// (bfloat16, half; float for tf32): the one dispatch of the CPU's and the GPU's tensor-core paths.
template <class Fn>
void visit_format(Format format, Fn&& f) {
  if (format == Format::bf16)
    f.template operator()<Format::bf16, bfloat16>();
  else if (format == Format::f16)
    f.template operator()<Format::f16, half>();
  else
    f.template operator()<Format::tf32, float>();
}

template <Format F>
TANDEM_HD Decoded decode(typename FormatTraits<F>::Bits bits) {
  using T = FormatTraits<F>;
  std::uint32_t u = bits;
  if constexpr (F == Format::tf32) u >>= 13;
  constexpr std::uint32_t exp_mask = (1u << T::kExpBits) - 1, frac_mask = (1u << T::kFrac) - 1;
  const std::uint32_t e = (u >> T::kFrac) & exp_mask, f = u & frac_mask;
  Decoded d{};
  d.neg = ((u >> (T::kFrac + T::kExpBits)) & 1u) != 0;
  if (e == exp_mask) {
    d.nan = f != 0;
    d.inf = f == 0;
    return d;
  }
  d.exp = e == 0 ? 1 - T::kBias : std::int32_t(e) - T::kBias;
  d.mag = e == 0 ? f : (f | (1u << T::kFrac));
  return d;
}
TANDEM_HD Decoded decode_float(std::uint32_t u) {
  const std::uint32_t e = (u >> 23) & 0xff, f = u & 0x7fffff;
  Decoded d{};
  d.neg = (u >> 31) != 0;
  if (e == 0xff) {
    d.nan = f != 0;
    d.inf = f == 0;
    return d;
  }
  d.exp = e == 0 ? -126 : std::int32_t(e) - 127;
  d.mag = e == 0 ? f : (f | 0x800000u);
  return d;
}

TANDEM_HD constexpr std::int32_t max_i32(std::int32_t a, std::int32_t b) { return a > b ? a : b; }

TANDEM_HD int bit_width64(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return x == 0 ? 0 : 64 - __clzll(static_cast<long long>(x));
#else
  return x == 0 ? 0 : 64 - __builtin_clzll(x);
#endif
}

inline constexpr std::uint32_t kNanBits = 0x7fffffffu;

// |s| * 2^q as float bits with sign neg, rounded as p says.
TANDEM_HD std::uint32_t round_to_float(bool neg, std::uint64_t s, std::int32_t q, const Params& p) {
  const std::uint32_t sign = neg ? 0x80000000u : 0u;
  if (s == 0) return 0u;
  const int width = bit_width64(s);
  std::int32_t top = width - 1 + q;  // exponent of the leading bit
  // The quantum of the result: 2^(top - 23) for normal results, 2^-149 below 2^-126.
  std::int32_t quantum = top >= -126 ? top - 23 : -149;
  if (top < -126 && p.flush_subnormal) return 0u;
  std::uint64_t m;
  const std::int32_t drop = quantum - q;
  if (drop <= 0) {
    m = s << (-drop);  // exact (drop >= -63 since s has fewer than 64 bits here)
  } else if (drop >= 64) {
    m = 0;
    if (p.nearest) m = 0;  // far below half a quantum
  } else {
    m = s >> drop;
    if (p.nearest) {
      const std::uint64_t rest = s & ((std::uint64_t(1) << drop) - 1), half = std::uint64_t(1) << (drop - 1);
      if (rest > half || (rest == half && (m & 1))) ++m;
    }
  }
  if (m >> 24) {  // rounding carried into a new leading bit
    m >>= 1;
    ++quantum;
  }
  if (m == 0) return 0u;  // a nonzero sum below the smallest subnormal: +0.0 (as the hardware gives)
  std::uint32_t exp_field, frac;
  if (m >> 23) {
    const std::int32_t e = quantum + 23;
    if (e > 127) return p.overflow_to_max && !p.nearest ? (sign | 0x7f7fffffu) : (sign | 0x7f800000u);
    exp_field = std::uint32_t(e + 127);
    frac = std::uint32_t(m) & 0x7fffff;
  } else {  // subnormal
    exp_field = 0;
    frac = std::uint32_t(m);
  }
  return sign | (exp_field << 23) | frac;
}

// One fused step over n <= 16 products and the accumulator c (float bits); returns float bits.
template <Format F>
TANDEM_HD std::uint32_t fused_step(const typename FormatTraits<F>::Bits* a, const typename FormatTraits<F>::Bits* b,
                                   int n, std::uint32_t c, const Params& p) {
  using T = FormatTraits<F>;
  constexpr int kFrac = T::kFrac;
  bool neg[17];
  std::uint64_t mag[17];
  std::int32_t lsb[17], align[17];
  bool any_nan = false, pos_inf = false, neg_inf = false, all_neg_zero = true;
  int terms = 0;
  for (int k = 0; k < n; ++k) {
    const Decoded x = decode<F>(a[k]), y = decode<F>(b[k]);
    const bool ng = x.neg != y.neg;
    if (x.nan || y.nan) {
      any_nan = true;
      continue;
    }
    if (x.inf || y.inf) {
      if ((x.inf ? y.mag : x.mag) == 0 && !(x.inf && y.inf)) {
        any_nan = true;  // inf * 0
      } else {
        (ng ? neg_inf : pos_inf) = true;
      }
      continue;
    }
    const std::uint64_t m = std::uint64_t(x.mag) * y.mag;
    if (m == 0) {
      all_neg_zero = all_neg_zero && ng;
      continue;
    }
    all_neg_zero = false;
    neg[terms] = ng;
    mag[terms] = m;
    lsb[terms] = x.exp + y.exp - 2 * kFrac;
    align[terms] = p.normalised ? lsb[terms] + bit_width64(m) - 1 : x.exp + y.exp;
    ++terms;
  }
  const Decoded z = decode_float(c);
  if (z.nan) any_nan = true;
  if (z.inf) (z.neg ? neg_inf : pos_inf) = true;
  if (any_nan || (pos_inf && neg_inf)) return kNanBits;
  if (pos_inf) return 0x7f800000u;
  if (neg_inf) return 0xff800000u;
  if (z.mag != 0) {
    all_neg_zero = false;
    neg[terms] = z.neg;
    mag[terms] = z.mag;
    lsb[terms] = z.exp - 23;
    align[terms] = p.normalised ? lsb[terms] + bit_width64(z.mag) - 1 : z.exp;
    ++terms;
  } else {
    all_neg_zero = all_neg_zero && z.neg;
  }
  if (terms == 0) return p.ieee_zero_sign && all_neg_zero ? 0x80000000u : 0u;
  std::int32_t e = align[0];
  for (int t = 1; t < terms; ++t) e = align[t] > e ? align[t] : e;
  const std::int32_t q = e - p.frac_bits;  // the cut's quantum
  std::int64_t sum = 0;
  for (int t = 0; t < terms; ++t) {
    const std::int32_t shift = lsb[t] - q;
    std::int64_t v;
    if (shift >= 0) {
      v = std::int64_t(mag[t] << shift);
      v = neg[t] ? -v : v;
    } else if (-shift >= 63) {
      v = neg[t] && p.floor_terms ? -1 : 0;
    } else {
      const std::uint64_t kept = mag[t] >> (-shift);
      const bool lost = (kept << (-shift)) != mag[t];
      v = std::int64_t(kept);
      v = neg[t] ? -v : v;
      if (neg[t] && lost && p.floor_terms) --v;
    }
    sum += v;
  }
  if (sum == 0) return p.ieee_zero_sign && all_neg_zero ? 0x80000000u : 0u;
  const bool sneg = sum < 0;
  return round_to_float(sneg, sneg ? std::uint64_t(-sum) : std::uint64_t(sum), q, p);
}

// One k-step: kSteps values of a and b (raw bits) and the accumulator c (float bits) -> d (float bits).
template <Format F>
TANDEM_HD std::uint32_t k_step(const typename FormatTraits<F>::Bits* a, const typename FormatTraits<F>::Bits* b,
                               std::uint32_t c, const Params& p) {
  constexpr int K = FormatTraits<F>::kSteps;
  for (int k0 = 0; k0 < K; k0 += p.block) c = fused_step<F>(a + k0, b + k0, p.block < K ? p.block : K, c, p);
  return c;
}

}  // namespace tandem::detail::tensor_core

namespace tandem::detail::tensor_core {

// The parameters of the Hopper tensor cores (an H200's wgmma, fitted and checked bit for bit over 10^8 k-steps
// per format: tests/tc_model): one fused step of all K products and c, 25 fraction bits below the largest
// alignment exponent, each term truncated toward zero, the sum rounded toward zero, results below 2^-126 kept
// (subnormal), a sum beyond float's range +-inf.
template <Format F>
TANDEM_HD constexpr Params canonical_params() {
  Params p;
  p.block = FormatTraits<F>::kSteps;
  p.frac_bits = 25;
  return p;
}

// The canonical k-step of format F (the definition: k_step with canonical_params).
template <Format F>
TANDEM_HD std::uint32_t canonical_step(const typename FormatTraits<F>::Bits* a, const typename FormatTraits<F>::Bits* b,
                                       std::uint32_t c) {
  return fused_step<F>(a, b, FormatTraits<F>::kSteps, c, canonical_params<F>());
}

// ---- The same step on operands decoded once (the CPU's product and the GPUs without wgmma) ----------------
// An element as exponent and signed integer significand: value = mag * 2^(exp - frac). Zero: mag 0;
// inf / NaN: exp == kSpecial (the step then runs on the raw bits).
struct Term {
  std::int16_t exp;
  std::int32_t mag;
};
inline constexpr std::int16_t kSpecial = 0x7fff;

template <Format F>
TANDEM_HD Term term_of(typename FormatTraits<F>::Bits bits) {
  const Decoded d = decode<F>(bits);
  if (d.nan || d.inf) return Term{kSpecial, 0};
  return Term{std::int16_t(d.exp), d.neg ? -std::int32_t(d.mag) : std::int32_t(d.mag)};
}

// canonical_step over decoded a and b (K = kSteps terms each; padding: zero terms). raw_a / raw_b: the same
// elements' bits, read only when a term is inf or NaN, or every product is zero.
template <Format F>
TANDEM_HD std::uint32_t decoded_step(const Term* a, const Term* b, std::uint32_t c,
                                     const typename FormatTraits<F>::Bits* raw_a,
                                     const typename FormatTraits<F>::Bits* raw_b) {
  constexpr int K = FormatTraits<F>::kSteps, kFrac2 = 2 * FormatTraits<F>::kFrac, kCut = 25;
  std::int32_t e = -0x7fffffff;
  bool special = false;
  for (int k = 0; k < K; ++k) {
    special = special || a[k].exp == kSpecial || b[k].exp == kSpecial;
    if (a[k].mag != 0 && b[k].mag != 0) e = max_i32(e, std::int32_t(a[k].exp) + b[k].exp);
  }
  const std::uint32_t ce = (c >> 23) & 0xff;
  special = special || ce == 0xff;
  if (special || e == -0x7fffffff) return canonical_step<F>(raw_a, raw_b, c);
  const std::int32_t cexp = ce == 0 ? -126 : std::int32_t(ce) - 127;
  const std::int64_t cmag = ce == 0 ? (c & 0x7fffff) : ((c & 0x7fffff) | 0x800000);
  if (cmag != 0) e = max_i32(e, cexp);
  const std::int32_t q = e - kCut;
  std::int64_t sum = 0;
  auto add = [&](std::int64_t m, std::int32_t shift) {  // m * 2^shift, truncated toward zero
    if (shift >= 0)
      sum += m * (std::int64_t(1) << shift);
    else if (shift > -63)
      sum += m >= 0 ? (m >> -shift) : -((-m) >> -shift);
  };
  for (int k = 0; k < K; ++k)
    if (a[k].mag != 0 && b[k].mag != 0)
      add(std::int64_t(a[k].mag) * b[k].mag, std::int32_t(a[k].exp) + b[k].exp - kFrac2 - q);
  if (cmag != 0) add((c >> 31) ? -cmag : cmag, cexp - 23 - q);
  if (sum == 0) return 0u;
  const bool neg = sum < 0;
  return round_to_float(neg, neg ? std::uint64_t(-sum) : std::uint64_t(sum), q, canonical_params<F>());
}

}  // namespace tandem::detail::tensor_core

namespace tandem::detail::tensor_core {

// The arithmetic of a deterministic product of A and B of `dtype` with MatmulOptions::precision: the
// tensor-core k-step of bfloat16 / half inputs, or of float inputs rounded to tf32 where the precision allows
// tf32 (Precision::tf32 or bf16); otherwise (float in full precision, double) the fma chain of
// common/canonical.hpp (the result: false).
inline bool canonical_format(Dtype dtype, Precision precision, Format& format) {
  if (dtype == Dtype::bf16) return format = Format::bf16, true;
  if (dtype == Dtype::f16) return format = Format::f16, true;
  if (dtype == Dtype::f32 && precision != Precision::full) return format = Format::tf32, true;
  return false;
}

// A float input of the tf32 k-step: rounded to tf32's 10 fraction bits to nearest, ties away from zero (as
// cvt.rna.tf32.f32 rounds; past the largest tf32 value: inf), in float's bits with the low 13 bits zero.
TANDEM_HD std::uint32_t tf32_bits(float x) {
  const std::uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return kNanBits;  // NaN (whose fraction may lie in the low 13 bits)
  if ((u & 0x7f800000u) == 0x7f800000u) return u;        // inf
  return (u + 0x1000u) & 0xffffe000u;
}

}  // namespace tandem::detail::tensor_core
