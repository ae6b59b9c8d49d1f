// What bench_cpu and bench_cuda share: benchmark names, random inputs with host references, the
// counters every benchmark reports, the read-sweep reference (sweep_bytes_per_second), and the
// registration of the engine benchmarks (reductions, matrix products, front-end overhead), which are the
// same on every backend.
//
// Names:   reduce/<backend>/<kernel>/<op>/<type>/n:<n>    matmul/<backend>/<kernel>/<type>/<m>[x<k>x<n>]
//          baseline/<what>/...                             overhead/<backend>/<path>/sum/float/n:16
//          types/<backend>/<op>/<type>/bytes:<B>           every element type over the same bytes
// Google Benchmark appends the clock to every name ("/real_time", or "/manual_time" for the GPU read
// sweep), and --benchmark_filter sees that suffix, so anchor a filter on "/" rather than "$": the CI
// smoke run is  --benchmark_filter='(n:4096|/512)/' --benchmark_min_time=0.01  (1.7.1 takes seconds
// as a plain number). Without real or manual time the rates would divide by the main thread's CPU
// time, which is wrong for TBB and for GPU waits.
// Counters (rates use the benchmark's real time, or its manual time where it has one). The console
// prints them with decimal prefixes (k = 1e3, M = 1e6, G = 1e9, T = 1e12) and "/s" after a rate, e.g.
// "bytes_per_second=75.2G/s"; JSON has plain numbers in bytes or FLOP per second:
//   bytes_per_second        bytes of input read per second (Google Benchmark's own counter name, decimal)
//   sweep_bytes_per_second  the read-sweep rate for the same number of bytes (SweepReference, measured in
//                           this process): bytes_per_second / sweep_bytes_per_second = 1 means as fast
//                           as a plain read of the input (tools/bench_charts shows it as a percentage)
//   flop_per_second         2*m*n*k per second (matrix products)
//
// Timing: every engine call timed is synchronous (calls that return a value wait for the CUDA stream;
// matmul on Buffers only enqueues, so its benchmark calls synchronize() after it), so engine benchmarks
// use real (wall-clock) time: per iteration that is what a steady_clock
// read around each call, passed to SetIterationTime, would give, launch and result copy included. Each
// benchmark makes one untimed call first (warm-up, and a check of its result against the host).
#pragma once

#include <benchmark/benchmark.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "common/backend.hpp"
#include "tandem/tandem.hpp"
#include "verify/kernels.hpp"
#include "verify/reference.hpp"
#include "verify/rng.hpp"
#include "verify/values.hpp"
#include "verify/verdict.hpp"

namespace tandem_bench {

using tandem::Buffer;
using tandem::Engine;

// ---- Names -----------------------------------------------------------------------------------------

// The element type's name from the dtype table (include/tandem/dtype.hpp): "float", "double", "int32".
using tandem_verify::type_name;

inline std::string size_label(std::size_t n) { return "n:" + std::to_string(n); }

// C (m x n) = A (m x k) * B (k x n).
struct Shape {
  std::size_t m, k, n;
};
// "512" for a cube, otherwise "m x k x n" as "8192x64x8192".
inline std::string shape_label(const Shape& s) {
  if (s.m == s.k && s.k == s.n) return std::to_string(s.m);
  return std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n);
}

using tandem::Op;
inline const char* op_name(Op op) { return tandem::to_string(op); }
// The ops every reduction benchmark runs: those of the op table the backends run themselves (mean is
// computed as sum divided by n).
inline std::vector<Op> bench_ops() {
  std::vector<Op> ops;
  for (Op op : tandem::all_ops)
    if (tandem::is_backend_op(op)) ops.push_back(op);
  return ops;
}

// ---- Random inputs -----------------------------------------------------------------------------------

// The counter-based generator of the test-support library (verify/rng.hpp): element i depends on
// (seed, i) only, so inputs are filled in parallel and are the same on every run.
using tandem_verify::splitmix64;

// The test-support library's Values::nonzero (never zero: zeros hide unwritten outputs and can run
// faster; every sum of up to 2^30 of them is exact in any order, so a missed or repeated element changes
// it), element i of `seed`'s counter-based stream.
template <class T>
T random_value(std::uint64_t seed, std::size_t i) {
  return tandem_verify::value_from_bits<T>(splitmix64(seed * 0x100000001B3ull + i), tandem_verify::Values::nonzero);
}

