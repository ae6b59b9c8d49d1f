// tandem reduce: one reduction with each chosen kernel, verified against the test-support library's
// reference (verify/reference.hpp) within its bounds, then timed.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <type_traits>

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

using tandem::Op;
using tandem_verify::Judgement;
using tandem_verify::ReduceReference;
using tandem_verify::show;

constexpr std::string_view kReduceHelp = R"(usage: tandem reduce [options]

Generates seeded random data on the host, uploads it once into a Buffer of the backend, and runs the
reduction with each chosen kernel. Every result is verified against a reference computed here, then
timed: the median wall time of synchronous calls (kernel, launch and reading back the result; not the
upload). GB/s counts the n * sizeof(T) bytes of the elements reduced.

options:
  --backend {backends}|auto            default: TANDEM_BACKEND, or auto when unset
  --kernel NAME|all                  a reduce kernel of 'tandem info', 'deterministic' (auto with
                                     ReduceOptions::deterministic), or all of these (default auto)
  --op {ops}|all    default sum
  --dtype {dtypes}    default float
  --n N                              elements reduced, written 134217728, 1e6 or 2^27 (default 2^24)
  --stride S                         reduce every S-th element (default 1; 0 reads the first element n times)
  --repeat R                         timed calls per row (default: at least 3, until 0.25 s)
  --seed X                           data seed (default 1)

Data: floats uniform in [-1, 1); int32 uniform in [-2^20, 2^20), int64 in [-2^40, 2^40); bfloat16 and
float16: the float values rounded to the type (their reference takes them as the floats they hold, the
type the library computes them in).
Checks: integer sums exactly (a uint64 wrapping loop); float sums within 8 u sum|x| of a long double
loop (u = 2^-24 for float and the 16-bit types, 2^-53 for double), sums of squares within (n + 8) u
sum x^2; min, max, argmin and argmax bit for bit; mean as sum / n. Ops whose empty input is undefined must throw tandem::Error there (status n/a). Exit status 1
if any check fails.
)";

struct ReduceConfig {
  std::string backend, kernel;
  tandem::Dtype dtype;
  std::vector<Op> ops;
  std::size_t n, stride, repeat;
  std::uint64_t seed;
};

// One row of the reduce table for one kernel and op. Returns false when a check failed.
template <class Call, class Judge>
bool reduce_row(const Table& table, std::vector<std::string>& notes, const std::string& kernel, Op op, bool empty_input,
                double bytes, std::size_t repeat, Call call, Judge judge) {
  const char* op_name = tandem::to_string(op);
  const std::string where = kernel + " " + op_name + ": ";
  try {
    if (empty_input && tandem::info(op).empty == tandem::EmptyRule::error) {  // documented to throw
      try {
        call();
      } catch (const tandem::Error& e) {
        const std::string note = std::string(op_name) + ": " + message(e);  // once per op, not per kernel
        if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
        table.row({kernel, op_name, "-", "-", "n/a", "-", "-"});
        return true;
      }
      notes.push_back(where + "returned a value for an empty input; expected tandem::Error");
      table.row({kernel, op_name, "-", "-", "FAIL", "-", "-"});
      return false;
    }
    const auto first = call();  // warm-up
    Judgement worst = judge(first);
    const Timing t = time_calls(
        call,
        [&](const auto& r) {
          Judgement j = judge(r);
          if (!j.ok && worst.ok) worst = j;
          if (!(j.error <= worst.error)) worst.error = j.error;
        },
        repeat);
    if (!worst.ok) notes.push_back(where + "expected " + worst.expected);
    table.row({kernel, op_name, show(first), format_error(worst.error), worst.ok ? "ok" : "FAIL",
               format_seconds(t.median), bytes > 0 ? strf("%.1f", bytes / t.median / 1e9) : "-"});
    return worst.ok;
  } catch (const tandem::Error& e) {
    notes.push_back(where + message(e));
    table.row({kernel, op_name, "-", "-", "error", "-", "-"});
    return false;
  }
}

