// Deterministic products in the tensor-core arithmetic on the CPU (common/tensor_core.hpp, the definition in
// common/canonical.hpp): bfloat16 and half inputs, and float inputs rounded to tf32 where
// MatmulOptions::precision allows tf32. Each C(i, j) is, per chunk of 4096 k, the chain of k-steps
// (16 k for 16-bit inputs, 8 for tf32; the last one padded with zeros) from +0.0; the chunk values are summed
// in the canonical order, then the canonical epilogue. op(A)'s rows and op(B)'s columns are decoded once
// (as doubles and exponents), then TBB tasks take blocks of C; each k-step runs in double arithmetic
// (double_step), which gives tensor_core::canonical_step's bits.
#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/cpu/matmul.hpp"
#include "common/canonical.hpp"
#include "common/dispatch.hpp"
#include "common/reduce_ops.hpp"
#include "common/tensor_core.hpp"

namespace tandem::detail {
namespace {

namespace tc = tensor_core;

// The operand's bits in format F: 16-bit elements as stored, float rounded to tf32.
template <tc::Format F, class Src>
typename tc::FormatTraits<F>::Bits bits_of(Src x) {
  if constexpr (F == tc::Format::tf32)
    return tc::tf32_bits(x);
  else
    return x.bits;
}

// n vectors of length k (vector v, element p at src[v * v_step + p * p_step]) decoded, each padded with zeros to
// kp elements: the value as a double (exact), its exponent for the alignment (the format's least normal exponent
// for subnormals; kZero for zeros, so that no product with a zero factor is ever the largest), and per k-step
// whether an element is inf or NaN (that step then runs tensor_core::canonical_step on the raw bits).
inline constexpr std::int32_t kZero = -100000;

template <tc::Format F, class Src>
struct Decoded {
  using Bits = typename tc::FormatTraits<F>::Bits;
  static constexpr std::int64_t K = tc::FormatTraits<F>::kSteps;
  std::vector<Bits> raw;
  std::vector<double> value;
  std::vector<std::int32_t> exp;
  std::vector<unsigned char> special;  // per k-step
  Decoded(const Src* src, std::int64_t n, std::int64_t k, std::int64_t kp, std::int64_t v_step, std::int64_t p_step)
      : raw(std::size_t(n * kp), Bits(0)),
        value(std::size_t(n * kp), 0.0),
        exp(std::size_t(n * kp), kZero),
        special(std::size_t(n * kp / K), 0) {
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, n, 16), [&](const tbb::blocked_range<std::int64_t>& r) {
      for (std::int64_t v = r.begin(); v < r.end(); ++v)
        for (std::int64_t p = 0; p < k; ++p) {
          const std::size_t at = std::size_t(v * kp + p);
          raw[at] = bits_of<F>(src[v * v_step + p * p_step]);
          const tc::Decoded d = tc::decode<F>(raw[at]);
          if (d.nan || d.inf) {
            special[at / K] = 1;
            continue;
          }
          if (d.mag == 0) continue;
          value[at] = std::ldexp(d.neg ? -double(d.mag) : double(d.mag), d.exp - tc::FormatTraits<F>::kFrac);
          exp[at] = d.exp;
        }
    });
  }
};

// The canonical k-step (tensor_core::canonical_step) on decoded finite operands and a finite accumulator c (the
// result replaces c), in double arithmetic: each product is exact, each term scaled by 2^(25 - E) and truncated
// (std::trunc: toward zero) is an integer below 2^27, so their sum is exact; it is rounded toward zero to float. Every
// product has a zero factor and c is +-0.0 (the signs of zero decide: canonical_step): false.
template <std::int64_t K>
bool double_step(const double* x, const std::int32_t* ex, const double* y, const std::int32_t* ey, float& c) {
  // 2^n as a double, for the exponents a step meets (|n| < 1000).
  const auto pow2 = [](std::int32_t n) { return std::bit_cast<double>(std::uint64_t(1023 + n) << 52); };
  std::int32_t e = 2 * kZero;
  for (std::int64_t k = 0; k < K; ++k) e = std::max(e, ex[k] + ey[k]);
  if (c != 0.0f) {
    const std::int32_t field = std::int32_t((float_bits(c) >> 23) & 0xff);
    e = std::max(e, field == 0 ? -126 : field - 127);
  } else if (e <= kZero / 2) {
    return false;
  }
  const double scale = pow2(25 - e);
  // Integers, so the order of the adds changes nothing: four sums side by side.
  double part[4] = {std::trunc(double(c) * scale), 0.0, 0.0, 0.0};
  for (std::int64_t k = 0; k < K; k += 4)
    for (std::int64_t l = 0; l < 4; ++l) part[l] += std::trunc(x[k + l] * y[k + l] * scale);
  const double units = (part[0] + part[1]) + (part[2] + part[3]);
  if (units == 0) return c = 0.0f, true;
  const double sum = units * pow2(e - 25);
  if (std::fabs(sum) >= 0x1p128) return c = sum > 0 ? INFINITY : -INFINITY, true;
  float f = float(sum);  // to nearest, then toward zero
  if (std::fabs(double(f)) > std::fabs(sum)) f = std::nextafter(f, 0.0f);
  c = f == 0.0f ? 0.0f : f;  // (a sum below the least subnormal: +0.0)
  return true;
}

