// The GEMM forms: C = alpha * op(A) * op(B) + beta * C with transposes, alpha / beta and batches, on
// every kernel of the backend, host matrices and Buffers.
//
// Reference: computed here from the definition (MatmulOptions in include/tandem/types.hpp), each element
// accumulated in long double: ref = alpha * sum_p op(A)(i,p) op(B)(p,j) + beta * C0(i,j). Bound per
// element, with S = sum_p |op(A)(i,p) op(B)(p,j)| and u the unit roundoff of T:
//   |C - ref| <= |alpha| * (c_in + 2 K u) * S + 4 u * (|alpha| * S + |beta * C0|)
// (the product's bound of verify/bounds.hpp, scaled, plus the roundings of alpha * acc and of the
// fma with beta * C0). beta == 0: C0 is NaN (poison): a kernel that reads C fails. alpha == 0 or K == 0:
// C = beta == 0 ? 0 : beta * C0 exactly, even with NaN in A and B.
// Deterministic mode: bitwise against the canonical order written from canonical.hpp's description:
// the test-support fma chain on op(A), op(B), then t = alpha * acc, c = beta == 0 ? t : fma(beta, c0, t).
#include <algorithm>
#include <cmath>

#include "tests/support.hpp"

namespace {

using tandem::MatmulOptions;

// count matrices as stored (rows x cols, ld), stride apart, in one vector. aligned: ld and the gaps between entries
// are multiples of 16 bytes (what the Hopper rungs' copy engine reads in place); otherwise odd.
template <class T>
struct Operand {
  std::size_t rows, cols, ld, count, stride;
  test::Vector<T> data;
  Operand(std::size_t r, std::size_t c, std::size_t count_, std::size_t stride_, test::SplitMix64& g, bool nan_pad,
          bool aligned = false)
      : rows(r), cols(c), ld(aligned ? (c + 3) / 4 * 4 + 4 : c + 3), count(count_), stride(stride_) {
    if (stride == 1) stride = rows * ld + (aligned ? 8 : 7);  // 1 means: packed with a gap
    const std::size_t size = rows * ld + (count - 1) * stride + 1;
    data.assign(size, nan_pad ? std::numeric_limits<T>::quiet_NaN() : T(0));
    for (std::size_t e = 0; e < (stride == 0 ? 1 : count); ++e)
      for (std::size_t i = 0; i < rows; ++i) test::fill<T>(std::span<T>(data.data() + e * stride + i * ld, cols), g);
  }
  T at(std::size_t e, std::size_t i, std::size_t j) const { return data[e * stride + i * ld + j]; }
  // op(X)(i, j) of entry e.
  T op(std::size_t e, std::size_t i, std::size_t j, bool trans) const { return trans ? at(e, j, i) : at(e, i, j); }
  tandem::BatchView<const T> view() const { return {data.data(), rows, cols, ld, count, stride}; }
  tandem::BatchView<T> mut() { return {data.data(), rows, cols, ld, count, stride}; }
};

struct Form {
  std::size_t m, k, n, batch;
  bool ta, tb;
  double alpha, beta;
  std::size_t stride_a = 1, stride_b = 1;  // 1: each entry its own matrix; 0: one for all
  bool aligned = false;                    // rows and entries on 16-byte boundaries (Operand)
};

template <class T>
struct Case {
  Form f;
  Operand<T> a, b, c0;
  Case(const Form& f_, test::SplitMix64& g)
      : f(f_),
        a(f.ta ? f.k : f.m, f.ta ? f.m : f.k, f.stride_a == 0 ? 1 : f.batch, f.stride_a, g, true, f.aligned),
        b(f.tb ? f.n : f.k, f.tb ? f.k : f.n, f.stride_b == 0 ? 1 : f.batch, f.stride_b, g, true, f.aligned),
        c0(f.m, f.n, f.batch, 1, g, true, f.aligned) {
    if (f.beta == 0)  // C is never read: poison it
      for (std::size_t e = 0; e < f.batch; ++e)
        for (std::size_t i = 0; i < f.m; ++i)
          for (std::size_t j = 0; j < f.n; ++j)
            c0.data[e * c0.stride + i * c0.ld + j] = std::numeric_limits<T>::quiet_NaN();
  }
  MatmulOptions opts(const std::string& kernel) const {
    MatmulOptions o{kernel};
    o.trans_a = f.ta, o.trans_b = f.tb, o.alpha = f.alpha, o.beta = f.beta;
    return o;
  }
  // The number of elements outside the bound (messages for the first few); padding of C untouched.
  std::size_t check(const test::Vector<T>& c, tandem::Precision p, const std::string& what) const {
    const long double u = test::unit_roundoff<T>(), al = (long double)T(f.alpha), be = (long double)T(f.beta);
    std::size_t bad = 0;
    for (std::size_t e = 0; e < f.batch; ++e)
      for (std::size_t i = 0; i < f.m; ++i) {
        for (std::size_t j = 0; j < f.n; ++j) {
          long double dot = 0, s = 0;
          if (al != 0)
            for (std::size_t q = 0; q < f.k; ++q) {
              const long double x =
                  (long double)a.op(f.stride_a ? e : 0, i, q, f.ta) * b.op(f.stride_b ? e : 0, q, j, f.tb);
              dot += x, s += std::fabs(x);
            }
          const long double old = f.beta == 0 ? 0 : (long double)c0.at(e, i, j);
          const long double ref = (al != 0 ? al * dot : 0) + be * old;
          const long double bound = std::fabs(al) * test::matmul_bound_factor<T>(p, f.k) * s +
                                    4 * u * (std::fabs(al) * s + std::fabs(be * old));
          const long double got = c[e * c0.stride + i * c0.ld + j];
          if (!(std::fabs(got - ref) <= bound)) {
            if (++bad <= 3)
              MESSAGE(what << ": C[" << e << "](" << i << "," << j << ") = " << test::show(T(got)) << ", expected "
                           << test::show(T(ref)) << " +- " << test::show(T(bound)));
          }
        }
        // (C's padding is NaN: a kernel that writes past a row, even the +0 of alpha times nothing, is caught)
        for (std::size_t j = f.n; j < c0.ld; ++j)
          bad += !test::same_bits(c[e * c0.stride + i * c0.ld + j], std::numeric_limits<T>::quiet_NaN());
      }
    return bad;
  }
  // Deterministic mode's bits, from the canonical description (not from the backends' code).
  test::Vector<T> canonical() const {
    test::Vector<T> out = c0.data;
    const T al = T(f.alpha), be = T(f.beta);
    test::Vector<T> opa(f.m * f.k), opb(f.k * f.n), acc(f.m * f.n);
    for (std::size_t e = 0; e < f.batch; ++e) {
      for (std::size_t i = 0; i < f.m; ++i)
        for (std::size_t q = 0; q < f.k; ++q) opa[i * f.k + q] = a.op(f.stride_a ? e : 0, i, q, f.ta);
      for (std::size_t q = 0; q < f.k; ++q)
        for (std::size_t j = 0; j < f.n; ++j) opb[q * f.n + j] = b.op(f.stride_b ? e : 0, q, j, f.tb);
      if (f.k > 0)
        test::fma_chain_matmul<T>({opa.data(), f.m, f.k, f.k}, {opb.data(), f.k, f.n, f.n},
                                  {acc.data(), f.m, f.n, f.n});
      for (std::size_t i = 0; i < f.m; ++i)
        for (std::size_t j = 0; j < f.n; ++j) {
          T& c = out[e * c0.stride + i * c0.ld + j];
          T v;
          if (f.k == 0 || al == T(0))
            v = be == T(0) ? T(0) : be * c;
          else {
            const T t = al * acc[i * f.n + j];
            v = be == T(0) ? t : std::fma(be, c, t);
          }
          c = std::isnan(v) ? std::numeric_limits<T>::quiet_NaN() : v;
        }
    }
    return out;
  }
};

std::vector<Form> forms(bool aligned = false) {
  std::vector<Form> v;
  const std::size_t shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {129, 2, 257}, {67, 130, 31}};
  const double ab[][2] = {{1, 0}, {-1.5, 0}, {0.5, 2}, {1, -1}};
  for (auto& s : shapes)
    for (int t = 0; t < 4; ++t)
      for (auto& x : ab) v.push_back({s[0], s[1], s[2], 1, bool(t & 1), bool(t & 2), x[0], x[1]});
  // Batches: entries with gaps, one A or one B for every entry (stride 0), transposes, alpha / beta.
  v.push_back({13, 7, 11, 5, false, false, 1, 0});
  v.push_back({13, 7, 11, 5, true, false, 2, 0.25, 0, 1});
  v.push_back({13, 7, 11, 5, false, true, 1, 1, 1, 0});
  v.push_back({33, 65, 17, 3, true, true, -1, 0.5});
  // No product: alpha == 0 (NaN in A and B must not leak) and K == 0.
  v.push_back({5, 9, 7, 2, false, false, 0, 0});
  v.push_back({5, 9, 7, 2, false, true, 0, -3});
  v.push_back({5, 0, 7, 2, false, false, 1, 0.5});
  if (aligned) {  // more than one tile of 128 x 256 each way, and a tile of 128 rows missed by one
    v.push_back({257, 100, 385, 1, false, false, 1, 0});
    v.push_back({129, 67, 600, 2, true, false, 0.5, -1});
    v.push_back({300, 40, 129, 1, false, false, -1, 0.5});
    // partial tiles, an odd count of k-tiles; then more tiles than an H100 / H200 has SMs (several per persistent
    // block), with beta 0 (wgmma_tma_store's stores then run on into the next tile's products)
    v.push_back({130, 70, 516, 16, false, false, 1.5, 0.75});
    v.push_back({130, 70, 516, 32, false, false, -0.5, 0});
    for (Form& f : v) f.aligned = true;
  }
  return v;
}

