// The engine front end: backend selection, TANDEM_BACKEND, and every validation error.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

#include "tests/support.hpp"

using tandem::Backend;
using tandem::Engine;

namespace {

// Sets (or unsets, for nullptr) TANDEM_BACKEND for one scope and restores it afterwards.
class ScopedEnv {
 public:
  explicit ScopedEnv(const char* value) {
    if (const char* old = std::getenv("TANDEM_BACKEND")) old_ = old, had_ = true;
    if (value) setenv("TANDEM_BACKEND", value, 1);
    else unsetenv("TANDEM_BACKEND");
  }
  ~ScopedEnv() {
    if (had_) setenv("TANDEM_BACKEND", old_.c_str(), 1);
    else unsetenv("TANDEM_BACKEND");
  }

 private:
  std::string old_;
  bool had_ = false;
};

std::string message_of(auto&& f) {
  try {
    f();
  } catch (const tandem::Error& e) {
    return e.what();
  }
  return "(no tandem::Error thrown)";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("TANDEM_BACKEND selects the backend" * doctest::test_suite("common")) {
  const Backend expected_auto = test::cuda_usable() ? Backend::cuda : Backend::cpu;
  {
    ScopedEnv env(nullptr);
    CHECK(Engine().backend() == expected_auto);
    CHECK(tandem::auto_backend().backend == expected_auto);
    CHECK_FALSE(tandem::auto_backend().reason.empty());
  }
  {
    ScopedEnv env("auto");
    CHECK(Engine().backend() == expected_auto);
  }
  {
    ScopedEnv env("cpu");
    CHECK(Engine().backend() == Backend::cpu);
  }
  {
    ScopedEnv env("cuda");
    if (test::cuda_usable()) {
      CHECK(Engine().backend() == Backend::cuda);
    } else {
      // No silent fallback: the message says what to do.
      auto msg = message_of([] { Engine e; });
      CHECK(contains(msg, "TANDEM_BACKEND=cpu"));
    }
  }
  for (const char* bad : {"gpu", "CPU", "cuda ", "x"}) {
    ScopedEnv env(bad);
    auto msg = message_of([] { Engine e; });
    CAPTURE(msg);
    CHECK(contains(msg, "TANDEM_BACKEND"));
    CHECK(contains(msg, std::string("'") + bad + "'"));
    CHECK(contains(msg, "cpu, cuda and auto"));
  }
}

TEST_CASE("Engine(Backend) and backend_status agree" * doctest::test_suite("common")) {
  CHECK(Engine(Backend::cpu).backend() == Backend::cpu);
  auto status = tandem::backend_status();
  REQUIRE(status.size() == 2);
  CHECK(status[0].usable);
  if (test::cuda_usable()) CHECK(Engine(Backend::cuda).backend() == Backend::cuda);
  else CHECK_THROWS_AS(Engine{Backend::cuda}, tandem::Error);
  CHECK(Engine(Backend::cpu).device().compute_units >= 1);
}

TANDEM_BACKEND_TEST(kernel_lists, "kernel lists start with auto and every name runs") {
  auto r = eng.reduce_kernels();
  auto m = eng.matmul_kernels();
  REQUIRE(r.size() >= 2);
  REQUIRE(m.size() >= 2);
  CHECK(r[0] == "auto");
  CHECK(m[0] == "auto");
  if (eng.backend() == Backend::cpu) {
    CHECK(r == std::vector<std::string>{"auto", "tbb_vectorized", "tbb_deterministic", "serial"});
    CHECK(m == std::vector<std::string>{"auto", "eigen_tbb", "eigen_serial"});
  } else {
    for (const char* stage : {"interleaved_divergent", "interleaved_strided_index", "sequential_addressing",
                              "first_add_during_load", "unroll4_blocks", "unroll8_blocks", "unroll_last_warp",
                              "complete_unroll", "multiple_adds_per_thread", "warp_shuffle", "single_pass", "cub"})
      CHECK(std::count(r.begin(), r.end(), stage) == 1);
    for (const char* stage : {"naive", "tiled_16", "tiled_32", "register_tiled", "tensor_core_tf32",
                              "tensor_core_bf16", "wgmma_tf32", "wgmma_bf16", "cublas"})
      CHECK(std::count(m.begin(), m.end(), stage) == 1);
  }
}

TANDEM_BACKEND_TEST(reduce_errors, "reduce: every invalid input throws tandem::Error") {
  std::vector<float> x = {1, 2, 3};
  auto msg = message_of([&] { eng.sum<float>(x, {"no_such_kernel"}); });
  CHECK(contains(msg, "no_such_kernel"));
  CHECK(contains(msg, eng.reduce_kernels()[1]));  // lists the valid names
  CHECK_THROWS_AS(eng.min<float>(x, {"cublas"}), tandem::Error);
  CHECK(eng.sum(std::span<const float>()) == 0.0f);
  CHECK(eng.sum(std::span<const std::int32_t>()) == 0);
  CHECK(contains(message_of([&] { eng.min(std::span<const float>()); }), "empty"));
  CHECK_THROWS_AS(eng.max(std::span<const double>()), tandem::Error);
  CHECK_THROWS_AS(eng.mean(std::span<const std::int64_t>()), tandem::Error);
  CHECK(contains(message_of([&] { eng.sum(tandem::StridedView<float>{nullptr, 3, 1}); }), "null"));
  CHECK(contains(message_of([&] { eng.sum(tandem::StridedView<float>{x.data(), 3, 0}); }), "stride"));
  CHECK_THROWS_AS(eng.sum(tandem::StridedView<float>{x.data(), SIZE_MAX / 2, 4}), tandem::Error);
  auto buf = eng.upload<float>(x);
  CHECK(contains(message_of([&] { eng.sum(buf.view(1, 3, 1)); }), "past the buffer"));
  CHECK_THROWS_AS(eng.sum(buf.view(0, 2, 3)), tandem::Error);
  CHECK(eng.sum(buf.view(0, 2, 2)) == 4.0f);
  Engine other(Backend::cpu);
  auto foreign = other.upload<float>(x);
  CHECK(contains(message_of([&] { eng.sum(foreign); }), "another engine"));
  CHECK_THROWS_AS(eng.buffer<double>(SIZE_MAX / 4), tandem::Error);
}

TANDEM_BACKEND_TEST(matmul_errors, "matmul: every invalid input throws tandem::Error") {
  std::vector<float> a(12, 1), b(12, 1), c(16, 0);
  using V = tandem::MatrixView<const float>;
  using M = tandem::MatrixView<float>;
  // Shapes.
  CHECK(contains(message_of([&] { eng.matmul<float>(V{a.data(), 3, 4, 4}, V{b.data(), 3, 4, 4}, M{c.data(), 3, 4, 4}); }),
                 "shapes do not match"));
  CHECK_THROWS_AS(eng.matmul<float>(V{a.data(), 3, 4, 4}, V{b.data(), 4, 3, 3}, M{c.data(), 3, 4, 4}), tandem::Error);
  // ld < cols.
  CHECK(contains(message_of([&] { eng.matmul<float>(V{a.data(), 3, 4, 3}, V{b.data(), 4, 3, 3}, M{c.data(), 3, 3, 3}); }),
                 "ld"));
  CHECK_THROWS_AS(eng.matmul<float>(V{a.data(), 3, 4, 4}, V{b.data(), 4, 3, 3}, M{c.data(), 3, 3, 2}), tandem::Error);
  // A matrix wider than the address space (found by fuzz/fuzz_api: the extent check wrapped around).
  CHECK_THROWS_AS(eng.matmul<float>(V{a.data(), 1, 0, 0}, V{b.data(), 0, std::size_t(1) << 62, std::size_t(1) << 62},
                                    M{c.data(), 1, std::size_t(1) << 62, std::size_t(1) << 62}),
                  tandem::Error);
  // Null data.
  CHECK(contains(message_of([&] { eng.matmul<float>(V{nullptr, 3, 4, 4}, V{b.data(), 4, 3, 3}, M{c.data(), 3, 3, 3}); }),
                 "null"));
  // Overlap of C with A or B, including partial overlap.
  CHECK(contains(message_of([&] { eng.matmul<float>(V{a.data(), 2, 2, 2}, V{b.data(), 2, 2, 2}, M{a.data() + 3, 2, 2, 2}); }),
                 "overlaps"));
  CHECK_THROWS_AS(eng.matmul<float>(V{a.data(), 2, 2, 2}, V{c.data(), 2, 2, 2}, M{c.data(), 2, 2, 2}), tandem::Error);
  // Unknown kernel.
  CHECK(contains(message_of([&] { eng.matmul<float>(V{a.data(), 2, 2, 2}, V{b.data(), 2, 2, 2}, M{c.data(), 2, 2, 2}, {"fast"}); }),
                 "'fast'"));
  // Buffer matrices that reach past their buffer.
  auto ab = eng.upload<float>(a);
  auto bb = eng.upload<float>(b);
  auto cb = eng.buffer<float>(4);
  CHECK_THROWS_AS(eng.matmul(ab.matrix(3, 4), bb.matrix(4, 3), cb.matrix(3, 3)), tandem::Error);
  CHECK_THROWS_AS(eng.matmul(ab.matrix(2, 2), bb.matrix(2, 2), ab.matrix(2, 2, 2, 1)), tandem::Error);
  eng.matmul(ab.matrix(2, 2), bb.matrix(2, 2), cb.matrix(2, 2));
  CHECK(cb.to_vector() == std::vector<float>{2, 2, 2, 2});
}

TANDEM_BACKEND_TEST(one_engine_many_threads, "one engine used from 8 threads at once with mixed ops") {
  // Each thread runs its own mix of reductions and products on its own data and checks every result
  // against plain loops; exact data (small integers) makes every correct result exact.
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 g(1000 + t);
      std::uniform_int_distribution<int> d(-8, 8);
      for (int it = 0; it < 25; ++it) {
        const std::size_t n = 1 + g() % 200000;
        std::vector<float> x(n);
        std::int64_t expect = 0;
        int mx = -100;
        for (auto& v : x) {
          int i = d(g);
          v = float(i);
          expect += i;
          mx = std::max(mx, i);
        }
        const auto& kernels = eng.reduce_kernels();
        const tandem::ReduceOptions o{kernels[g() % kernels.size()]};
        if (eng.sum<float>(x, o) != float(expect)) ++failures;
        if (eng.max<float>(x, o) != float(mx)) ++failures;
        // 3x3 product of small integers: exact in float.
        std::vector<float> a(9), b(9), c(9);
        for (auto& v : a) v = float(d(g));
        for (auto& v : b) v = float(d(g));
        eng.matmul<float>({a.data(), 3, 3, 3}, {b.data(), 3, 3, 3}, {c.data(), 3, 3, 3});
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) {
            float r = 0;
            for (int p = 0; p < 3; ++p) r += a[i * 3 + p] * b[p * 3 + j];
            if (c[i * 3 + j] != r) ++failures;
          }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
}

// CUDA only: a host allocation of any size may succeed on a machine that overcommits memory (it did on
// the GPU machine), so the CPU backend cannot be made to fail this way.
TEST_CASE("cuda: out of memory throws tandem::Error and the engine stays usable" * doctest::test_suite("cuda") *
          doctest::skip(!test::cuda_usable())) {
  const Engine eng(Backend::cuda);
  // 2^44 floats = 64 TiB: more than any GPU has.
  const auto msg = message_of([&] { auto b = eng.buffer<float>(std::size_t(1) << 44); });
  CAPTURE(msg);
  CHECK(contains(msg, "out of"));
  std::vector<float> x(1000, 0.5f);
  CHECK(eng.sum<float>(x) == 500.0f);
  auto b = eng.upload<float>(x);
  CHECK(eng.max(b) == 0.5f);
}
