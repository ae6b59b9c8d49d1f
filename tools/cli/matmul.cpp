// tandem matmul: one matrix product with each chosen kernel, verified against the test-support
// library's reference (verify/reference.hpp) within the bound of the kernel's precision
// (KernelInfo::precision), then timed.
#include <algorithm>
#include <cstdio>
#include <limits>

#include "tools/cli/commands.hpp"
#include "tools/cli/table.hpp"
#include "tools/cli/timing.hpp"
#include "verify/kernels.hpp"
#include "verify/reference.hpp"
#include "verify/rng.hpp"
#include "verify/values.hpp"
#include "verify/verdict.hpp"

namespace tandem_cli {
namespace {

constexpr std::string_view kMatmulHelp = R"(usage: tandem matmul [options]

C = A * B with A (M x K) and B (K x N) uniform in [-1, 1), uploaded once into Buffers of the backend.
With --dtype bfloat16 or float16, A and B hold those values rounded to the type and C is float.
Each chosen kernel runs once and is verified against a reference computed here, then timed: the median
wall time of synchronous calls. GFLOP/s (TFLOP/s when large) = 2 M N K / time.

options:
  --backend {backends}|auto   default: TANDEM_BACKEND, or auto when unset
  --kernel NAME|all         a matmul kernel of 'tandem info', 'deterministic' (auto with
                            MatmulOptions::deterministic), or all of these (default auto)
  --dtype float|double|bfloat16|float16    default float
  --size S                  M = K = N = S (default 1024)
  --m M, --k K, --n N       one dimension each (default: the --size value)
  --repeat R                timed calls per kernel (default: at least 3, until 0.25 s)
  --seed X                  data seed (default 1)

Reference: for M N K <= 2^30 (and M N <= 2^24) every element of C, accumulated in double for float and
long double for double (16-bit inputs: taken as the floats they hold, in double); above that 512 random
elements (and the corners) in long double, with every element of C also required to be finite (C starts
as NaN). Bound per element:
  |C - ref| <= (c_in + 2 K u) sum_k |a_ik b_kj|
with u = 2^-24 for float C, 2^-53 for double, and c_in the input rounding of the kernel's precision
(KernelInfo, 'tandem kernels'): 2^-9 for tf32, 2^-6 for bf16, else 0. 'max err/bound' is the largest
|C - ref| / bound: at most 1 passes. Kernels whose KernelInfo does not list the dtype (reduced-precision
kernels with double) throw tandem::Error: status unsupported, not a failure. Exit status 1 if any check
fails.
)";

struct MatmulConfig {
  std::string backend, kernel;
  tandem::Dtype dtype;
  std::size_t m, k, n, repeat;
  std::uint64_t seed;
};

std::string format_rate(double flops_per_s) {
  return flops_per_s >= 1e12 ? strf("%.2f TFLOP/s", flops_per_s / 1e12) : strf("%.1f GFLOP/s", flops_per_s / 1e9);
}

// A and B as the reference reads them: the generated values themselves, or for 16-bit types the floats
// they hold (a widened copy in `wide`).
template <class T, class R = tandem::compute_t<T>>
tandem::MatrixView<const R> reference_view(const tandem_verify::Vector<T>& v, std::vector<R>& wide, std::size_t rows,
                                           std::size_t cols) {
  if constexpr (tandem::is_storage_type_v<T>) {
    wide.assign(v.begin(), v.end());
    return {wide.data(), rows, cols, cols};
  } else {
    return {v.data(), rows, cols, cols};
  }
}

template <class T>
int run_matmul(const tandem::Engine& eng, const MatmulConfig& cfg) {
  using C = tandem::compute_t<T>;  // C's type and the reference's: T, or float for 16-bit A and B
  const std::size_t m = cfg.m, k = cfg.k, n = cfg.n;
  // A name the engine does not have is a usage error naming the backend that has it; an empty product runs
  // no kernel but has the engine check the rest (its message lists the valid ones).
  check_kernel_name(eng, "matmul", cfg.kernel);
  if (cfg.kernel != "all" && cfg.kernel != kDeterministic) {
    const tandem::MatrixView<const T> none{nullptr, 0, 0, 0};
    eng.matmul<T>(none, none, tandem::MatrixView<C>{nullptr, 0, 0, 0}, {cfg.kernel});
  }
  std::vector<std::string> kernels = cfg.kernel == "all" ? eng.matmul_kernels() : std::vector<std::string>{cfg.kernel};
  if (cfg.kernel == "all") kernels.push_back(kDeterministic);
  const std::vector<tandem::KernelInfo> infos = eng.matmul_kernel_info();
  const std::string shape = strf("%zux%zux%zu", m, k, n);

  tandem_verify::SplitMix64 g{cfg.seed};
  tandem_verify::Vector<T> a(m * k), b(k * n);
  tandem_verify::fill<T>(a, g);
  tandem_verify::fill<T>(b, g);
  const auto start = Clock::now();
  std::vector<C> a_wide, b_wide;
  const tandem_verify::MatmulReference<C> ref = tandem_verify::matmul_reference<C>(
      reference_view(a, a_wide, m, k), reference_view(b, b_wide, k, n), {.seed = cfg.seed});
  a_wide = {}, b_wide = {};
  const double ref_seconds = seconds_since(start);
  std::printf("matmul: backend %s (%s), dtype %s, M x K x N = %s; reference: %s (%s)\n",
              tandem::to_string(eng.backend()), eng.device().name.c_str(), tandem_verify::type_name<T>(), shape.c_str(),
              ref.sample.empty() ? "every element" : strf("%zu sampled elements", ref.checked()).c_str(),
              format_seconds(ref_seconds).c_str());
  std::fflush(stdout);

  const tandem::Buffer<T> da = eng.upload<T>(a), db = eng.upload<T>(b);
  tandem::Buffer<C> dc = eng.buffer<C>(m * n);
  std::vector<C> c(m * n);
  const double flops = 2.0 * double(m) * double(n) * double(k);

  const Table table({{"kernel", longest(kernels, 6), true},
                     {"shape", shape.size(), true},
                     {"max err/bound", 13},
                     {"status", 11, true},
                     {"time", 10},
                     {"rate", 14}});
  table.header();
  std::vector<std::string> notes;
  bool ok = true;
  for (const auto& kernel : kernels) {
    const bool deterministic = kernel == kDeterministic;
    const tandem::MatmulOptions opts =
        deterministic ? tandem::MatmulOptions{"auto", true} : tandem::MatmulOptions{kernel};
    // What the kernel promises: its dtypes and precision ("deterministic" runs under auto's).
    const tandem::KernelInfo* info = tandem_verify::find_kernel(infos, opts.kernel);
    if (!info) throw tandem::Error("matmul kernel '" + opts.kernel + "' has no KernelInfo");
    const bool takes_dtype = info->accepts(tandem::dtype_of<T>);
    auto run = [&] {
      eng.matmul(da.matrix(m, k), db.matrix(k, n), dc.matrix(m, n), opts);
      eng.synchronize();  // a product into a Buffer returns once enqueued: the time is the whole product's
      return 0;
    };
    try {
      std::fill(c.begin(), c.end(), std::numeric_limits<C>::quiet_NaN());  // poison: unwritten elements fail
      dc.upload(c);
      run();  // warm-up, verified
    } catch (const tandem::Error& e) {
      notes.push_back(kernel + ": " + message(e));
      table.row({kernel, shape, "-", takes_dtype ? "error" : "unsupported", "-", "-"});
      ok &= !takes_dtype;
      continue;
    }
    if (!takes_dtype) {
      notes.push_back(kernel + ": ran with " + tandem::to_string(tandem::dtype_of<T>) +
                      ", which its KernelInfo does not list; expected tandem::Error");
      ok = false;
    }
    dc.download(c);
    const tandem_verify::MatmulVerdict v = tandem_verify::verify_matmul<C>({c.data(), m, n, n}, ref, info->precision);
    if (!v.ok()) notes.push_back(kernel + ": " + v.problem());
    ok &= v.ok();
    const Timing t = time_calls(
        run, [](int) {}, cfg.repeat);
    table.row({kernel, shape, strf("%.3g", v.worst), v.ok() && takes_dtype ? "ok" : "FAIL", format_seconds(t.median),
               flops > 0 ? format_rate(flops / t.median) : "-"});
  }
  for (const auto& note : notes) std::printf("note: %s\n", note.c_str());
  std::printf("%s; rate = 2 M N K / time\n", timing_note(cfg.repeat).c_str());
  std::printf("max err/bound: the largest |C - reference| / ((c_in + 2 K u) sum_k |a_ik b_kj|); at most 1 passes\n");
  return ok ? 0 : 1;
}

int cmd_matmul(const Options& o) {
  MatmulConfig cfg;
  cfg.backend = backend_option(o);
  cfg.kernel = o.get("--kernel") ? *o.get("--kernel") : "auto";
  cfg.dtype = dtype_option(o, tandem::Dtype::f32, /*matmul=*/true);
  const std::uint64_t size = count_option(o, "--size", 1024);
  cfg.m = count_option(o, "--m", size);
  cfg.k = count_option(o, "--k", size);
  cfg.n = count_option(o, "--n", size);
  cfg.repeat = count_option(o, "--repeat", 0, 1);
  cfg.seed = count_option(o, "--seed", 1);
  const double limit = double(std::numeric_limits<std::ptrdiff_t>::max()) / 8;
  if (double(cfg.m) * double(cfg.k) > limit || double(cfg.k) * double(cfg.n) > limit ||
      double(cfg.m) * double(cfg.n) > limit)
    throw UsageError("the matrices of M x K x N = " + strf("%zux%zux%zu", cfg.m, cfg.k, cfg.n) +
                     " do not fit in memory");

  const tandem::Engine eng = make_engine(cfg.backend);
  return tandem_verify::with_dtype(cfg.dtype, [&]<class T>() {
    if constexpr (tandem::is_matmul_type_v<T>)
      return run_matmul<T>(eng, cfg);
    else
      return 2;  // not reached: dtype_option takes matmul types only
  });
}

}  // namespace

const Command matmul_command = {
    "matmul",    "C = A * B with each kernel: verified against a reference, then timed",
    kMatmulHelp, {"--backend", "--kernel", "--dtype", "--m", "--k", "--n", "--size", "--repeat", "--seed"},
    {},          cmd_matmul};

}  // namespace tandem_cli