template <class T>
tandem_verify::Vector<T> random_vector(std::size_t n, std::uint64_t seed) {
  tandem_verify::Vector<T> v(n);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 16), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) v[i] = random_value<T>(seed, i);
  });
  return v;
}

// What every reduction of an input must return: the test-support reference (verify/reference.hpp)
// of the host copy's elements as their compute type, built in parallel.
template <class T>
using Reference = tandem_verify::ReduceReference<tandem::compute_t<T>>;

template <class T>
Reference<T> reference_of(const T* x, std::size_t n) {
  using C = tandem::compute_t<T>;
  return tbb::parallel_deterministic_reduce(
      tbb::blocked_range<std::size_t>(0, n, 1 << 16), Reference<T>{},
      [&](const tbb::blocked_range<std::size_t>& r, Reference<T> acc) {  // ranges come in increasing order
        for (std::size_t i = r.begin(); i != r.end(); ++i) acc.add(C(x[i]));
        return acc;
      },
      [](Reference<T> a, const Reference<T>& b) {  // a covers elements before b's
        a.merge(b);
        return a;
      });
}

// Throws tandem::Error unless a result of op O is right by the test-support verdict (sums within their
// bound, everything else exactly).
template <Op O, class T>
void check_result(const tandem::op_result_t<O, T>& got, const Reference<T>& ref) {
  const tandem_verify::Judgement j = tandem_verify::judge_op<O, T>(got, ref);
  if (!j.ok)
    throw tandem::Error(std::string("wrong ") + op_name(O) + ": got " + tandem_verify::show(got) + ", expected " +
                        j.expected);
}

// ---- Inputs, kept one at a time ----------------------------------------------------------------------

template <class T>
struct VectorInput {
  Buffer<T> buffer;
  Reference<T> ref;
};

template <class T>
struct MatmulInput {
  tandem_verify::Vector<T> a_host, b_host;  // for the sampled check of C
  Buffer<T> a, b, c;
};

// Generated and uploaded on first use (inside the benchmark, so filtered-out sizes cost nothing).
// Each slot keeps the last value asked for: benchmarks are registered grouped by input, so each input
// is made once, and making the next one frees the previous one first (a 4 GiB GPU input is not kept).
class Inputs {
 public:
  enum Slot { vector_slot, matrices_slot, sweep_slot, other_slot, slot_count };

  explicit Inputs(Engine eng) : eng_(std::move(eng)) {}

  // The value make() returns for key, kept until another key is asked for in the same slot.
  template <class V, class Make>
  const V& get(Slot slot, const std::string& key, Make make) {
    Held& h = held_[slot];
    if (h.key != key) {
      h.value.reset();
      h.key.clear();
      h.value = std::make_shared<V>(make());
      h.key = key;
    }
    return *static_cast<const V*>(h.value.get());
  }

  template <class T>
  const VectorInput<T>& vector(std::size_t n) {
    return get<VectorInput<T>>(vector_slot, std::string(type_name<T>()) + size_label(n), [&] {
      const tandem_verify::Vector<T> host = random_vector<T>(n, 1);
      return VectorInput<T>{eng_.upload<T>(host), reference_of(host.data(), n)};
    });
  }

  // A float buffer of `bytes` bytes for the read sweep.
  const Buffer<float>& sweep(std::size_t bytes) {
    return get<Buffer<float>>(sweep_slot, std::to_string(bytes),
                              [&] { return eng_.upload<float>(random_vector<float>(bytes / sizeof(float), 2)); });
  }

  template <class T>
  const MatmulInput<T>& matrices(const Shape& s) {
    return get<MatmulInput<T>>(matrices_slot, std::string(type_name<T>()) + shape_label(s), [&] {
      MatmulInput<T> in{random_vector<T>(s.m * s.k, 3), random_vector<T>(s.k * s.n, 4), {}, {}, {}};
      in.a = eng_.upload<T>(in.a_host);
      in.b = eng_.upload<T>(in.b_host);
      in.c = eng_.buffer<T>(s.m * s.n);
      return in;
    });
  }

 private:
  struct Held {
    std::string key;
    std::shared_ptr<void> value;
  };
  Engine eng_;
  Held held_[slot_count];
};

// ---- The read-sweep reference ------------------------------------------------------------------------