template <class T>
int run_reduce(const tandem::Engine& eng, const ReduceConfig& cfg) {
  using R = tandem::compute_t<T>;  // the reference's type: T, or float for the 16-bit types
  // A name the engine does not have is a usage error naming the backend that has it; an empty sum runs no
  // kernel but has the engine check the rest (its message lists the valid ones).
  check_kernel_name(eng, "reduce", cfg.kernel);
  if (cfg.kernel != "all" && cfg.kernel != kDeterministic) eng.sum<T>(std::span<const T>(), {cfg.kernel});
  std::vector<std::string> kernels = cfg.kernel == "all" ? eng.reduce_kernels() : std::vector<std::string>{cfg.kernel};
  const std::vector<tandem::KernelInfo> infos = eng.reduce_kernel_info();
  if (cfg.kernel == "all") kernels.push_back(kDeterministic);

  std::printf("reduce: backend %s (%s), dtype %s, n %s, stride %zu, seed %llu\n", tandem::to_string(eng.backend()),
              eng.device().name.c_str(), tandem_verify::type_name<T>(), format_count(cfg.n).c_str(), cfg.stride,
              (unsigned long long)cfg.seed);
  std::fflush(stdout);

  // Generated and uploaded in chunks, the reference fed along the way: host memory stays small.
  const std::size_t extent = cfg.n == 0 ? 0 : (cfg.n - 1) * cfg.stride + 1;
  tandem::Buffer<T> buf = eng.buffer<T>(extent);
  ReduceReference<R> ref;
  if (cfg.stride == 0) ref.one_sign();  // one element read n times: its terms have one sign
  {
    tandem_verify::SplitMix64 g{cfg.seed};
    tandem_verify::Vector<T> chunk(std::min<std::size_t>(extent, 1 << 20));
    for (std::size_t begin = 0; begin < extent; begin += chunk.size()) {
      const std::span<T> part(chunk.data(), std::min(chunk.size(), extent - begin));
      tandem_verify::fill<T>(part, g, tandem_verify::Values::uniform);
      if (cfg.stride == 0)
        for (std::size_t i = 0; i < cfg.n; ++i) ref.add(R(part[0]));  // (extent is 1: one part)
      else
        for (std::size_t i = (cfg.stride - begin % cfg.stride) % cfg.stride; i < part.size(); i += cfg.stride)
          ref.add(R(part[i]));
      buf.upload(part, begin);
    }
  }
  const tandem::BufferView<T> view = buf.view(0, cfg.n, cfg.stride);
  const double bytes = double(cfg.n) * sizeof(T);
  const bool float_only =
      std::is_same_v<R, float> && std::find(cfg.ops.begin(), cfg.ops.end(), Op::mean) == cfg.ops.end();

  std::vector<std::string> op_names;  // the op column fits the longest op shown (argmin, argmax: 6)
  for (Op op : cfg.ops) op_names.push_back(tandem::to_string(op));
  const std::size_t op_width = longest(op_names, 2);
  const Table table({{"kernel", longest(kernels, 6), true},
                     {"op", op_width, true},
                     {"result", std::size_t(float_only ? 15 : 23)},
                     {"abs error", 9},
                     {"status", 6, true},
                     {"time", 10},
                     {"GB/s", 8}});
  table.header();
  std::vector<std::string> notes;
  bool ok = true;
  for (const auto& kernel : kernels) {
    const tandem::ReduceOptions opts =
        kernel == kDeterministic ? tandem::ReduceOptions{"auto", true} : tandem::ReduceOptions{kernel};
    for (Op op : cfg.ops) {
      // With --kernel all, the stages that do not run op (argmin / argmax on CUDA's textbook stages)
      // are left out; a named kernel that does not is reported as the engine's error.
      if (cfg.kernel == "all" && kernel != kDeterministic &&
          !tandem_verify::kernel_accepts(infos, kernel, tandem::dtype_of<T>, &op, false))
        continue;
      auto row = [&](auto call, auto judge) {
        ok &= reduce_row(table, notes, kernel, op, cfg.n == 0, bytes, cfg.repeat, call, judge);
      };
      tandem::visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
        row([&] { return eng.reduce<O>(view, opts); },
            [&](const tandem::op_result_t<O, T>& r) { return tandem_verify::judge_op<O, T>(r, ref); });
      });
    }
  }
  for (const auto& note : notes) std::printf("note: %s\n", note.c_str());
  std::printf("%s; GB/s = n * sizeof(%s) / time\n", timing_note(cfg.repeat).c_str(), tandem_verify::type_name<T>());
  if constexpr (std::is_integral_v<T>) {
    std::printf("abs error: the largest |result - reference| over all calls; integer results must be exact\n");
  } else {
    // Each additive op's bound (verify/bounds.hpp): 8 u sum|term|, or (n + 8) u sum for terms never below zero.
    std::string bounds;
    char text[96];
    for (Op op : cfg.ops)
      if (tandem_verify::is_additive(op) && ref.count > 0) {
        const auto& a = ref.of(op);
        const long double b = tandem::info(op).result == tandem::ResultKind::mean ? a.mean_bound() : a.bound();
        std::snprintf(text, sizeof text, "%s%s %.3Lg", bounds.empty() ? "" : ", ", tandem::to_string(op), b);
        bounds += text;
      }
    std::printf("abs error: the largest |result - reference| over all calls%s%s\n",
                bounds.empty() ? "" : "; results pass within their bounds: ", bounds.c_str());
  }
  return ok ? 0 : 1;
}

int cmd_reduce(const Options& o) {
  ReduceConfig cfg;
  cfg.backend = backend_option(o);
  cfg.kernel = o.get("--kernel") ? *o.get("--kernel") : "auto";
  std::vector<std::string> op_names;
  for (Op op : tandem::all_ops) op_names.push_back(tandem::to_string(op));
  op_names.push_back("all");
  const std::string op = choice_option(o, "--op", op_names, "sum");
  for (Op each : tandem::all_ops)
    if (op == "all" || tandem::parse_op(op) == each) cfg.ops.push_back(each);
  cfg.dtype = dtype_option(o, tandem::Dtype::f32, /*matmul=*/false);
  cfg.n = count_option(o, "--n", 1ull << 24);
  cfg.stride = count_option(o, "--stride", 1);
  cfg.repeat = count_option(o, "--repeat", 0, 1);
  cfg.seed = count_option(o, "--seed", 1);
  if (cfg.n > 1 && cfg.stride > 0 && cfg.n - 1 > (std::numeric_limits<std::size_t>::max() - 1) / cfg.stride)
    throw UsageError("--n and --stride reach past 2^64 elements");

  const tandem::Engine eng = make_engine(cfg.backend);
  return tandem_verify::with_dtype(cfg.dtype, [&]<class T>() { return run_reduce<T>(eng, cfg); });
}

}  // namespace

const Command reduce_command = {
    "reduce",    "every reduction ({ops}) with each kernel: verified, then timed",
    kReduceHelp, {"--backend", "--kernel", "--op", "--dtype", "--n", "--stride", "--repeat", "--seed"},
    {},          cmd_reduce};

}  // namespace tandem_cli