template <class T>
void check_every_kernel(const tandem::Engine& eng, bool buffers, bool aligned = false) {
  test::SplitMix64 g{2024};
  for (const Form& f : forms(aligned)) {
    if (test::quick() && f.m * f.k * f.n > 50000) continue;
    Case<T> cs(f, g);
    INFO("m k n " << f.m << " " << f.k << " " << f.n << ", batch " << f.batch << ", trans " << f.ta << f.tb
                  << ", alpha " << f.alpha << ", beta " << f.beta << ", strides a/b " << f.stride_a << f.stride_b);
    if (f.alpha == 0) std::fill(cs.a.data.begin(), cs.a.data.end(), std::numeric_limits<T>::quiet_NaN());
    for (const tandem::KernelInfo& info : eng.matmul_kernel_info()) {
      if (!info.accepts(tandem::dtype_of<T>)) continue;
      const std::string name = info.name;
      CAPTURE(name);
      Operand<T> c = cs.c0;
      test::Vector<T> got;
      const bool ran = test::run_kernel(info, [&] {
        if (!buffers) {
          eng.matmul(cs.a.view(), cs.b.view(), c.mut(), cs.opts(name));
          got = c.data;
        } else {
          auto ba = eng.upload<T>(cs.a.data), bb = eng.upload<T>(cs.b.data), bc = eng.upload<T>(c.data);
          eng.matmul(ba.batch(cs.a.rows, cs.a.cols, cs.a.count, cs.a.stride, cs.a.ld),
                     bb.batch(cs.b.rows, cs.b.cols, cs.b.count, cs.b.stride, cs.b.ld),
                     bc.batch(f.m, f.n, f.batch, c.stride, c.ld), cs.opts(name));
          got = bc.to_vector();
        }
      });
      if (!ran) continue;  // (a kernel that does not run here, refused naming its requirement)
      CHECK_MESSAGE(cs.check(got, info.precision, name) == 0, name << ": elements outside the bound");
    }
  }
}

