// The 16-bit storage types tandem::bfloat16 and tandem::half on every backend:
// - conversions: every bit pattern to float against an independent decoding of the fields (ldexp), and
//   float to 16 bits against a search for the nearest value (ties to even, overflow to inf), on
//   specials, every boundary and many random floats of every magnitude;
// - reductions of 16-bit inputs (float results): every kernel that lists the dtype, against the
//   test-support reference on the converted floats (min, max, argmin, argmax exactly; sums within the
//   float bound, deterministic sums bit for bit against test::canonical_sum of the floats), NaN / inf /
//   signed zeros at the first, a middle and the last position, strided views, Buffers, *_into, per row
//   and per column; kernels that do not list it throw tandem::Error;
// - matmul with 16-bit A and B and float C: every kernel, odd shapes, against a float64 reference within
//   the kernel's precision; deterministic mode bit for bit against test::tensor_core_chain on the floats;
//   transposes, alpha / beta (NaN-poisoned C with beta 0) and broadcast batches against a double loop.
#include <cmath>
#include <cstring>
#include <limits>

#include "tests/support.hpp"

using tandem::bfloat16;
using tandem::half;
using tandem::Op;
using tandem::Per;

namespace {

// The value of 16-bit pattern `bits` with E exponent and M mantissa bits, decoded field by field.
template <int E, int M>
double decode(std::uint16_t bits) {
  const int bias = (1 << (E - 1)) - 1;
  const bool sign = bits >> 15;
  const int exp = (bits >> M) & ((1 << E) - 1);
  const int mant = bits & ((1 << M) - 1);
  double v;
  if (exp == (1 << E) - 1)
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (exp == 0)
    v = std::ldexp(double(mant), 1 - bias - M);
  else
    v = std::ldexp(1.0 + std::ldexp(double(mant), -M), exp - bias);
  return sign ? -v : v;
}

template <class H>
constexpr int kExpBits = std::is_same_v<H, bfloat16> ? 8 : 5;
template <class H>
constexpr int kMantBits = std::is_same_v<H, bfloat16> ? 7 : 10;

template <class H>
double value_of(std::uint16_t bits) {
  return decode<kExpBits<H>, kMantBits<H>>(bits);
}

// The pattern float f must round to: the nearest of the non-negative patterns below inf (by binary
// search on their values, which increase with the pattern), ties to the even pattern; past the largest
// finite value, inf stands in for 2^(emax + 1), so that halfway up rounds to inf (ties to even) too.
template <class H>
std::uint16_t nearest(float f) {
  const std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(double(f));
  const std::uint16_t inf = std::uint16_t(((1 << kExpBits<H>)-1) << kMantBits<H>);
  const double top = std::ldexp(1.0, (1 << (kExpBits<H> - 1)));  // 2^(emax + 1), where inf stands
  auto val = [&](std::uint32_t p) { return p == inf ? top : value_of<H>(std::uint16_t(p)); };
  if (a >= top) return sign | inf;
  std::uint32_t lo = 0, hi = inf;  // val(lo) <= a < val(hi)
  while (hi - lo > 1) {
    const std::uint32_t mid = (lo + hi) / 2;
    (val(mid) <= a ? lo : hi) = mid;
  }
  const double dl = a - val(lo), dh = val(hi) - a;
  const std::uint32_t p = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
  return std::uint16_t(sign | p);
}

template <class H>
void check_conversions() {
  CAPTURE(std::string(test::type_name<H>()));
  // Every pattern to float: exact.
  for (std::uint32_t p = 0; p <= 0xffff; ++p) {
    const H h = H::from_bits(std::uint16_t(p));
    const double want = value_of<H>(std::uint16_t(p));
    const float got = float(h);
    if (std::isnan(want)) {
      CHECK(std::isnan(got));
      CHECK(std::isnan(float(H(got))));  // NaN stays NaN
    } else {
      if (double(got) != want || std::signbit(got) != std::signbit(want)) FAIL_CHECK("pattern " << p << " -> " << got);
      if (H(got).bits != p) FAIL_CHECK("pattern " << p << " does not round-trip");
    }
  }
  // Float to 16 bits: specials, the midpoints between neighbours (ties), and random floats.
  std::vector<float> fs = {0.0f,
                           -0.0f,
                           1.0f,
                           -1.0f,
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::max(),
                           std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::min()};
  for (std::uint32_t p = 0; p < 0x7fff; p += 7) {  // midpoints and their float neighbours
    const double a = value_of<H>(std::uint16_t(p)), b = value_of<H>(std::uint16_t(p + 1));
    if (std::isnan(a) || std::isnan(b) || std::isinf(b)) continue;
    const float mid = float((a + b) / 2);  // exact in float for both types' neighbours
    fs.insert(fs.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f), -mid});
  }
  test::SplitMix64 g{11};
  for (int i = 0; i < 200000; ++i) {
    std::uint32_t u = std::uint32_t(g.next());
    if ((u & 0x7f800000u) == 0x7f800000u) continue;  // inf / NaN: above
    float f;
    std::memcpy(&f, &u, 4);
    fs.push_back(f);
  }
  for (float f : fs) {
    const std::uint16_t want = nearest<H>(f);
    if (H(f).bits != want) FAIL_CHECK("float " << test::show(f) << " -> " << H(f).bits << ", want " << want);
  }
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(float(H(qnan))));
  CHECK(std::isnan(float(H(-qnan))));
}

