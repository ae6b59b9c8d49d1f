// Deterministic products in the tensor-core arithmetic on the CPU (common/tensor_core.hpp, the definition in
// common/canonical.hpp): bfloat16 and half inputs, and float inputs rounded to tf32 where
// MatmulOptions::precision allows tf32. Each C(i, j) is, per chunk of 4096 k, the chain of k-steps
// (16 k for 16-bit inputs, 8 for tf32; the last one padded with zeros) from +0.0; the chunk values are summed
// in the canonical order, then the canonical epilogue. op(A)'s rows and op(B)'s columns are decoded once
// (tensor_core::Term: exponent and signed significand), then TBB tasks take blocks of C.
#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>

#include <algorithm>
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
// kp elements.
template <tc::Format F, class Src>
struct Decoded {
  using Bits = typename tc::FormatTraits<F>::Bits;
  std::vector<tc::Term> terms;
  std::vector<Bits> raw;
  Decoded(const Src* src, std::int64_t n, std::int64_t k, std::int64_t kp, std::int64_t v_step, std::int64_t p_step)
      : terms(std::size_t(n * kp), tc::Term{0, 0}), raw(std::size_t(n * kp), Bits(0)) {
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, n, 16), [&](const tbb::blocked_range<std::int64_t>& r) {
      for (std::int64_t v = r.begin(); v < r.end(); ++v)
        for (std::int64_t p = 0; p < k; ++p) {
          const Bits b = bits_of<F>(src[v * v_step + p * p_step]);
          raw[std::size_t(v * kp + p)] = b;
          terms[std::size_t(v * kp + p)] = tc::term_of<F>(b);
        }
    });
  }
};

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
            const tc::Term* ta = da.terms.data() + i * kp;
            const tc::Term* tb = db.terms.data() + j * kp;
            const auto* ra = da.raw.data() + i * kp;
            const auto* rb = db.raw.data() + j * kp;
            for (std::int64_t ch = 0; ch < q; ++ch) {
              std::uint32_t v = 0;  // +0.0
              const std::int64_t end = std::min(kp, (ch + 1) * canonical::kMatmulChunk);
              for (std::int64_t p = ch * canonical::kMatmulChunk; p < end; p += kSteps)
                v = tc::decoded_step<F>(ta + p, tb + p, v, ra + p, rb + p);
              values[std::size_t(ch)] = bits_float(v);
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
  if (format == tc::Format::bf16)
    run.template operator()<tc::Format::bf16, bfloat16>();
  else if (format == tc::Format::f16)
    run.template operator()<tc::Format::f16, half>();
  else
    run.template operator()<tc::Format::tf32, float>();
  return true;
}

}  // namespace tandem::detail