template <class T>
void check_deterministic(const tandem::Engine& eng) {
  test::SplitMix64 g{77};
  for (const Form& f : forms()) {
    Case<T> cs(f, g);
    INFO("m k n " << f.m << " " << f.k << " " << f.n << ", batch " << f.batch << ", trans " << f.ta << f.tb
                  << ", alpha " << f.alpha << ", beta " << f.beta << ", strides a/b " << f.stride_a << f.stride_b);
    const test::Vector<T> expect = cs.canonical();
    MatmulOptions o = cs.opts("auto");
    o.deterministic = true;
    Operand<T> c = cs.c0;
    eng.matmul(cs.a.view(), cs.b.view(), c.mut(), o);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < expect.size(); ++i) differ += !test::same_bits(c.data[i], expect[i]);
    CHECK_MESSAGE(differ == 0, differ << " elements differ from the canonical bits (host)");
    auto ba = eng.upload<T>(cs.a.data), bb = eng.upload<T>(cs.b.data), bc = eng.upload<T>(cs.c0.data);
    eng.matmul(ba.batch(cs.a.rows, cs.a.cols, cs.a.count, cs.a.stride, cs.a.ld),
               bb.batch(cs.b.rows, cs.b.cols, cs.b.count, cs.b.stride, cs.b.ld),
               bc.batch(f.m, f.n, f.batch, c.stride, c.ld), o);
    const test::Vector<T> dev = bc.to_vector();
    differ = 0;
    for (std::size_t i = 0; i < expect.size(); ++i) differ += !test::same_bits(dev[i], expect[i]);
    CHECK_MESSAGE(differ == 0, differ << " elements differ from the canonical bits (Buffer)");
  }
}

}  // namespace