TEST_CASE("float16: bfloat16 and half convert exactly to float and round to nearest even from it") {
  static_assert(sizeof(bfloat16) == 2 && sizeof(half) == 2);
  static_assert(std::is_trivially_copyable_v<bfloat16> && std::is_trivially_copyable_v<half>);
  static_assert(tandem::dtype_of<bfloat16> == tandem::Dtype::bf16 && tandem::dtype_of<half> == tandem::Dtype::f16);
  static_assert(std::is_same_v<tandem::sum_result_t<half>, float> &&
                std::is_same_v<tandem::compute_t<bfloat16>, float>);
  CHECK(tandem::parse_dtype("bfloat16") == tandem::Dtype::bf16);
  CHECK(tandem::parse_dtype("float16") == tandem::Dtype::f16);
  CHECK(tandem::info(tandem::Dtype::bf16).storage);
  CHECK(tandem::info(tandem::Dtype::f16).compute == tandem::Dtype::f32);
  check_conversions<bfloat16>();
  check_conversions<half>();
  CHECK(half(65519.0f).bits == 0x7bff);                         // rounds down to 65504
  CHECK(half(65520.0f).bits == 0x7c00);                         // halfway to 2^16: inf
  CHECK(bfloat16(1.0f + 0x1p-8f).bits == bfloat16(1.0f).bits);  // a tie, to even
}

// ---- Reductions ----------------------------------------------------------------------------------

template <class H>
std::vector<float> widen(const std::vector<H>& x) {
  return std::vector<float>(x.begin(), x.end());
}

using test::random16;

