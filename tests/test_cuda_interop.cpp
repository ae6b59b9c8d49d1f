// The CUDA engine inside an application's own CUDA code (suite cuda): cudaMalloc'd memory, the
// application's stream and kernels (tests/cuda/app_kernels.cu), CUDA graphs, two engines on one GPU,
// default-stream work running while an engine starts, the caller's current device, and host views
// whose extent is far larger than what they reduce, a grouped product captured into a graph. References: plain
// loops over the values the application kernel writes (float(i % 7) - 3 + offset), or over the operands.
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/cuda/app_kernels.hpp"
#include "tests/support.hpp"

using tandem::Backend;
using tandem::Engine;

namespace {

void check(cudaError_t err) {
  if (err != cudaSuccess) throw std::runtime_error(cudaGetErrorString(err));
}

// The sum of float(i % 7) - 3 + offset over i < n, exactly (in long double).
double app_sum(std::size_t n, float offset) {
  long double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += float(i % 7) - 3.0f + offset;
  return double(s);
}

struct DeviceArray {
  float* p = nullptr;
  explicit DeviceArray(std::size_t n) { check(cudaMalloc(&p, n * sizeof(float))); }
  ~DeviceArray() { cudaFree(p); }
};

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
};

// The number of CUDA devices where CUDA is usable, else 0: read when the tests are registered.
int cuda_devices() {
  int count = 0;
  if (!test::cuda_usable() || cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

// Whether f throws the tandem::Error of a call that cannot run on a stream being captured into a CUDA graph.
template <class F>
bool refused_in_capture(F&& f) {
  try {
    f();
  } catch (const tandem::Error& e) {
    return std::string(e.what()).find("CUDA graph") != std::string::npos;
  }
  return false;
}

// A test of suite cuda, reported skipped (never passed) where CUDA is not usable or `skip_when` holds.
#define CUDA_TEST_UNLESS(title, skip_when) \
  TEST_CASE("cuda: " title* doctest::test_suite("cuda") * doctest::skip(!test::cuda_usable() || (skip_when)))
#define CUDA_TEST(title) CUDA_TEST_UNLESS(title, false)

}  // namespace

CUDA_TEST("interop: an application kernel fills wrapped memory, sum_into follows on the same stream") {
  const std::size_t n = 3'000'017;
  DeviceArray x(n);
  Stream app;
  const Engine eng(Backend::cuda, {.device = 0, .stream = app.s});
  const tandem::Buffer<float> in = eng.wrap(x.p, n);
  const tandem::Buffer<float> out = eng.buffer<float>(8);
  for (int round = 0; round < 8; ++round) {
    test_app::fill(x.p, n, 0.25f * round, app.s);  // no host synchronisation between the two
    eng.sum_into(in, out, std::size_t(round));
  }
  check(cudaStreamSynchronize(app.s));
  const std::vector<float> got = out.to_vector();
  for (int round = 0; round < 8; ++round)
    CHECK(double(got[round]) == doctest::Approx(app_sum(n, 0.25f * round)).epsilon(1e-6));
}

CUDA_TEST("interop: default-stream work still running while a fresh engine makes its first calls") {
  test_app::spin(200, 0);  // legacy default stream, 200 ms
  for (int e = 0; e < 3; ++e) {
    const Engine eng(Backend::cuda);  // its own non-blocking stream; zeroes its counter on it
    for (std::size_t n : {std::size_t(1) << 16, std::size_t(1) << 20, std::size_t(3'000'001)}) {
      const tandem::Buffer<float> x = eng.buffer<float>(n);
      test_app::fill(x.data(), n, 1.0f, nullptr);  // also on the default stream, before the sum
      check(cudaDeviceSynchronize());
      for (const char* k : {"single_pass", "warp_shuffle", "auto"})
        CHECK(double(eng.sum(x, {.kernel = k})) == doctest::Approx(app_sum(n, 1.0f)).epsilon(1e-6));
    }
  }
  check(cudaDeviceSynchronize());
}

CUDA_TEST("interop: 10 calls captured into a CUDA graph, replayed 100 times") {
  const std::size_t n = 1'000'003;
  DeviceArray x(n);
  Stream app;
  const Engine eng(Backend::cuda, {.stream = app.s});
  const tandem::Buffer<float> in = eng.wrap(x.p, n);
  tandem::Buffer<float> out = eng.buffer<float>(10);
  const tandem::Buffer<double> mean = eng.buffer<double>(1);
  auto calls = [&] {
    for (int i = 0; i < 8; ++i) eng.sum_into(in.view(std::size_t(i), n - 8), out, std::size_t(i));
    eng.max_into(in, out, 8);
    eng.mean_into(in, mean, 0);
  };
  test_app::fill(x.p, n, 0.0f, app.s);
  calls();  // once before the capture: the engine sizes its scratch memory
  eng.synchronize();

  cudaGraph_t graph = nullptr;
  check(cudaStreamBeginCapture(app.s, cudaStreamCaptureModeThreadLocal));
  test_app::fill(x.p, n, 0.0f, app.s);
  calls();
  // A call that must wait cannot be captured: a clear error, and the capture is not broken.
  CHECK(refused_in_capture([&] { (void)eng.sum(in); }));
  check(cudaStreamEndCapture(app.s, &graph));
  cudaGraphExec_t exec = nullptr;
  check(cudaGraphInstantiate(&exec, graph, 0));
  out.upload(std::vector<float>(10, -1.0f));
  for (int r = 0; r < 100; ++r) check(cudaGraphLaunch(exec, app.s));
  check(cudaStreamSynchronize(app.s));
  const std::vector<float> got = out.to_vector();
  std::vector<float> h(n);
  for (std::size_t i = 0; i < n; ++i) h[i] = float(i % 7) - 3.0f;
  for (int i = 0; i < 8; ++i) {
    long double s = 0;
    for (std::size_t j = std::size_t(i); j < std::size_t(i) + n - 8; ++j) s += h[j];
    CHECK(double(got[i]) == doctest::Approx(double(s)).epsilon(1e-6));
  }
  CHECK(got[8] == 3.0f);
  CHECK(mean.to_vector()[0] == doctest::Approx(app_sum(n, 0.0f) / double(n)));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

CUDA_TEST("interop: two engines on one GPU from two threads") {
  std::vector<float> h(1'000'003);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = float(i % 7) - 3.0f;
  const double expect = app_sum(h.size(), 0.0f);
  int wrong[2] = {0, 0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      const Engine eng(Backend::cuda);
      const tandem::Buffer<float> x = eng.upload<float>(h);
      for (int i = 0; i < 100; ++i) {
        if (std::fabs(double(eng.sum(x)) - expect) > 1e-3 * std::fabs(expect) + 1) ++wrong[t];
        if (std::fabs(double(eng.sum(h)) - expect) > 1e-3 * std::fabs(expect) + 1) ++wrong[t];
      }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong[0] == 0);
  CHECK(wrong[1] == 0);
}

CUDA_TEST("interop: the caller's current device is the same after every call") {
  int count = 0;
  check(cudaGetDeviceCount(&count));
  const int other = count > 1 ? 1 : 0;
  check(cudaSetDevice(other));
  {
    const Engine eng(Backend::cuda, {.device = 0});
    int now = -1;
    check(cudaGetDevice(&now));
    CHECK(now == other);
    const tandem::Buffer<float> x = eng.upload<float>(std::vector<float>(1000, 1.0f));
    CHECK(eng.sum(x) == 1000.0f);
    check(cudaGetDevice(&now));
    CHECK(now == other);
  }
  int now = -1;
  check(cudaGetDevice(&now));
  CHECK(now == other);
  check(cudaSetDevice(0));
}

CUDA_TEST("interop: a host view reduces only its elements, with bounded device memory") {
  // One column of a 4 GiB row-major matrix that is never touched except for the column itself: the
  // pages stay unbacked, so the test needs little host memory, and copying the extent would be slow.
  const std::size_t rows = 4096, ld = std::size_t(1) << 18;
  const std::size_t bytes = rows * ld * sizeof(float);
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  REQUIRE(m != MAP_FAILED);
  float* a = static_cast<float*>(m);
  long double expect = 0;
  for (std::size_t i = 0; i < rows; ++i) expect += (a[i * ld + 5] = float(i % 11) - 5.0f);
  const Engine eng(Backend::cuda);
  (void)eng.sum(std::vector<float>{1.0f});  // the engine's fixed allocations first
  std::size_t free_before = 0, free_after = 0, total = 0;
  check(cudaMemGetInfo(&free_before, &total));
  const tandem::StridedView<float> column{a + 5, rows, ld};
  CHECK(double(eng.sum(column)) == double(expect));
  CHECK(double(eng.sum(column, {.deterministic = true})) == double(expect));
  check(cudaMemGetInfo(&free_after, &total));
  CHECK(free_before - std::min(free_before, free_after) < (std::size_t(128) << 20));
  munmap(m, bytes);
}

// Needs two GPUs (the device tool's nvidia-h200-x2); skipped elsewhere.
CUDA_TEST_UNLESS("interop: a second GPU: an engine on it, and its memory refused by an engine of another GPU",
                 cuda_devices() < 2) {
  check(cudaSetDevice(1));
  DeviceArray on1(4096);
  check(cudaMemset(on1.p, 0, 4096 * sizeof(float)));
  check(cudaDeviceSynchronize());
  check(cudaSetDevice(0));
  const Engine eng0(Backend::cuda, {.device = 0});
  CHECK(test::contains(test::message_of([&] { (void)eng0.wrap(on1.p, 4096); }), "device memory of GPU 1"));
  const Engine eng1(Backend::cuda, {.device = 1});
  CHECK(eng1.device().name == eng0.device().name);
  const tandem::Buffer<float> x = eng1.wrap(on1.p, 4096);
  CHECK(eng1.sum(x) == 0.0f);
  const tandem::Buffer<float> y = eng1.upload<float>(std::vector<float>(777, 2.0f));
  CHECK(eng1.sum(y) == 1554.0f);
  int now = -1;
  check(cudaGetDevice(&now));
  CHECK(now == 0);
}

CUDA_TEST("interop: a grouped product captured into a CUDA graph replays after its group sizes are gone") {
  // The captured call must not leave the graph reading host memory of the call (where a Hopper rung takes the
  // groups in one launch, its group table): another grouping runs between the capture and the replay.
  Stream app;
  const Engine eng(Backend::cuda, {.stream = app.s});
  const std::size_t m = 3 + 64 + 1 + 130, k = 72, n = 136, groups = 4;
  std::vector<tandem::bfloat16> a(m * k), b(groups * k * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = tandem::bfloat16(float(int(i % 7) - 3));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = tandem::bfloat16(float(int(i % 5) - 2));
  const auto da = eng.upload<tandem::bfloat16>(a), db = eng.upload<tandem::bfloat16>(b);
  tandem::Buffer<float> dc = eng.buffer<float>(m * n);
  auto call = [&](std::vector<std::size_t> group_sizes, const tandem::Buffer<float>& into) {
    auto sizes = std::make_unique<std::vector<std::size_t>>(std::move(group_sizes));
    eng.matmul_grouped(da.matrix(m, k), db.batch(k, n, groups, k * n), into.matrix(m, n), *sizes, {});
    std::fill(sizes->begin(), sizes->end(), std::size_t(0));
  };
  call({3, 64, 1, 130}, dc);  // once before the capture: the engine sizes its scratch memory
  const tandem::Buffer<std::int64_t> order = eng.buffer<std::int64_t>(m * n);
  const tandem::Buffer<float> wide = eng.buffer<float>(2 * 4000), top = eng.buffer<float>(2 * 1100);
  const tandem::Buffer<std::int64_t> top_at = eng.buffer<std::int64_t>(2 * 1100);
  eng.synchronize();
  cudaGraph_t graph = nullptr;
  check(cudaStreamBeginCapture(app.s, cudaStreamCaptureModeThreadLocal));
  call({3, 64, 1, 130}, dc);
  // Calls that wait for the stream are refused with a clear error (argsort; topk past k = 1024), and the
  // capture goes on unbroken.
  CHECK(refused_in_capture([&] { eng.argsort(dc.matrix(m, n), tandem::Per::row, order.matrix(m, n)); }));
  CHECK(refused_in_capture(
      [&] { eng.topk(wide.matrix(2, 4000), tandem::Per::row, 1100, top.matrix(2, 1100), top_at.matrix(2, 1100)); }));
  check(cudaStreamEndCapture(app.s, &graph));
  cudaGraphExec_t exec = nullptr;
  check(cudaGraphInstantiate(&exec, graph, 0));
  // Another grouping run before the replay (the engine's scratch then holds its group table), then the graph.
  const tandem::Buffer<float> other = eng.buffer<float>(m * n);
  call({130, 1, 64, 3}, other);
  dc.upload(std::vector<float>(m * n, -7.0f));
  check(cudaGraphLaunch(exec, app.s));
  check(cudaStreamSynchronize(app.s));
  const std::vector<float> got = dc.to_vector();
  const std::size_t first[] = {0, 3, 67, 68, m};
  std::size_t bad = 0;
  for (std::size_t g = 0; g < groups; ++g)
    for (std::size_t i = first[g]; i < first[g + 1]; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double dot = 0;
        for (std::size_t p = 0; p < k; ++p) dot += double(float(a[i * k + p])) * double(float(b[(g * k + p) * n + j]));
        bad += double(got[i * n + j]) != dot;
      }
  CHECK(bad == 0);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

CUDA_TEST("interop: an engine's first products captured into a CUDA graph: own kernels run, cuBLAS refuses clearly") {
  // The engine makes its cuBLAS handle on its first product, which a stream being captured cannot do: a product on
  // an own kernel is captured without one; one on cuBLAS is refused with a tandem::Error, the capture unbroken.
  Stream app;
  const Engine eng(Backend::cuda, {.stream = app.s});
  const std::size_t m = 33, k = 20, n = 17;
  std::vector<float> a(m * k), b(k * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 7) - 3);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 5) - 2);
  const auto da = eng.upload<float>(a), db = eng.upload<float>(b);
  tandem::Buffer<float> dc = eng.buffer<float>(m * n);
  eng.synchronize();
  cudaGraph_t graph = nullptr;
  check(cudaStreamBeginCapture(app.s, cudaStreamCaptureModeThreadLocal));
  eng.matmul(da.matrix(m, k), db.matrix(k, n), dc.matrix(m, n), {"register_tiled"});
  CHECK(refused_in_capture([&] { eng.matmul(da.matrix(m, k), db.matrix(k, n), dc.matrix(m, n), {"cublas"}); }));
  check(cudaStreamEndCapture(app.s, &graph));
  cudaGraphExec_t exec = nullptr;
  check(cudaGraphInstantiate(&exec, graph, 0));
  dc.upload(std::vector<float>(m * n, -7.0f));
  check(cudaGraphLaunch(exec, app.s));
  check(cudaStreamSynchronize(app.s));
  const std::vector<float> got = dc.to_vector();
  std::size_t bad = 0;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double dot = 0;
      for (std::size_t p = 0; p < k; ++p) dot += double(a[i * k + p]) * double(b[p * n + j]);
      bad += double(got[i * n + j]) != dot;
    }
  CHECK(bad == 0);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}