TANDEM_BACKEND_TEST(matmul_forms, "matmul forms float and double: transposes, alpha/beta, batches on every kernel") {
  test::for_each_type<tandem::matmul_element_types>([&]<class T>() {  // (16-bit inputs: test_float16.cpp)
    if constexpr (!tandem::is_storage_type_v<T>) check_every_kernel<T>(eng, false);
  });
}
TANDEM_BACKEND_TEST(matmul_forms_buffers, "matmul forms: Buffer batches on every kernel") {
  check_every_kernel<float>(eng, true);
}
// (The Hopper rungs read such operands in place: wgmma_swap_ab multiplies a row-major B as it is stored.)
TANDEM_BACKEND_TEST(matmul_forms_buffers_aligned, "matmul forms: Buffer batches with 16-byte rows on every kernel") {
  check_every_kernel<float>(eng, true, true);
}
TANDEM_BACKEND_TEST(matmul_forms_deterministic, "matmul forms: deterministic bits equal the canonical formula") {
  test::for_each_type<tandem::matmul_element_types>([&]<class T>() {
    if constexpr (!tandem::is_storage_type_v<T>) check_deterministic<T>(eng);
  });
}

TANDEM_BACKEND_TEST(matmul_forms_precision, "matmul forms: precision lets auto use tf32/bf16, never below it") {
  test::SplitMix64 g{3};
  const Form f{129, 257, 65, 1, false, false, 1, 0};
  Case<float> cs(f, g);
  for (tandem::Precision p : {tandem::Precision::full, tandem::Precision::tf32, tandem::Precision::bf16}) {
    CAPTURE(std::string(tandem::to_string(p)));
    MatmulOptions o = cs.opts("auto");
    o.precision = p;
    Operand<float> c = cs.c0;
    eng.matmul(cs.a.view(), cs.b.view(), c.mut(), o);
    CHECK(cs.check(c.data, p, "auto") == 0);  // with full, the bound of full precision (2 K u, not 2^-9)
  }
  // double has no reduced-precision stage: bf16 allowed still computes in full precision.
  Case<double> cd(f, g);
  MatmulOptions o = cd.opts("auto");
  o.precision = tandem::Precision::bf16;
  Operand<double> c = cd.c0;
  eng.matmul(cd.a.view(), cd.b.view(), c.mut(), o);
  CHECK(cd.check(c.data, tandem::Precision::full, "auto double") == 0);
}