template <class H>
void check_vector(const tandem::Engine& eng, const std::vector<H>& x, std::size_t stride, const std::string& what) {
  CAPTURE(what);
  CAPTURE(x.size());
  const std::size_t n = x.empty() ? 0 : (x.size() - 1) / stride + 1;
  std::vector<float> xf;
  for (std::size_t i = 0; i < n; ++i) xf.push_back(float(x[i * stride]));
  const auto ref = test::reduce_reference(std::span<const float>(xf));
  const tandem::StridedView<const H> view{x.data(), n, stride};
  const auto buf = eng.upload<H>(x);
  const auto bview = buf.view(0, n, stride);
  const tandem::Dtype d = tandem::dtype_of<H>;
  for (const auto& k : eng.reduce_kernel_info()) {
    CAPTURE(k.name);
    const tandem::ReduceOptions o{k.name};
    if (!k.accepts(d)) {
      CHECK_THROWS_AS((void)eng.sum(view, o), tandem::Error);
      continue;
    }
    CHECK(test::judge_sum<float>(eng.sum(view, o), ref).ok);
    CHECK(test::judge_sum<float>(eng.sum(bview, o), ref).ok);
    if (n == 0) {
      CHECK_THROWS_AS((void)eng.min(view, o), tandem::Error);
      continue;
    }
    CHECK(test::same_bits(eng.min(view, o), ref.min()));
    CHECK(test::same_bits(eng.max(bview, o), ref.max()));
    if (k.accepts(Op::argmin)) {
      CHECK(eng.argmin(view, o) == ref.argmin());
      CHECK(eng.argmax(bview, o) == ref.argmax());
    }
    const double mean = eng.mean(view, o), mean_want = double(ref.sum_result()) / double(n);
    if (std::isfinite(mean_want))
      CHECK(std::fabs(mean - mean_want) <= double(ref.sum_bound()) / double(n) + 1e-300);
    else
      CHECK(test::same_bits(mean, mean_want));  // NaN (canonical) or an infinity
  }
  // Deterministic: the canonical sum of the floats, bit for bit, host and Buffer; *_into.
  const float canon = test::canonical_sum(std::span<const float>(xf));
  CHECK(test::same_bits(eng.sum(view, {"auto", true}), canon));
  CHECK(test::same_bits(eng.sum(bview, {"auto", true}), canon));
  if (n > 0) {
    const auto out = eng.buffer<float>(2);
    const auto idx = eng.buffer<std::int64_t>(1);
    eng.max_into(bview, out, 0);
    eng.sum_into(bview, out, 1, {"auto", true});
    eng.argmin_into(bview, idx, 0);
    eng.synchronize();
    const auto got = out.to_vector();
    CHECK(test::same_bits(got[0], ref.max()));
    CHECK(test::same_bits(got[1], canon));
    CHECK(std::size_t(idx.to_vector()[0]) == ref.argmin());
  }
}

template <class H>
void check_reductions(const tandem::Engine& eng) {
  CAPTURE(std::string(test::type_name<H>()));
  for (std::size_t n : test::reduce_sizes()) {
    const auto x = random16<H>(n, 100 + n);
    check_vector(eng, x, 1, "random");
    if (n > 2) check_vector(eng, x, 3, "stride 3");
    // Specials at the first, a middle and the last position.
    if (n == 0) continue;
    const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(), -0.0f, 0.0f};
    for (float s : specials)
      for (std::size_t at : {std::size_t(0), n / 2, n - 1}) {
        auto y = x;
        y[at] = H(s);
        check_vector(eng, y, 1, "special " + test::show(s) + " at " + std::to_string(at));
      }
    if (n > 8 && !test::quick()) break;  // specials on the small sizes only
  }
  // Specials inside the vector blocks of the CPU leaves (32 to 128 elements, backends/cpu/leaves.hpp).
  const auto x = random16<H>(1025, 7);
  for (float s : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), -0.0f})
    for (std::size_t at : {std::size_t(40), std::size_t(700)}) {
      auto y = x;
      y[at] = H(s);
      check_vector(eng, y, 1, "special " + test::show(s) + " at " + std::to_string(at) + " of 1025");
    }
  // Zeros inside the vector blocks: a zero result takes its sign from the whole leaf (min: -0.0 if there
  // is one, max: +0.0), and argmin / argmax find that zero, not the first zero of either sign.
  // (9000: past the first chunk of 4096 elements, whose zeros the CPU's min/max settle chunk by chunk.)
  for (float zero : {0.0f, -0.0f})
    for (std::size_t at : {std::size_t(150), std::size_t(700), std::size_t(1024), std::size_t(8000)}) {
      std::vector<H> zeros(at < 1025 ? 1025 : 9000, H(zero));
      zeros[at] = H(-zero);
      check_vector(eng, zeros, 1, "zeros " + test::show(zero) + ", the other at " + std::to_string(at));
      check_vector(eng, zeros, 3, "zeros " + test::show(zero) + ", the other at " + std::to_string(at) + ", stride 3");
    }
  auto relu = x;  // data >= 0 holding +0.0 (min +0.0, from a leaf without -0.0)
  for (std::size_t i = 0; i < relu.size(); ++i) relu[i] = float(relu[i]) < 0.0f || i % 97 == 5 ? H(0.0f) : relu[i];
  check_vector(eng, relu, 1, "data >= 0 with zeros");
  // Subnormals of both signs and the smallest normals (from 0x0400 in half, 0x0080 in bfloat16), which
  // the CPU leaves convert with F16C or a shift and the reference with float16.hpp's conversion.
  std::vector<H> tiny(2200);
  for (std::size_t i = 0; i < tiny.size(); ++i)
    tiny[i] = H::from_bits(std::uint16_t((1 + i % 1100) | (i % 3 == 0 ? 0x8000 : 0)));
  check_vector(eng, tiny, 1, "subnormals");
  // A sum of only -0.0 is -0.0.
  const std::vector<H> zeros(1000, H(-0.0f));
  CHECK(std::signbit(eng.sum(zeros)));
}

