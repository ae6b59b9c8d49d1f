// Data where the application keeps it, on every backend: wrapped memory (Engine::wrap), EngineOptions and
// TANDEM_DEVICE, results that don't wait (*_into + synchronize), and host inputs larger than one staging
// piece. References: plain loops here (long double sums, std::min/max with the NaN rule), or the same
// engine's synchronous call where the point is that *_into stores the same result.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "tests/support.hpp"

using tandem::Backend;
using tandem::Engine;

namespace {

using test::contains;
using test::message_of;
using ScopedVar = test::ScopedVar;

// Values i % 7 - 3 + offset: exact in float sums of the sizes used here.
std::vector<float> pattern(std::size_t n, float offset = 0.25f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = float(i % 7) - 3.0f + offset;
  return v;
}

}  // namespace

TANDEM_BACKEND_TEST(wrap_memory, "wrap: a Buffer over the caller's memory, used in place, never freed") {
  const std::vector<float> host = pattern(1000);
  long double expect = 0;
  for (float v : host) expect += v;
  // Memory the caller owns: host memory on the CPU, device memory of the engine's GPU on CUDA (here from
  // a Buffer of the same engine, so that this test needs no CUDA header).
  tandem::Buffer<float> owner = eng.upload<float>(host);
  {
    tandem::Buffer<float> wrapped = eng.wrap(owner.data(), owner.size());
    CHECK(wrapped.size() == host.size());
    CHECK(wrapped.data() == owner.data());
    CHECK(double(eng.sum(wrapped)) == double(expect));
    float every_other_min = host[3];
    for (std::size_t i = 3; i < 3 + 2 * 10; i += 2) every_other_min = std::min(every_other_min, host[i]);
    CHECK(eng.min(wrapped.view(3, 10, 2)) == every_other_min);
    wrapped.upload(std::vector<float>{42.0f}, 5);  // writes through to the caller's memory
  }
  // The wrapped Buffer is gone; the memory was not freed and holds what was written through it.
  CHECK(owner.to_vector()[5] == 42.0f);
  CHECK(eng.wrap<float>(nullptr, 0).size() == 0);
  CHECK(contains(message_of([&] { (void)eng.wrap<float>(nullptr, 5); }), "null"));
  if (eng.backend() == Backend::cuda) {
    std::vector<float> not_device(16);
    const std::string m = message_of([&] { (void)eng.wrap(not_device.data(), not_device.size()); });
    CHECK(contains(m, "host memory"));
  }
}

TANDEM_BACKEND_TEST(into_results, "*_into: results stored in a Buffer equal the synchronous results") {
  for (std::size_t n : {std::size_t(1), std::size_t(257), std::size_t(100003)}) {
    std::vector<float> h = pattern(n);
    h[n / 2] = -0.0f;
    const tandem::Buffer<float> x = eng.upload<float>(h);
    const tandem::Buffer<float> out = eng.buffer<float>(4);
    const tandem::Buffer<double> means = eng.buffer<double>(2);
    eng.sum_into(x, out, 0);
    eng.min_into(x, out, 1);
    if (n > 1) eng.max_into(x.view(1, n - 1), out, 3);
    eng.mean_into(x, means, 1);
    eng.synchronize();
    const std::vector<float> got = out.to_vector();
    CHECK(test::same_bits(got[0], eng.sum(x)));
    CHECK(test::same_bits(got[1], eng.min(x)));
    if (n > 1) CHECK(test::same_bits(got[3], eng.max(x.view(1, n - 1))));
    CHECK(test::same_bits(means.to_vector()[1], eng.mean(x)));
    // Independent of the engine: the sum and the minimum by plain loops.
    long double s = 0;
    for (float v : h) s += v;
    CHECK(double(got[0]) == doctest::Approx(double(s)).epsilon(1e-6));
    CHECK(got[1] == *std::min_element(h.begin(), h.end()));
  }
  // Integer sums are int64; NaN is stored canonical; an empty sum stores 0.
  const std::vector<std::int32_t> ints(1000, -7);
  const tandem::Buffer<std::int64_t> isum = eng.buffer<std::int64_t>(1);
  eng.sum_into(eng.upload<std::int32_t>(ints), isum);
  const tandem::Buffer<float> nan_in = eng.upload<float>(std::vector<float>{1.0f, -std::nanf("0x123"), 2.0f});
  const tandem::Buffer<float> f = eng.buffer<float>(2);
  eng.max_into(nan_in, f, 0);
  eng.sum_into(nan_in.view(0, 0), f, 1);
  eng.synchronize();
  CHECK(isum.to_vector()[0] == -7000);
  CHECK(test::same_bits(f.to_vector()[0], std::numeric_limits<float>::quiet_NaN()));
  CHECK(test::same_bits(f.to_vector()[1], 0.0f));
}