// Products large enough for auto's tf32 choices on an H100 / H200 (every dimension at least 1024, B row-major with
// 16-byte rows: wgmma_pingpong_swap_ab below 2^21 outputs, wgmma_swap_ab from there), of Buffers and of host
// matrices: 512 elements of each sampled against the reference.
TANDEM_BACKEND_TEST(matmul_forms_tf32_large,
                    "matmul forms: auto at tf32 precision on 1088 x 1040 x 1032 and 2048 x 2048 x 2176 products") {
  test::SplitMix64 g{41};
  for (const Form& f : {Form{1088, 1040, 1032, 1, false, false, 1, 0, 1, 1, true},
                        Form{2048, 2048, 2176, 1, false, false, 1, 0, 1, 1, true}}) {
    INFO("m k n " << f.m << " " << f.k << " " << f.n);
    const Case<float> cs(f, g);
    MatmulOptions o = cs.opts("auto");
    o.precision = tandem::Precision::tf32;
    auto ba = eng.upload<float>(cs.a.data), bb = eng.upload<float>(cs.b.data), bc = eng.upload<float>(cs.c0.data);
    eng.matmul(ba.matrix(f.m, f.k, cs.a.ld), bb.matrix(f.k, f.n, cs.b.ld), bc.matrix(f.m, f.n, cs.c0.ld), o);
    Operand<float> host_c = cs.c0;
    eng.matmul(cs.a.view(), cs.b.view(), host_c.mut(), o);
    const std::vector<float> from_buffer = bc.to_vector();
    for (const float* c : {from_buffer.data(), static_cast<const float*>(host_c.data.data())}) {
      std::size_t bad = 0;
      for (int sample = 0; sample < 512; ++sample) {
        const std::size_t i = g.below(f.m), j = g.below(f.n);
        long double dot = 0, sum = 0;
        for (std::size_t q = 0; q < f.k; ++q) {
          const long double x = (long double)cs.a.at(0, i, q) * cs.b.at(0, q, j);
          dot += x, sum += std::fabs(x);
        }
        const long double bound = test::matmul_bound_factor<float>(o.precision, f.k) * sum;
        if (!(std::fabs(c[i * cs.c0.ld + j] - dot) <= bound) && ++bad <= 3)
          MESSAGE("C(" << i << "," << j << ") = " << c[i * cs.c0.ld + j] << ", expected " << double(dot) << " +- "
                       << double(bound));
      }
      CHECK(bad == 0);
    }
  }
}

TANDEM_BACKEND_TEST(matmul_forms_errors, "matmul forms: shapes, counts, overlaps and scalars are checked") {
  std::vector<float> a(6 * 4, 1), b(6 * 5, 1), c(40 * 5, 0);
  auto expect_error = [&](auto call, const char* part) {
    const std::string msg = test::message_of(call);
    CHECK_MESSAGE(test::contains(msg, part), "message: " << msg);
  };
  tandem::MatrixView<const float> a64{a.data(), 6, 4, 4}, b65{b.data(), 6, 5, 5};
  tandem::MatrixView<float> c45{c.data(), 4, 5, 5};
  MatmulOptions ta;
  ta.trans_a = true;
  eng.matmul(a64, b65, c45, ta);  // A^T (4x6) * B (6x5): fine
  CHECK(c[0] == 6.0f);
  expect_error([&] { eng.matmul(a64, b65, c45); }, "shapes do not match");  // 6x4 * 6x5
  MatmulOptions nan_alpha = ta;
  nan_alpha.alpha = std::nan("");
  expect_error([&] { eng.matmul(a64, b65, c45, nan_alpha); }, "finite");
  tandem::BatchView<const float> ab{a.data(), 6, 4, 4, 2, 0}, bb{b.data(), 6, 5, 5, 3, 0};
  tandem::BatchView<float> cb{c.data(), 4, 5, 5, 3, 20};
  eng.matmul(ab, bb, cb, ta);  // stride-0 A and B broadcast over C's 3 entries
  CHECK(c[40] == 6.0f);
  std::fill(c.begin(), c.end(), 0.0f);
  tandem::BatchView<float> am{a.data(), 6, 4, 4, 1, 0}, bm{b.data(), 6, 5, 5, 1, 0};  // non-const views
  eng.matmul<float>(am, bm, cb, ta);
  CHECK(c[40] == 6.0f);
  tandem::BatchView<const float> a2{a.data(), 6, 4, 4, 2, 1};  // count 2, not broadcast, C has 3
  expect_error([&] { eng.matmul(a2, bb, cb, ta); }, "count 2");
  tandem::BatchView<float> overlapping{c.data(), 4, 5, 5, 3, 10};
  expect_error([&] { eng.matmul(ab, bb, overlapping, ta); }, "overlap");
  tandem::BatchView<float> none{c.data(), 4, 5, 5, 0, 20};
  expect_error([&] { eng.matmul(ab, bb, none, ta); }, "count 0");
  auto ba = eng.upload<float>(a), bb2 = eng.upload<float>(b), bc = eng.upload<float>(c);  // bc: 200 elements
  eng.matmul(ba.batch(6, 4, 1, 0), bb2.batch(6, 5, 1, 0), bc.batch(4, 5, 10, 20), ta);    // ends at 200
  expect_error([&] { eng.matmul(ba.batch(6, 4, 1, 0), bb2.batch(6, 5, 1, 0), bc.batch(4, 5, 11, 20), ta); },
               "reaches past");
}