TANDEM_BACKEND_TEST(reductions_of_16_bit_inputs, "float16: reductions of bfloat16 and half, every kernel") {
  test::for_each_type([&]<class T>() {
    if constexpr (tandem::is_storage_type_v<T>) check_reductions<T>(eng);
  });
}

template <class H>
void check_per(const tandem::Engine& eng) {
  CAPTURE(std::string(test::type_name<H>()));
  const std::size_t shapes[][3] = {{1, 1, 0},    {3, 5, 2},   {33, 65, 1}, {257, 31, 0}, {5, 4099, 3},
                                   {4100, 3, 1}, {40, 13, 3}, {20, 16, 0}, {11, 32, 0},  {300, 5, 100}};
  for (const auto& s : shapes) {
    const std::size_t rows = s[0], cols = s[1], ld = cols + s[2];
    CAPTURE(rows);
    CAPTURE(cols);
    auto m = random16<H>(rows * ld, rows * 31 + cols);
    if (rows * cols > 4) m[ld + 1 < m.size() ? ld + 1 : 0] = H(std::numeric_limits<float>::quiet_NaN());
    const tandem::MatrixView<const H> view{m.data(), rows, cols, ld};
    const auto buf = eng.upload<H>(m);
    for (Per per : {Per::row, Per::col}) {
      CAPTURE(std::string(tandem::to_string(per)));
      const std::size_t count = per == Per::row ? rows : cols, len = per == Per::row ? cols : rows;
      std::vector<float> sums(count), dsums(count), mins(count), maxs(count);
      std::vector<std::size_t> argmaxs(count);
      eng.sum(view, per, std::span<float>(sums));
      eng.sum(view, per, std::span<float>(dsums), {"auto", true});
      eng.min(view, per, std::span<float>(mins));
      eng.max(view, per, std::span<float>(maxs));
      eng.argmax(view, per, std::span<std::size_t>(argmaxs));
      const auto bmax = eng.buffer<float>(count);
      eng.max(buf.matrix(rows, cols, ld), per, bmax);
      eng.synchronize();
      const auto bmaxs = bmax.to_vector();
      for (std::size_t v = 0; v < count; ++v) {
        std::vector<float> x(len);
        for (std::size_t e = 0; e < len; ++e) x[e] = float(per == Per::row ? m[v * ld + e] : m[e * ld + v]);
        const auto ref = test::reduce_reference(std::span<const float>(x));
        CHECK(test::judge_sum<float>(sums[v], ref).ok);
        CHECK(test::same_bits(dsums[v], test::canonical_sum(std::span<const float>(x))));
        CHECK(test::same_bits(mins[v], ref.min()));
        CHECK(test::same_bits(maxs[v], ref.max()));
        CHECK(test::same_bits(bmaxs[v], ref.max()));
        CHECK(argmaxs[v] == ref.argmax());
      }
    }
  }
}

