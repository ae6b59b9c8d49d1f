// Matmul: every kernel of the backend, shapes that miss every tile, ld > cols, poisoned outputs,
// NaN in the padding of A and B (a kernel that reads padding fails), untouched padding of C.
//
// Reference: the test-support library's matmul_reference (verify/reference.hpp: every element,
// accumulated in double for float and long double for double). Bound per element (bounds.hpp):
//   |C - ref| <= (c_in + 2 * K * u) * sum_k |a_ik| |b_kj|
// with u the unit roundoff of the element type and c_in the input rounding of the kernel's
// KernelInfo::precision (0 for full; 2^-9 for tf32; 2^-6 for bf16). A kernel whose KernelInfo does not
// list the dtype must be refused with tandem::Error; one whose KernelInfo says it does not run here
// (runs_here: the device lacks its requirement, e.g. compute capability 9.0) must throw tandem::Error naming it.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "tests/support.hpp"

namespace {

struct Shape {
  std::size_t m, k, n;
};

// The last four also take each tile shape of the wgmma stages on an H100/H200 (132 SMs; wgmma.cu,
// choose_shape): 128 x 64, the short-K 128 x 64, 128 x 256 and 128 x 128.
const Shape kShapes[] = {{1, 1, 1},          {3, 3, 3},        {17, 33, 65},      {129, 1, 257},
                         {64, 64, 64},       {2, 300, 3},      {255, 257, 253},   {33, 17, 129},
                         {1000, 1000, 1000}, {1537, 15, 1543}, {1537, 260, 1543}, {1024, 260, 2000}};

template <class T>
struct Problem {
  std::size_t m, k, n, lda, ldb, ldc;
  test::Vector<T> a, b;
  test::MatmulReference<T> ref;

  Problem(Shape s, test::SplitMix64& g) : m(s.m), k(s.k), n(s.n), lda(s.k + 2), ldb(s.n + 5), ldc(s.n + 3) {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    a.assign(m * lda, nan);  // padding stays NaN: reading it poisons the result
    b.assign(k * ldb, nan);
    for (std::size_t i = 0; i < m; ++i) test::fill<T>(std::span<T>(a.data() + i * lda, k), g);
    for (std::size_t p = 0; p < k; ++p) test::fill<T>(std::span<T>(b.data() + p * ldb, n), g);
    ref = test::matmul_reference<T>(A(), B());
  }
  tandem::MatrixView<const T> A() const { return {a.data(), m, k, lda}; }
  tandem::MatrixView<const T> B() const { return {b.data(), k, n, ldb}; }
};

// C (ldc apart, sentinel in the padding) against the reference within the bound of `info`'s precision.
template <class T>
void check_result(const Problem<T>& p, const test::Vector<T>& c, const tandem::KernelInfo& info, T sentinel) {
  const test::MatmulVerdict v = test::verify_matmul<T>({c.data(), p.m, p.n, p.ldc}, p.ref, info.precision);
  for (const auto& bad : v.first_bad)
    MESSAGE("C(" << bad.i << "," << bad.j << ") = " << test::show(bad.got) << ", expected " << test::show(bad.expected)
                 << " +- " << test::show(bad.bound));
  std::size_t bad_pad = 0;
  for (std::size_t i = 0; i < p.m; ++i)
    for (std::size_t j = p.n; j < p.ldc; ++j) bad_pad += !test::same_bits(c[i * p.ldc + j], sentinel);
  CHECK_MESSAGE(v.ok(), info.name << ": " << v.problem());
  CHECK_MESSAGE(bad_pad == 0, info.name << ": " << bad_pad << " padding elements of C were written");
}

template <class T>
void check_shapes(const tandem::Engine& eng) {
  test::SplitMix64 g{99};
  const T sentinel = T(-12345.678);  // poison: any element left unwritten fails the bound
  for (Shape s : kShapes) {
    if (test::quick() && s.m * s.k * s.n > 100000) continue;
    Problem<T> p(s, g);
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    for (const tandem::KernelInfo& info : eng.matmul_kernel_info()) {
      const std::string& k = info.name;
      CAPTURE(k);
      test::Vector<T> c(p.m * p.ldc, sentinel);
      tandem::MatrixView<T> cv{c.data(), p.m, p.n, p.ldc};
      if (!info.accepts(tandem::dtype_of<T>)) {
        CHECK_THROWS_AS(eng.matmul(p.A(), p.B(), cv, {k}), tandem::Error);
        continue;
      }
      if (test::run_kernel(info, [&] { eng.matmul(p.A(), p.B(), cv, {k}); })) check_result(p, c, info, sentinel);
    }
  }
}

}  // namespace

TANDEM_BACKEND_TEST(matmul_every_kernel_and_shape, "matmul float and double: every kernel, shapes missing every tile") {
  test::for_each_type<tandem::matmul_element_types>([&]<class T>() {  // (16-bit inputs: test_float16.cpp)
    if constexpr (!tandem::is_storage_type_v<T>) check_shapes<T>(eng);
  });
}