// The read-sweep rate of sweep_bytes_per_second, in bytes per second: measured once per byte count in
// this process (median of repeated sweeps after a warm-up), so that a filtered run without the
// baseline/read_sweep benchmarks still has it.
class SweepReference {
 public:
  // time_one(x): seconds for one read sweep over the float buffer x.
  using TimeOne = std::function<double(const Buffer<float>&)>;
  SweepReference(Inputs& inputs, TimeOne time_one) : inputs_(inputs), time_one_(std::move(time_one)) {}

  double bytes_per_second(std::size_t bytes) {
    auto it = rates_.find(bytes);
    if (it != rates_.end()) return it->second;
    const Buffer<float>& x = inputs_.sweep(bytes);
    for (int i = 0; i < 3; ++i) time_one_(x);
    std::vector<double> times;
    double total = 0;
    while (times.size() < 10 || (total < 0.1 && times.size() < 2000)) {
      times.push_back(time_one_(x));
      total += times.back();
    }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    return rates_[bytes] = double(bytes) / times[times.size() / 2];
  }

 private:
  Inputs& inputs_;
  TimeOne time_one_;
  std::map<std::size_t, double> rates_;
};

// ---- Counters ------------------------------------------------------------------------------------------

// bytes_per_second for `bytes` read per iteration, with a decimal prefix on the console ("75.2G/s" is
// 75.2e9 bytes per second; SetBytesProcessed would print 1024-based values with the same "G"). Call after
// the timed loop.
inline void set_bytes_counter(benchmark::State& state, double bytes) {
  using benchmark::Counter;
  state.counters["bytes_per_second"] = Counter(bytes, Counter::kIsIterationInvariantRate, Counter::kIs1000);
}

// bytes_per_second and sweep_bytes_per_second (the read-sweep reference for the same bytes, not a rate of
// this benchmark: the console prints it without "/s", as "70.1G").
inline void set_bandwidth_counters(benchmark::State& state, double bytes, double sweep_bytes_per_second) {
  using benchmark::Counter;
  set_bytes_counter(state, bytes);
  state.counters["sweep_bytes_per_second"] = Counter(sweep_bytes_per_second, Counter::kDefaults, Counter::kIs1000);
}

// flop_per_second for `flop` floating-point operations per iteration ("51.3T/s" on the console).
inline void set_flop_counter(benchmark::State& state, double flop) {
  using benchmark::Counter;
  state.counters["flop_per_second"] = Counter(flop, Counter::kIsIterationInvariantRate, Counter::kIs1000);
}

// 2*m*n*k per iteration.
inline void set_flop_counter(benchmark::State& state, const Shape& s) {
  set_flop_counter(state, 2.0 * double(s.m) * double(s.n) * double(s.k));
}

// ---- Registration --------------------------------------------------------------------------------------

// Everything a binary's benchmarks share: one engine, its inputs and the sweep reference.
struct Suite {
  Suite(Engine e, SweepReference::TimeOne time_one)
      : eng(e), backend(tandem::to_string(e.backend())), inputs(e), sweep(inputs, std::move(time_one)) {}

  Engine eng;
  std::string backend;  // "cpu" or "cuda": the second part of every engine benchmark name
  Inputs inputs;
  SweepReference sweep;
  std::set<std::string> checked_matmuls;  // benchmarks whose output was checked once already
};

// The benchmark body with every exception turned into SkipWithError, so that one failing kernel is
// reported with its message and the other benchmarks still run.
template <class Body>
auto guarded(Body body) {
  return [body](benchmark::State& state) {
    try {
      body(state);
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
    }
  };
}

inline void add_kernel_context(const Engine& eng);

// Device name, details and peak bandwidth in the JSON context (and the console header).
inline void add_device_context(const Engine& eng) {
  const tandem::DeviceInfo d = eng.device();
  benchmark::AddCustomContext("tandem_backend", tandem::to_string(eng.backend()));
  benchmark::AddCustomContext("tandem_device", d.name);
  benchmark::AddCustomContext("tandem_device_details", d.details);
  benchmark::AddCustomContext("tandem_compute_units", std::to_string(d.compute_units));
  if (d.peak_bandwidth_gbs > 0)
    benchmark::AddCustomContext("tandem_peak_bandwidth_gbs", std::to_string(d.peak_bandwidth_gbs));
  add_kernel_context(eng);
}