TANDEM_BACKEND_TEST(per_row_col_of_16_bit_inputs, "float16: per-row and per-column reductions of bfloat16 and half") {
  test::for_each_type([&]<class T>() {
    if constexpr (tandem::is_storage_type_v<T>) check_per<T>(eng);
  });
}

// ---- Matmul --------------------------------------------------------------------------------------

template <class H>
void check_plain(const tandem::Engine& eng, std::size_t m, std::size_t k, std::size_t n) {
  CAPTURE(m);
  CAPTURE(k);
  CAPTURE(n);
  const auto a = random16<H>(m * k, m + 7 * k), b = random16<H>(k * n, n + 3 * k);
  const auto af = widen(a), bf = widen(b);
  const auto ref = test::matmul_reference<float>({af.data(), m, k, k}, {bf.data(), k, n, n}, {});
  std::vector<float> want(m * n);
  // Deterministic mode: the tensor-core chain of the 16-bit inputs.
  const int emin = std::is_same_v<H, tandem::half> ? -14 : -126;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const float v = test::tensor_core_chain(
          k, 16, emin, [&](std::size_t p) { return double(af[i * k + p]); },
          [&](std::size_t p) { return double(bf[p * n + j]); });
      want[i * n + j] = std::isnan(v) ? std::numeric_limits<float>::quiet_NaN() : v;
    }
  std::vector<float> c(m * n);
  for (const auto& info : eng.matmul_kernel_info()) {
    CAPTURE(info.name);
    const tandem::MatmulOptions o{info.name};
    std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
    if (!info.accepts(tandem::dtype_of<H>)) {
      CHECK_THROWS_AS(eng.matmul<H>({a.data(), m, k, k}, {b.data(), k, n, n}, {c.data(), m, n, n}, o), tandem::Error);
      continue;
    }
    if (!test::run_kernel(info, [&] {
          eng.matmul<H>({a.data(), m, k, k}, {b.data(), k, n, n}, {c.data(), m, n, n}, o);
        }))
      continue;
    const auto v = test::verify_matmul<float>({c.data(), m, n, n}, ref, info.precision);
    INFO(v.problem());
    CHECK(v.ok());
    // Every stage but cuBLAS and the Hopper rungs (which multiply the 16-bit values natively: bf16 / f16
    // instructions, 16 products per step, where float inputs take tf32 ones, 8 per step; "auto" runs
    // cuBLAS) computes the float product of the widened inputs, bit for bit, whether it widens them first
    // or reads them as stored (wgmma_bf16).
    if (info.baseline || info.name == "auto" || info.native_16bit || !info.accepts(tandem::Dtype::f32)) continue;
    std::vector<float> cf(m * n);
    eng.matmul<float>({af.data(), m, k, k}, {bf.data(), k, n, n}, {cf.data(), m, n, n}, o);
    CHECK(test::same_bits(std::span<const float>(c), std::span<const float>(cf)));
  }
  tandem::MatmulOptions det{"auto", true};
  eng.matmul<H>({a.data(), m, k, k}, {b.data(), k, n, n}, {c.data(), m, n, n}, det);
  CHECK(test::same_bits(std::span<const float>(c), std::span<const float>(want)));
  // Buffers.
  const auto da = eng.upload<H>(a), db = eng.upload<H>(b);
  const auto dc = eng.buffer<float>(m * n);
  eng.matmul(da.matrix(m, k), db.matrix(k, n), dc.matrix(m, n), det);
  CHECK(test::same_bits(std::span<const float>(dc.to_vector()), std::span<const float>(want)));
}