template <tc::Format F, class Src>
void tc_entry(const MatmulArgs& g, const Src* a, const Src* b, float* c) {
  constexpr std::int64_t kSteps = tc::FormatTraits<F>::kSteps;
  const float alpha = float(g.alpha), beta = float(g.beta);
  const std::int64_t kp = (g.k + kSteps - 1) / kSteps * kSteps;
  // op(A)(i, p): a[i * lda + p], or a[p * lda + i] transposed; op(B)(p, j): b[p * ldb + j], or b[j * ldb + p].
  const Decoded<F, Src> da(a, g.m, g.k, kp, g.trans_a ? 1 : g.lda, g.trans_a ? g.lda : 1);
  const Decoded<F, Src> db(b, g.n, g.k, kp, g.trans_b ? g.ldb : 1, g.trans_b ? 1 : g.ldb);
  const std::int64_t q = canonical::matmul_chunk_count(g.k);
  tbb::parallel_for(
      tbb::blocked_range2d<std::int64_t>(0, g.m, 16, 0, g.n, 16),
      [&](const tbb::blocked_range2d<std::int64_t>& r) {
        std::vector<float> values(static_cast<std::size_t>(q));
        for (std::int64_t i = r.rows().begin(); i < r.rows().end(); ++i)
          for (std::int64_t j = r.cols().begin(); j < r.cols().end(); ++j) {
            const std::size_t ia = std::size_t(i * kp), jb = std::size_t(j * kp);
            for (std::int64_t ch = 0; ch < q; ++ch) {
              float v = 0.0f;  // +0.0
              const std::int64_t end = std::min(kp, (ch + 1) * canonical::kMatmulChunk);
              for (std::int64_t p = ch * canonical::kMatmulChunk; p < end; p += kSteps) {
                const std::size_t pa = ia + std::size_t(p), pb = jb + std::size_t(p);
                if (da.special[pa / kSteps] || db.special[pb / kSteps] || !std::isfinite(v) ||
                    !double_step<kSteps>(&da.value[pa], &da.exp[pa], &db.value[pb], &db.exp[pb], v))
                  v = bits_float(tc::canonical_step<F>(&da.raw[pa], &db.raw[pb], float_bits(v)));
              }
              values[std::size_t(ch)] = v;
            }
            const float acc = q == 1 ? values[0] : canonical::sum_of_chunk_values(values);
            float& out = c[i * g.ldc + j];
            out = canonical_nan(canonical::gemm_epilogue(acc, out, alpha, beta));  // (beta == 0 never reads out)
          }
      },
      tbb::simple_partitioner());
}

}  // namespace

bool cpu_tensor_core_matmul(const MatmulArgs& g) {
  tc::Format format;
  if (!g.deterministic || !tc::canonical_format(g.dtype, g.precision, format)) return false;
  if (g.k == 0 || float(g.alpha) == 0.0f) return false;  // no product: the canonical scale (matmul.cpp)
  auto run = [&]<tc::Format F, class Src>() {
    auto entry = [&](std::int64_t e) {
      tc_entry<F, Src>(g, static_cast<const Src*>(g.a) + e * g.stride_a, static_cast<const Src*>(g.b) + e * g.stride_b,
                       static_cast<float*>(g.c) + e * g.stride_c);
    };
    for (std::int64_t e = 0; e < g.batch; ++e) entry(e);  // (each entry's blocks run in parallel)
  };
  tc::visit_format(format, run);
  return true;
}

}  // namespace tandem::detail