TANDEM_BACKEND_TEST(into_errors, "*_into: invalid outputs and empty inputs throw at the call") {
  const tandem::Buffer<float> x = eng.upload<float>(pattern(10));
  const tandem::Buffer<float> out = eng.buffer<float>(2);
  CHECK(contains(message_of([&] { eng.sum_into(x, out, 2); }), "index 2"));
  CHECK(contains(message_of([&] { eng.min_into(x.view(0, 0), out, 0); }), "empty input"));
  CHECK(contains(message_of([&] { eng.sum_into(x, tandem::Buffer<float>{}, 0); }), "empty"));
  const Engine other(Backend::cpu);
  const tandem::Buffer<float> foreign = other.buffer<float>(2);
  CHECK(contains(message_of([&] { eng.sum_into(x, foreign, 0); }), "another engine"));
  CHECK(contains(message_of([&] { eng.sum_into(x, out, 0, {.kernel = "no_such_kernel"}); }), "no_such_kernel"));
}

TANDEM_BACKEND_TEST(engine_options, "EngineOptions and TANDEM_DEVICE choose the device; bad values are errors") {
  const Backend b = eng.backend();
  CHECK(Engine(b, {.device = 0}).backend() == b);
  CHECK(contains(message_of([&] { (void)Engine(b, {.device = -2}); }), "EngineOptions::device"));
  {
    ScopedVar v("TANDEM_DEVICE", "zero");
    if (b == Backend::cuda)  // only backends with devices to pick read TANDEM_DEVICE; the CPU ignores it
      CHECK(contains(message_of([&] { (void)Engine(b, {}); }), "TANDEM_DEVICE='zero'"));
    else
      CHECK(Engine(b, {}).backend() == b);
    CHECK(Engine(b, {.device = 0}).backend() == b);  // an explicit device wins over the variable
  }
  {
    ScopedVar v("TANDEM_DEVICE", "0");
    CHECK(Engine(b, {}).sum(std::vector<int>{1, 2, 3}) == 6);
  }
  if (b == Backend::cuda) {
    ScopedVar v("TANDEM_DEVICE", "4096");
    CHECK(contains(message_of([&] { (void)Engine(b, {}); }), "does not exist"));
  }
}

TANDEM_BACKEND_TEST(host_inputs_in_pieces, "host spans and strided views larger than one staging piece") {
  // 32 MiB pieces: 8 Mi floats. Sizes just past one and two pieces, contiguous and strided.
  const std::size_t piece = std::size_t(8) << 20;
  for (std::size_t n : {piece + 1, 2 * piece + 4097}) {
    std::vector<float> h = pattern(n, 0.5f);
    long double s = 0;
    for (float v : h) s += v;
    CHECK(double(eng.sum(h)) == doctest::Approx(double(s)).epsilon(1e-6));
    // A named stage (on CUDA every piece then goes through the GPU; "auto" shares them with the CPU).
    for (const tandem::KernelInfo& k : eng.reduce_kernel_info())
      if (k.name != "auto" && !k.baseline && k.accepts(tandem::Dtype::f32) && k.accepts(tandem::Op::sum)) {
        CAPTURE(k.name);
        CHECK(double(eng.sum(h, {.kernel = k.name})) == doctest::Approx(double(s)).epsilon(1e-6));
        break;
      }
    // Deterministic: bitwise equal to the CPU engine's canonical order.
    const Engine cpu(Backend::cpu);
    CHECK(test::same_bits(eng.sum(h, {.deterministic = true}), cpu.sum(h, {.deterministic = true})));
    h[n - 3] = std::nanf("");
    CHECK(std::isnan(eng.max(h)));
    h[n - 3] = -100.0f;
    CHECK(eng.min(h) == -100.0f);
    // Indices across pieces (each piece reduces its own part; its indices are offset by its start).
    CHECK(eng.argmin(h) == n - 3);
    h[piece - 3] = 1000.0f;
    h[n - 1] = 1000.0f;  // a tie in a later piece: the first wins
    CHECK(eng.argmax(h) == piece - 3);
    CHECK(eng.argmax(h, {.kernel = eng.reduce_kernel_info().back().name}) == piece - 3);
    h[piece - 3] = h[n - 1] = 0.5f;
    // Every third element of the first n / 3 * 3: only those elements are reduced.
    const tandem::StridedView<float> third{h.data() + 1, n / 3, 3};
    long double t = 0;
    for (std::size_t i = 0; i < third.count; ++i) t += h[1 + 3 * i];
    CHECK(double(eng.sum(third)) == doctest::Approx(double(t)).epsilon(1e-6));
    CHECK(test::same_bits(eng.sum(third, {.deterministic = true}), cpu.sum(third, {.deterministic = true})));
  }
  std::vector<std::int32_t> ints(piece + 12345);
  std::iota(ints.begin(), ints.end(), -1000);
  std::int64_t isum = 0;
  for (std::int32_t v : ints) isum += v;
  CHECK(eng.sum(ints) == isum);
}