// C[e] = alpha * op(A[e]) * op(B[e]) + beta * C[e] in double, A and B as stored (rows x cols, ld).
template <class H>
std::vector<double> form_reference(const std::vector<H>& a, const std::vector<H>& b, const std::vector<float>& c0,
                                   std::size_t m, std::size_t k, std::size_t n, bool ta, bool tb, double alpha,
                                   double beta, std::size_t count, std::size_t sa, std::size_t sb) {
  std::vector<double> c(count * m * n);
  const std::size_t lda = ta ? m : k, ldb = tb ? k : n;
  for (std::size_t e = 0; e < count; ++e)
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double acc = 0;
        for (std::size_t p = 0; p < k; ++p)
          acc += double(float(a[e * sa + (ta ? p * lda + i : i * lda + p)])) *
                 double(float(b[e * sb + (tb ? j * ldb + p : p * ldb + j)]));
        const std::size_t ci = e * m * n + i * n + j;
        c[ci] = alpha * acc + (beta == 0 ? 0.0 : beta * double(c0[ci]));
      }
  return c;
}

template <class H>
void check_forms(const tandem::Engine& eng) {
  const std::size_t m = 17, k = 33, n = 9, count = 3;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (const auto& scalars : {std::pair{1.0, 0.0}, std::pair{0.5, 2.0}, std::pair{0.0, -1.0}})
        for (bool broadcast_b : {false, true}) {
          const double alpha = scalars.first, beta = scalars.second;  // (CAPTURE is a lambda: no structured bindings)
          CAPTURE(ta);
          CAPTURE(tb);
          CAPTURE(alpha);
          CAPTURE(beta);
          CAPTURE(broadcast_b);
          const std::size_t sa = m * k, sb = broadcast_b ? 0 : k * n;
          const auto a = random16<H>(count * sa, 5), b = random16<H>(broadcast_b ? k * n : count * k * n, 6);
          std::vector<float> c0(count * m * n);
          for (std::size_t i = 0; i < c0.size(); ++i) c0[i] = float(i % 7) - 3.0f;
          if (beta == 0) std::fill(c0.begin(), c0.end(), std::numeric_limits<float>::quiet_NaN());  // never read
          const auto want = form_reference(a, b, c0, m, k, n, ta, tb, alpha, beta, count, sa, sb);
          const tandem::BatchView<const H> av{a.data(), ta ? k : m, ta ? m : k, ta ? m : k, count, sa};
          const tandem::BatchView<const H> bv{b.data(), tb ? n : k, tb ? k : n, tb ? k : n, count, sb};
          for (const auto& info : eng.matmul_kernel_info()) {
            CAPTURE(info.name);
            if (!info.accepts(tandem::dtype_of<H>)) continue;
            tandem::MatmulOptions o{info.name};
            o.trans_a = ta, o.trans_b = tb, o.alpha = alpha, o.beta = beta;
            std::vector<float> c = c0;
            if (!test::run_kernel(info, [&] {
                  eng.matmul(av, bv, tandem::BatchView<float>{c.data(), m, n, n, count, m * n}, o);
                }))
              continue;
            // tf32 and bf16 stages read bfloat16 inputs exactly, half inputs rounded to bf16 (8 bits).
            const double tol = info.precision == tandem::Precision::full ? 1e-5 : 2e-2;
            std::size_t bad = 0;
            for (std::size_t i = 0; i < c.size(); ++i)
              bad += !(std::fabs(double(c[i]) - want[i]) <= tol * (std::fabs(want[i]) + double(k)));
            CHECK(bad == 0);
          }
        }
}