// reduce/<backend>/<kernel>/<op>/<type>/n:<n> for every kernel of the engine ("auto" included) and
// every operator, on a Buffer of n random values.
template <class T>
void register_reductions(Suite& suite, std::size_t n) {
  const std::vector<tandem::KernelInfo> infos = suite.eng.reduce_kernel_info();
  for (const std::string& kernel : suite.eng.reduce_kernels())
    for (Op op : bench_ops()) {
      if (!tandem_verify::kernel_accepts(infos, kernel, tandem::dtype_of<T>, &op, false)) continue;
      const std::string name =
          "reduce/" + suite.backend + "/" + kernel + "/" + op_name(op) + "/" + type_name<T>() + "/" + size_label(n);
      tandem::visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
        benchmark::RegisterBenchmark(name.c_str(), guarded([&suite, kernel, n](benchmark::State& state) {
                                       const VectorInput<T>& in = suite.inputs.vector<T>(n);
                                       const tandem::ReduceOptions opts{kernel};
                                       check_result<O, T>(suite.eng.reduce<O>(in.buffer, opts), in.ref);
                                       for (auto _ : state)
                                         benchmark::DoNotOptimize(suite.eng.reduce<O>(in.buffer, opts));
                                       set_bandwidth_counters(state, double(n * sizeof(T)),
                                                              suite.sweep.bytes_per_second(n * sizeof(T)));
                                     }))
            ->UseRealTime();
      });
    }
}

// types/<backend>/<op>/<type>/bytes:<B>: sum, min, max and argmax of one element type on "auto", over B bytes
// (n = B / sizeof(T)), so that every type's bytes_per_second compares directly with float's and with the
// read sweep of the same bytes.
template <class T>
void register_type_read(Suite& suite, std::size_t bytes) {
  const std::size_t n = bytes / sizeof(T);
  for (Op op : {Op::sum, Op::min, Op::max, Op::argmax}) {
    const std::string name =
        "types/" + suite.backend + "/" + op_name(op) + "/" + type_name<T>() + "/bytes:" + std::to_string(n * sizeof(T));
    tandem::visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      benchmark::RegisterBenchmark(name.c_str(), guarded([&suite, n](benchmark::State& state) {
                                     const VectorInput<T>& in = suite.inputs.vector<T>(n);
                                     check_result<O, T>(suite.eng.reduce<O>(in.buffer), in.ref);
                                     for (auto _ : state) benchmark::DoNotOptimize(suite.eng.reduce<O>(in.buffer));
                                     set_bandwidth_counters(state, double(n * sizeof(T)),
                                                            suite.sweep.bytes_per_second(n * sizeof(T)));
                                   }))
          ->UseRealTime();
    });
  }
}

// register_type_read for every element type of the dtype table (tandem::element_types).
template <class... Ts>
void register_type_reads(Suite& suite, std::size_t bytes, tandem::type_list<Ts...>) {
  (register_type_read<Ts>(suite, bytes), ...);
}

// The engine's matmul kernels that take T, from their KernelInfo (the CUDA tensor-core kernels take
// float only).
template <class T>
std::vector<std::string> matmul_kernels_for(const Engine& eng) {
  std::vector<std::string> ok;
  for (const tandem::KernelInfo& k : eng.matmul_kernel_info())
    if (k.accepts(tandem::dtype_of<T>)) ok.push_back(k.name);
  return ok;
}

// Every kernel's KernelInfo in the JSON context as "tandem_kernels" (a JSON list in a string, in the form
// of verify/kernels.hpp), so that tools/bench_charts reads precision and baselines from the run
// itself, not from kernel names.
inline void add_kernel_context(const Engine& eng) {
  std::string json = "[";
  auto add = [&](const char* kind, const std::vector<tandem::KernelInfo>& infos) {
    for (const tandem::KernelInfo& k : infos)
      json.append(json.size() > 1 ? "," : "").append(tandem_verify::kernel_json(k, kind));
  };
  add("reduce", eng.reduce_kernel_info());
  add("matmul", eng.matmul_kernel_info());
  benchmark::AddCustomContext("tandem_kernels", json + "]");
}