TANDEM_BACKEND_TEST(matmul_buffers, "matmul: device-resident buffers with offsets and ld") {
  test::SplitMix64 g{5};
  Problem<float> p({37, 41, 43}, g);
  const float sentinel = 77.25f;
  auto a = eng.upload<float>(p.a);
  auto b = eng.upload<float>(p.b);
  for (const tandem::KernelInfo& info : eng.matmul_kernel_info()) {
    const std::string& k = info.name;
    CAPTURE(k);
    REQUIRE(info.accepts(tandem::Dtype::f32));  // every matmul kernel takes float
    // C starts 4 elements into its buffer, which holds sentinels before and around it.
    std::vector<float> host_c(4 + p.m * p.ldc, sentinel);
    auto c = eng.upload<float>(host_c);
    if (!test::run_kernel(info, [&] {
          eng.matmul(a.matrix(p.m, p.k, p.lda), b.matrix(p.k, p.n, p.ldb), c.matrix(p.m, p.n, p.ldc, 4), {k});
        }))
      continue;
    auto back = c.to_vector();
    for (int i = 0; i < 4; ++i) CHECK(back[i] == sentinel);
    check_result(p, test::Vector<float>(back.begin() + 4, back.end()), info, sentinel);
  }
}

TANDEM_BACKEND_TEST(matmul_empty_dimensions, "matmul: K = 0 gives zeros, M or N = 0 writes nothing") {
  std::vector<double> a(6, 1.0), b(6, 1.0), c(12, 5.0);
  using V = tandem::MatrixView<const double>;
  using M = tandem::MatrixView<double>;
  for (const tandem::KernelInfo& info : eng.matmul_kernel_info()) {
    if (!info.accepts(tandem::Dtype::f64) || !info.runs_here) continue;
    const std::string& k = info.name;
    CAPTURE(k);
    std::fill(c.begin(), c.end(), 5.0);
    eng.matmul<double>(V{a.data(), 3, 0, 0}, V{b.data(), 0, 4, 4}, M{c.data(), 3, 4, 4}, {k});
    CHECK(std::count(c.begin(), c.end(), 0.0) == 12);
    std::fill(c.begin(), c.end(), 5.0);
    eng.matmul<double>(V{a.data(), 0, 2, 2}, V{b.data(), 2, 3, 3}, M{c.data(), 0, 3, 3}, {k});
    eng.matmul<double>(V{nullptr, 0, 0, 0}, V{nullptr, 0, 0, 0}, M{nullptr, 0, 0, 0}, {k});
    CHECK(std::count(c.begin(), c.end(), 5.0) == 12);
    // A batch in buffers whose A and B are empty (K = 0) but have strides: the engine passes no data
    // for them, and nothing may offset it (clang's UBSan reports an offset applied to a null pointer;
    // fuzz/corpus/matmul-k0-batch-null replays that under the fuzz build). C = beta * C.
    auto da = eng.upload<double>(a), db = eng.upload<double>(b), dc = eng.upload<double>(std::vector<double>(36, 5.0));
    tandem::MatmulOptions o{k};
    o.beta = 2;
    eng.matmul(da.batch(3, 0, 3, 2, 1), db.batch(0, 4, 3, 2, 4), dc.batch(3, 4, 3, 12, 4), o);
    const std::vector<double> back = dc.to_vector();
    CHECK(std::count(back.begin(), back.end(), 10.0) == 36);
  }
}

// M * N past 2^31 elements of C (32-bit index arithmetic would wrap): ~8.6 GB of float C, so it runs only
// with TANDEM_TEST_LARGE=1. Checked on sampled elements, the last rows and columns included.
TANDEM_BACKEND_TEST_UNLESS(matmul_past_2_31, "matmul: M * N past 2^31 (TANDEM_TEST_LARGE=1)", !test::large()) {
  const std::size_t m = 65536 + 7, k = 3, n = 32768 + 5;  // m * n = 2^31 + ...
  std::vector<float> a(m * k), b(k * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 13) - 6);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 7) - 3);
  auto da = eng.upload<float>(a), db = eng.upload<float>(b);
  auto dc = eng.buffer<float>(m * n);
  std::vector<std::string> kernels = {"auto"};
  if (eng.backend() == tandem::Backend::cuda) kernels = {"register_tiled", "tiled_16", "cublas"};
  test::SplitMix64 g{3};
  for (const auto& kernel : kernels) {
    CAPTURE(kernel);
    eng.matmul(da.matrix(m, k), db.matrix(k, n), dc.matrix(m, n), {kernel});
    std::size_t bad = 0;
    for (int s = 0; s < 2000; ++s) {
      const std::size_t i = s < 10 ? m - 1 - s : g.below(m), j = s < 10 ? n - 1 - s : g.below(n);
      float expect = 0;  // small integers: exact in any order
      for (std::size_t p = 0; p < k; ++p) expect += a[i * k + p] * b[p * n + j];
      float got = 0;
      dc.download(std::span<float>(&got, 1), i * n + j);
      bad += got != expect;
    }
    CHECK(bad == 0);
  }
}
