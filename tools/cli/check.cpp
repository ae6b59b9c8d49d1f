// tandem check: the conformance matrix (tests/conformance/) on every usable backend, or the one the user
// names, in one process: every op x element type x layout x form x kernel x deterministic mode of the
// library's tables against the test-support references, deterministic bits compared across backends.
#include <cstdio>
#include <cstdlib>

#include "tools/cli/commands.hpp"
#include "tools/cli/table.hpp"
#include "verify/conformance.hpp"

namespace tandem_cli {
namespace {

constexpr std::string_view kCheckHelp = R"(usage: tandem check [options]

The cross-backend check: the conformance matrix, generated from the library's tables. For every op
({ops}) and element type ({dtypes}): data (exact small integers, random values, NaN and infinities,
signed zeros; integers over their whole range), sizes that miss every block (0, 1, 2, 31, 33, 257,
4097, 65537, 100003), layouts (contiguous, strided, misaligned, stride 0: one element repeated,
empty; matrices with ld > cols whose padding holds NaN or the type's largest value, ld 0: the first
row repeated), every form (span, std::vector,
StridedView, Buffer, BufferView, *_into, per row and per column from host memory and Buffers), every
kernel of the backend's KernelInfo table, deterministic mode off and on. Matmul: every element type
it takes, shapes with tails and K = 0, every transpose pair, alpha and beta (beta = 0 over a NaN C),
packed and padded operands, batches with gaps and one B for every entry, misaligned starts, host and
Buffer forms, every kernel, deterministic off and on. topk and argsort: every element type, ties, NaN,
infinities and signed zeros, k from 1 to the length, largest and smallest, vectors (strided, stride 0)
and per row / per column of padded matrices into padded outputs; k out of range refused.

A case the kernel's KernelInfo does not take and an empty input of an op that has no value for one must
throw tandem::Error; every other case must match the independent reference within
its documented bound (sums of exact data, min, max, argmin, argmax and integer results bit for bit),
leave padding and the outputs' other elements untouched, and in deterministic mode give the bits of
the canonical order, the same for every form, kernel and backend.

options:
  --backend {backends}|auto|all   the backends to check: all (the default, unless TANDEM_BACKEND names
                                one) checks every usable backend and lists the others as not run; a
                                named backend (or TANDEM_BACKEND={backends}) that cannot run here is an
                                error (exit status 1)
  --quick                       fewer sizes, shapes and data kinds

Ends with 'check: N passed, M failed'; exit status 1 if any failed.
)";

int cmd_check(const Options& o) {
  std::string backend = named_backend(o, /*allow_all=*/true);  // TANDEM_BACKEND: that one alone, like
  if (backend.empty()) backend = "all";                        // every other command
  tandem_verify::conformance::Options opts;
  opts.quick = o.has("--quick");
  std::vector<std::string> not_run;
  if (backend == "all") {
    for (const auto& s : tandem::backend_status()) {
      if (s.usable)
        opts.backends.push_back(s.backend);
      else
        not_run.push_back(std::string(tandem::to_string(s.backend)) + " not run: " + describe(s));
    }
  } else {
    opts.backends.push_back(make_engine(backend).backend());  // throws, naming the reason, if it cannot run
  }
  for (tandem::Backend b : opts.backends) {
    const tandem::Engine eng(b);
    std::printf("check: %s (%s): reduce kernels %s; matmul kernels %s\n", tandem::to_string(b),
                eng.device().name.c_str(), join(eng.reduce_kernels()).c_str(), join(eng.matmul_kernels()).c_str());
  }
  for (const auto& line : not_run) std::printf("check: %s\n", line.c_str());
  std::fflush(stdout);
  std::size_t shown = 0;
  opts.on_failure = [&](const std::string& what) {
    if (shown++ < 20) std::printf("FAIL %s\n", what.c_str());
    std::fflush(stdout);
  };
  const auto r = tandem_verify::conformance::run(opts);
  if (shown > 20) std::printf("... and %zu more failures\n", shown - 20);
  std::printf("check: %zu cases, %zu of them expected errors", r.cases, r.refused);
  if (r.unavailable) std::printf(", %zu not run (a kernel's requirement this machine lacks)", r.unavailable);
  std::printf("; deterministic bits compared %zu times, %zu across backends\n", r.compared, r.compared_across_backends);
  std::printf("check: %zu passed, %zu failed\n", r.cases - r.failed, r.failed);
  return r.failed == 0 ? 0 : 1;
}

}  // namespace

const Command check_command = {"check",     "the conformance matrix on every usable backend, against references",
                               kCheckHelp,  {"--backend"},
                               {"--quick"}, cmd_check};

}  // namespace tandem_cli