// A and B stored inside larger arrays (ld > cols, the padding NaN) and batches whose entries have gaps:
// every kernel reads them with the caller's ld and strides (a copy the backend makes must not).
template <class H>
void check_padded(const tandem::Engine& eng) {
  // The smallest case: A = [[1, 2], [3, 4]] with lda = 3, times the identity, is A.
  const H nan(std::numeric_limits<float>::quiet_NaN());
  const std::vector<H> a2{H(1.0f), H(2.0f), nan, H(3.0f), H(4.0f), nan}, id{H(1.0f), H(0.0f), H(0.0f), H(1.0f)};
  for (const auto& info : eng.matmul_kernel_info()) {
    if (!info.accepts(tandem::dtype_of<H>)) continue;
    CAPTURE(info.name);
    std::vector<float> c(4, -7.0f);
    if (!test::run_kernel(info, [&] {
          eng.matmul<H>({a2.data(), 2, 2, 3}, {id.data(), 2, 2, 2}, {c.data(), 2, 2, 2}, {info.name});
        }))
      continue;
    CHECK(c == std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f});
  }
  // Batches of 3: A 5 x 7 with lda 11 and entries 70 apart, B 7 x 4 with ldb 6 and entries 50 apart, C
  // 5 x 4 with ldc 9 and entries 50 apart; every element outside the matrices is NaN in A and B and
  // -9 in C (it must stay -9).
  const std::size_t m = 5, k = 7, n = 4, count = 3, lda = 11, sa = 70, ldb = 6, sb = 50, ldc = 9, sc = 50;
  std::vector<H> a(count * sa, nan), b(count * sb, nan);
  std::vector<float> af(count * m * k), bf(count * k * n);
  test::SplitMix64 g{31};
  for (std::size_t e = 0; e < count; ++e) {
    for (std::size_t i = 0; i < m * k; ++i)
      af[e * m * k + i] = float(a[e * sa + (i / k) * lda + i % k] = H(float(int(g.below(17)) - 8)));
    for (std::size_t i = 0; i < k * n; ++i)
      bf[e * k * n + i] = float(b[e * sb + (i / n) * ldb + i % n] = H(float(int(g.below(17)) - 8)));
  }
  for (const auto& info : eng.matmul_kernel_info()) {
    if (!info.accepts(tandem::dtype_of<H>)) continue;
    CAPTURE(info.name);
    std::vector<float> c(count * sc, -9.0f);
    if (!test::run_kernel(info, [&] {
          eng.matmul(tandem::BatchView<const H>{a.data(), m, k, lda, count, sa},
                     tandem::BatchView<const H>{b.data(), k, n, ldb, count, sb},
                     tandem::BatchView<float>{c.data(), m, n, ldc, count, sc}, {info.name});
        }))
      continue;
    std::size_t bad = 0;
    for (std::size_t e = 0; e < count; ++e)
      for (std::size_t i = 0; i < sc; ++i) {
        const std::size_t r = i / ldc, j = i % ldc;
        float want = -9.0f;  // padding and gaps are never written
        if (r < m && j < n) {
          want = 0;  // small integers: exact in every precision and order
          for (std::size_t p = 0; p < k; ++p) want += af[e * m * k + r * k + p] * bf[e * k * n + p * n + j];
        }
        bad += c[e * sc + i] != want;
      }
    CHECK(bad == 0);
  }
}