// Fills C with NaN, runs `run` once and compares 16 sampled elements of C with a host dot product in
// double. The bound (1% of sum |a||b|) admits bf16 inputs and catches unwritten, NaN or garbage output.
template <class T, class Run>
void check_matmul(const MatmulInput<T>& in, const Shape& s, Run run) {
  Buffer<T> c = in.c;  // shares the memory; upload() is not const
  c.upload(tandem_verify::Vector<T>(s.m * s.n, std::numeric_limits<T>::quiet_NaN()));
  run();
  for (std::uint64_t sample = 0; sample < 16; ++sample) {
    const std::size_t i = splitmix64(2 * sample) % s.m, j = splitmix64(2 * sample + 1) % s.n;
    double ref = 0, bound = 0;
    for (std::size_t p = 0; p < s.k; ++p) {
      ref += double(in.a_host[i * s.k + p]) * double(in.b_host[p * s.n + j]);
      bound += std::abs(double(in.a_host[i * s.k + p]) * double(in.b_host[p * s.n + j]));
    }
    T got{};
    in.c.download(std::span<T>(&got, 1), i * s.n + j);
    if (!(std::abs(double(got) - ref) <= 1e-2 * bound))
      throw tandem::Error("wrong result: C(" + std::to_string(i) + ", " + std::to_string(j) +
                          ") = " + std::to_string(got) + ", expected " + std::to_string(ref));
  }
}

// matmul/<backend>/<kernel>/<type>/<shape> for each kernel given, on random row-major Buffers.
template <class T>
void register_matmuls(Suite& suite, const std::vector<std::string>& kernels, const Shape& s) {
  for (const std::string& kernel : kernels) {
    const std::string name = "matmul/" + suite.backend + "/" + kernel + "/" + type_name<T>() + "/" + shape_label(s);
    benchmark::RegisterBenchmark(name.c_str(), guarded([&suite, kernel, s, name](benchmark::State& state) {
                                   const MatmulInput<T>& in = suite.inputs.matrices<T>(s);
                                   const tandem::MatmulOptions opts{kernel};
                                   // Matmul on Buffers only enqueues: wait, so that a call is what an
                                   // application that needs C sees.
                                   auto run = [&] {
                                     suite.eng.matmul(in.a.matrix(s.m, s.k), in.b.matrix(s.k, s.n),
                                                      in.c.matrix(s.m, s.n), opts);
                                     suite.eng.synchronize();
                                   };
                                   if (suite.checked_matmuls.insert(name).second) check_matmul(in, s, run);
                                   run();
                                   for (auto _ : state) run();
                                   set_flop_counter(state, s);
                                 }))
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

// The engine's front end on a tiny input (16 floats in a Buffer): engine.sum() against the same
// reduction through BackendImpl::reduce() directly, which skips validation and the kernel-name check.
inline void register_overhead(Suite& suite, const std::string& kernel) {
  constexpr std::size_t n = 16;
  const std::string tail = "/sum/float/" + size_label(n);
  benchmark::RegisterBenchmark(("overhead/" + suite.backend + "/engine" + tail).c_str(),
                               guarded([&suite, kernel](benchmark::State& state) {
                                 const Buffer<float>& x = suite.inputs.vector<float>(n).buffer;
                                 const tandem::ReduceOptions opts{kernel};
                                 for (auto _ : state) benchmark::DoNotOptimize(suite.eng.sum(x, opts));
                               }))
      ->UseRealTime()
      ->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark(
      ("overhead/" + suite.backend + "/raw_backend" + tail).c_str(), guarded([&suite, kernel](benchmark::State& state) {
        const Buffer<float>& x = suite.inputs.vector<float>(n).buffer;
        using namespace tandem::detail;
        KernelId id;  // the kernel's row, as the engine finds it by name ("auto" first, then the stages)
        const std::vector<tandem::KernelInfo> table = suite.eng.reduce_kernel_info();
        for (std::size_t i = 1; i < table.size(); ++i)
          if (table[i].name == kernel) id.stage = std::uint32_t(i - 1);
        const ReduceArgs args{.op = Op::sum,
                              .kernel = id,
                              .dtype = tandem::Dtype::f32,
                              .data = x.data(),
                              .n = std::int64_t(n),
                              .stride = 1,
                              .resident = true};
        float out = 0;
        for (auto _ : state) {
          suite.eng.impl().reduce(args, &out);
          benchmark::DoNotOptimize(out);
        }
      }))
      ->UseRealTime()
      ->Unit(benchmark::kNanosecond);
}

}  // namespace tandem_bench