// The CPU converts one product's op(B) on load, a panel per block of C (backends/cpu/matmul.cpp): the bits
// of the float product of the converted matrices for every transpose pair, alpha / beta and padded operand,
// with C cut into several blocks (m past one 256-row block, n past two 256-column ones); with one row of C
// (Eigen's matrix-vector product, whose grouping of K depends on B's row stride) the value, within rounding.
template <class H>
void check_converted_on_load(const tandem::Engine& eng, std::size_t m, std::size_t k, std::size_t n) {
  const std::size_t pad = 3;
  const bool same_bits = m > 1;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (const auto& scalars : {std::pair{1.0, 0.0}, std::pair{-0.5, 2.0}}) {
        const double alpha = scalars.first, beta = scalars.second;
        CAPTURE(ta);
        CAPTURE(tb);
        CAPTURE(alpha);
        const std::size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
        const std::size_t lda = ac + pad, ldb = bc + pad, ldc = n + pad;
        const auto a = random16<H>(ar * lda, 11 + ar), b = random16<H>(br * ldb, 13 + br);
        const auto af = widen(a), bf = widen(b);
        std::vector<float> c0(m * ldc);
        for (std::size_t i = 0; i < c0.size(); ++i) c0[i] = float(i % 9) - 4.0f;
        for (const auto& info : eng.matmul_kernel_info()) {
          CAPTURE(info.name);
          tandem::MatmulOptions o{info.name};
          o.trans_a = ta, o.trans_b = tb, o.alpha = alpha, o.beta = beta;
          std::vector<float> c = c0, cf = c0;
          eng.matmul<H>({a.data(), ar, ac, lda}, {b.data(), br, bc, ldb}, {c.data(), m, n, ldc}, o);
          eng.matmul<float>({af.data(), ar, ac, lda}, {bf.data(), br, bc, ldb}, {cf.data(), m, n, ldc}, o);
          if (same_bits) CHECK(test::same_bits(std::span<const float>(c), std::span<const float>(cf)));
          // (and a value: the first row against a double dot product)
          for (std::size_t j = 0; j < n; j += 97) {
            double dot = 0;
            for (std::size_t p = 0; p < k; ++p)
              dot += double(af[ta ? p * lda : p]) * double(bf[tb ? j * ldb + p : p * ldb + j]);
            const double want = alpha * dot + beta * double(c0[j]);
            CHECK(std::fabs(double(c[j]) - want) <= 1e-5 * (double(k) + std::fabs(want)));
          }
        }
      }
}

TEST_CASE("cpu: 16-bit products convert op(B) on load: the float product's bits (one row: its value)" *
          doctest::test_suite("cpu")) {
  const tandem::Engine eng(tandem::Backend::cpu);
  test::for_each_type([&]<class T>() {
    if constexpr (tandem::is_storage_type_v<T>) {
      check_converted_on_load<T>(eng, 300, 40, 530);
      check_converted_on_load<T>(eng, 1, 300, 9000);  // (a row vector times a matrix, B's rows past 32 kB)
    }
  });
}

TANDEM_BACKEND_TEST(matmul_of_16_bit_padded,
                    "float16: matmul of bfloat16 and half stored with ld > cols and batch gaps") {
  test::for_each_type([&]<class T>() {
    if constexpr (tandem::is_storage_type_v<T>) check_padded<T>(eng);
  });
}

TANDEM_BACKEND_TEST(matmul_of_16_bit_inputs, "float16: matmul of bfloat16 and half into float, every kernel and form") {
  // k a multiple of 8 (65 x 64 x 130, 1024 x 16 x 2000): wgmma_bf16 reads a stored bfloat16 A in place;
  // 1024 x 16 x 2000 has many tiles of C (wgmma.cu, choose_shape).
  const std::size_t shapes[][3] = {{1, 1, 1},     {3, 5, 7},  {33, 17, 65},    {127, 129, 131},
                                   {65, 64, 130}, {64, 0, 8}, {1024, 16, 2000}};
  for (const auto& s : shapes) {
    if (test::quick() && s[0] * s[1] * s[2] > 100000) continue;
    test::for_each_type([&]<class T>() {
      if constexpr (tandem::is_storage_type_v<T>) check_plain<T>(eng, s[0], s[1], s[2]);
    });
  }
  test::for_each_type([&]<class T>() {
    if constexpr (tandem::is_storage_type_v<T>) check_forms<T>(eng);
  });
  // k == 0 with a padded A (lda > k), and alpha 0: no product, C = beta * C, A and B never read.
  std::vector<half> pa(4 * 8, half(std::numeric_limits<float>::quiet_NaN())), pb(3 * 3, pa[0]);
  for (double alpha : {1.0, 0.0}) {
    const std::size_t k = alpha == 0.0 ? 3 : 0;
    std::vector<float> pc(12, 2.0f);
    tandem::MatmulOptions o;
    o.alpha = alpha, o.beta = 0.5;
    eng.matmul<half>({pa.data(), 4, k, 8}, {pb.data(), k, 3, 3}, {pc.data(), 4, 3, 3}, o);
    for (float v : pc) CHECK(v == 1.0f);
  }
}

}  // namespace
